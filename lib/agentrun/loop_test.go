package agentrun

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
	"github.com/agentry/agentry/lib/grant"
	"github.com/agentry/agentry/lib/protocol"
)

// fakeClaude is a shell script that stands in for claude: it prints
// script's lines for its first start and again's for a start that
// resumes the session (--resume s-1), and records each argv.
func fakeClaude(t *testing.T, first, again string) (prog, log string) {
	dir := t.TempDir()
	prog, log = filepath.Join(dir, "claude"), filepath.Join(dir, "argv")
	script := "#!/bin/sh\necho \"$*\" >> " + log + "\ncat >/dev/null\ncase \"$*\" in *--resume*) " + again + " ;; *) " + first + " ;; esac\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return prog, log
}

const (
	initLine   = `echo '{"type":"system","subtype":"init","session_id":"s-1"}'`
	answerLine = `echo '{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s-1","total_cost_usd":0.5,"usage":{"input_tokens":10,"output_tokens":2}}'`
)

func claudeRequest(t *testing.T, prog string, o grant.Options) Request {
	o.Harness, o.Program = grant.Claude, prog
	if o.Level == 0 {
		o.Level = 2
	}
	g, err := grant.For(o)
	if err != nil {
		t.Fatal(err)
	}
	return Request{Grant: g, Options: o, Prompt: "work", WorkDir: t.TempDir(), Env: os.Environ(), RetryBase: time.Millisecond}
}

// An agent killed by a signal nobody here sent is resumed with --retry;
// without it the run fails, naming the signal.
func TestRetrySignal(t *testing.T) {
	prog, log := fakeClaude(t, initLine+"; kill -KILL $$", answerLine)
	req := claudeRequest(t, prog, grant.Options{})
	res, err := Run(context.Background(), req)
	if err != nil || !failed(res) || !strings.Contains(res.Reason, "SIGKILL") {
		t.Fatalf("--retry 0: %v %+v", err, res)
	}
	req.Retry = 1
	res, err = Run(context.Background(), req)
	if err != nil || !res.OK || res.Text != "done" || len(res.Attempts) != 2 || res.Attempts[0].Fault != "SIGKILL" || res.Attempts[1].Kind != "retry" {
		t.Fatalf("--retry 1: %v %+v", err, res)
	}
	b, _ := os.ReadFile(log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if last := lines[len(lines)-1]; !strings.HasSuffix(last, "--resume s-1") {
		t.Errorf("the retry's argv: %s", last)
	}
}

// claude's total_cost_usd after --resume is the session's running total:
// each attempt's cost is its own part of it, and the run's the last
// total; its tokens are each run's, and add up.
func TestTallyClaudeCost(t *testing.T) {
	var tl tally
	cost := func(v float64) *float64 { return &v }
	tok := func(v int64) *int64 { return &v }
	a := tl.add(grant.Claude, "s", Usage{CostUSD: cost(0.25), InputTokens: tok(10), OutputTokens: tok(1)}, 0, 1, nil)
	b := tl.add(grant.Claude, "s", Usage{CostUSD: cost(0.75), InputTokens: tok(20), OutputTokens: tok(2)}, 0, 2, nil)
	if *a.CostUSD != 0.25 || *b.CostUSD != 0.5 || *tl.total.CostUSD != 0.75 || *tl.total.InputTokens != 30 || tl.turns != 3 {
		t.Errorf("claude: %v %v total %+v", *a.CostUSD, *b.CostUSD, tl.total)
	}
	var tc tally
	price := &Price{In: 1, Out: 10, Cached: 0.1}
	tc.add(grant.Codex, "t", Usage{InputTokens: tok(100), OutputTokens: tok(10), CacheReadTokens: tok(50)}, 1, 1, price)
	c := tc.add(grant.Codex, "t", Usage{InputTokens: tok(300), OutputTokens: tok(30), CacheReadTokens: tok(50)}, 1, 1, price)
	if *c.InputTokens != 200 || *c.OutputTokens != 20 || *tc.total.InputTokens != 300 || *c.CostUSD != (200*1+20*10)/1e6 {
		t.Errorf("codex: %+v total %+v", c, tc.total)
	}
}

func TestBackoff(t *testing.T) {
	for n := 1; n <= 10; n++ {
		d := backoff(time.Second, n, 0)
		hi := min(time.Second<<(n-1), time.Minute)
		if d < hi/2 || d > hi {
			t.Errorf("retry %d: %v, want within [%v, %v]", n, d, hi/2, hi)
		}
	}
	// --retry 100 against an API that stays down: the doubling stops at
	// the minute, it does not overflow into a negative wait (rand.N panics).
	for _, n := range []int{34, 64, 100} {
		if d := backoff(2*time.Second, n, 0); d < 30*time.Second || d > time.Minute {
			t.Errorf("retry %d: %v, want within [30s, 1m]", n, d)
		}
	}
	if d := backoff(time.Millisecond, 1, 3*time.Second); d != 3*time.Second {
		t.Errorf("Retry-After 3s: waited %v", d)
	}
	if d := backoff(time.Millisecond, 1, time.Hour); d != 5*time.Minute {
		t.Errorf("Retry-After 1h: waited %v", d)
	}
}

// The values of what a clean environment drops, and of what is named to
// be redacted, are replaced wherever the run says them; short values and
// a shell's own variables are not.
func TestSecrets(t *testing.T) {
	job := []string{"PATH=/usr/bin", "HOME=/home/u", "GH_TOKEN=ghp_abcdef123", "PWD=/home/u/work", "SHORT=abc", "SHARED=/usr/bin", "API=sk-\"quoted\"-x", "MINE=my-own-secret"}
	o := grant.Options{Level: 2, Harness: grant.Claude}
	g, _ := grant.For(o)
	env, s := agentEnv(Request{Grant: g, Clean: &CleanEnv{}, Redact: []string{"MINE"}}, job)
	if strings.Join(env, " ") != "PATH=/usr/bin HOME=/home/u" {
		t.Errorf("env: %v", env)
	}
	in := `token ghp_abcdef123 in /home/u/work, abc, /usr/bin, my-own-secret, {"k":"sk-\"quoted\"-x"}`
	want := `token [redacted:GH_TOKEN] in /home/u/work, abc, /usr/bin, [redacted:MINE], {"k":"[redacted:API]"}`
	if got := s.apply(in); got != want {
		t.Errorf("redacted:\n got %s\nwant %s", got, want)
	}
}

func TestUnwrapShell(t *testing.T) {
	for in, want := range map[string]string{
		"/bin/bash -lc 'echo one'":          "echo one",
		`/bin/bash -lc 'echo '\''hi'\'' x'`: "echo 'hi' x",
		"/bin/bash -lc 'a' 'b'":             "/bin/bash -lc 'a' 'b'",
		"ls -l":                             "ls -l",
	} {
		if got := unwrapShell(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

// A failing check resumes the session with its output; a signal while the
// check runs ends it and the run, with no further attempt.
func TestUntilCheck(t *testing.T) {
	prog, log := fakeClaude(t, initLine+"; "+answerLine, answerLine)
	req := claudeRequest(t, prog, grant.Options{})
	req.Until, req.Attempts = "echo not yet; test -f ok", 2
	res, err := Run(context.Background(), req)
	if err != nil || !failed(res) || len(res.Attempts) != 2 || res.Attempts[1].Kind != "until" ||
		res.Attempts[1].Check.Tail != "not yet" || res.Reason != "the check still fails after 2 answers: exited 1" {
		t.Fatalf("%v %+v", err, res)
	}
	b, _ := os.ReadFile(log)
	if n := strings.Count(string(b), "--resume s-1"); n != 1 {
		t.Errorf("%d resumed starts: %s", n, b)
	}

	marker := filepath.Join(t.TempDir(), "started")
	req.Until = "touch " + marker + "; sleep 60"
	req.StopSignal = func() syscall.Signal { return syscall.SIGINT }
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		if await.Until(30*time.Second, func() bool { _, err := os.Stat(marker); return err == nil }) {
			cancel()
		}
	}()
	start := time.Now()
	res, err = Run(ctx, req)
	if err != nil || res.StoppedBy != "SIGINT" || len(res.Attempts) != 1 || time.Since(start) > 30*time.Second {
		t.Fatalf("a signal during the check: %v %+v after %v", err, res, time.Since(start))
	}
	// The check gets the signal runagent got, as the agent would, and
	// SIGKILL after a grace when it goes on (dash keeps a SIGINT that
	// comes between two commands for later).
	if c := res.Attempts[0].Check; c == nil || c.Signal != "SIGINT" && c.Signal != "SIGKILL" {
		t.Errorf("the check: %+v", c)
	}
}

// A response is a turn; claude's synthetic message for an API error is
// none (the pinned claude's 529, replayed).
func TestTurnsFromTheStream(t *testing.T) {
	b, err := os.ReadFile("../grant/testdata/claude/err529-streamjson.stdout")
	if err != nil {
		t.Fatal(err)
	}
	st := newStream(grant.Claude, &grant.Transcript{Harness: grant.Claude}, nil, caps{turns: 1})
	for _, l := range strings.Split(string(b), "\n") {
		st.line([]byte(l))
	}
	for _, id := range []string{"msg_1", "msg_1", "msg_2"} {
		st.line([]byte(`{"type":"assistant","message":{"id":"` + id + `","model":"m","content":[{"type":"text","text":"x"}]}}`))
	}
	if u := st.result(); u.turns != 2 || st.hit != LimitTurns {
		t.Errorf("turns %d, limit %v", u.turns, st.hit)
	}
}

// The summary of a run that hit its limit, was wrapped up, had its check
// run and left a service: each in its place, in Markdown.
func TestSummaryRenders(t *testing.T) {
	cost, in, out := 0.01234, int64(1200), int64(34)
	turns := 5
	res := &Result{Agent: "claude", Level: 2, Limit: LimitTurns, LimitName: "--max-turns", Partial: true, Reason: "stopped at --max-turns 5: …",
		DurationMs: 61234, Session: "s-1",
		Usage:    &Usage{InputTokens: &in, OutputTokens: &out, CostUSD: &cost, Turns: &turns, ToolCalls: 7},
		Attempts: []Attempt{{Kind: "first"}, {Kind: "retry"}, {Kind: "until", Check: &Check{Command: "go test ./...", Status: "exited 1"}}, {Kind: "wrap-up"}},
		Services: []ServiceEnd{{Name: "runagent-9/web", Command: []string{"npm", "run", "dev"}, Status: "stopped"}}}
	w := &work{}
	w.take(grant.Claude, `{"type":"assistant"}`, []protocol.AgentEvent{{Type: protocol.EvToolCall, Name: "Bash", ToolCallID: "a", Input: []byte(`{"command":"go test ./... | tail"}`)}})
	w.take(grant.Claude, `{"type":"user"}`, []protocol.AgentEvent{{Type: protocol.EvToolResult, ToolCallID: "a", IsError: true, Output: "Exit code 1\nFAIL"}})
	w.take(grant.Claude, `{"type":"result","permission_denials":[{"tool_name":"Bash","tool_input":{"command":"rm -rf /"}}]}`, nil)
	w.take(grant.Codex, `{"type":"item.completed","item":{"type":"command_execution","command":"/bin/bash -lc 'make'","exit_code":0}}`, nil)
	res.work = *w
	got := Summary(res)
	for _, want := range []string{
		"### runagent: stopped at a limit (--max-turns); partial report\n",
		"> stopped at --max-turns 5: …\n",
		"| attempts | 4 (1 retry, 1 try after the check failed, 1 wrap-up) |",
		"| turns | 5 |", "| tool calls | 7 |", "| tokens | 1200 in, 34 out |", "| cost | $0.0123 |", "| duration | 61.2 s |",
		"| check | `go test ./...`: exited 1 |",
		"| `go test ./... \\| tail` | 1 |", "| `make` | 0 |",
		"#### Permission denials\n\n- `Bash rm -rf /`\n",
		"| runagent-9/web | `npm run dev` | stopped |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
}

// A signal while --preflight runs the agent's --version ends the run
// promptly as stopped by it (128+N, not a preflight failure, exit 2), and
// takes what --version started with it.
func TestPreflightSignal(t *testing.T) {
	dir := t.TempDir()
	marker, pidFile := filepath.Join(dir, "started"), filepath.Join(dir, "sleep.pid")
	prog, _ := fakeClaude(t, "sleep 60 & echo $! > "+pidFile+"; touch "+marker+"; wait", answerLine)
	req := claudeRequest(t, prog, grant.Options{})
	req.Preflight = true
	req.Env = append(os.Environ(), "ANTHROPIC_API_KEY=k")
	req.StopSignal = func() syscall.Signal { return syscall.SIGINT }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		if await.Until(30*time.Second, func() bool { _, err := os.Stat(marker); return err == nil }) {
			cancel()
		}
	}()
	start := time.Now()
	res, err := Run(ctx, req)
	if took := time.Since(start); err != nil || res == nil || res.StoppedBy != "SIGINT" || took > 10*time.Second {
		t.Fatalf("a signal during the preflight: %v %+v after %v", err, res, took)
	}
	b, _ := os.ReadFile(pidFile)
	var pid int
	fmt.Sscan(string(b), &pid)
	// Killed, it is init's to reap: gone within a deadline.
	if pid > 0 && !await.Until(10*time.Second, func() bool { return syscall.Kill(pid, 0) != nil }) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("--version's child %d outlived the run", pid)
	}
}

// A signal that comes while a stalled agent is being stopped ends the
// run there: no wrap-up is started after it, and the run is the signal's
// (128+N), not the stall's.
func TestSignalBeforeWrapUp(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "termed")
	// Stalled, it takes SIGTERM for a note and goes on until SIGKILL.
	prog, log := fakeClaude(t, initLine+"; trap 'touch "+marker+"' TERM; while :; do sleep 30 & wait; done", answerLine)
	req := claudeRequest(t, prog, grant.Options{})
	req.IdleTimeout, req.WrapUp = 100*time.Millisecond, true
	req.StopSignal = func() syscall.Signal { return syscall.SIGINT }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		if await.Until(30*time.Second, func() bool { _, err := os.Stat(marker); return err == nil }) {
			cancel()
		}
	}()
	res, err := Run(ctx, req)
	if err != nil || res.StoppedBy != "SIGINT" {
		t.Errorf("a signal while the stall was stopped: %v %+v", err, res)
	}
	if b, _ := os.ReadFile(log); len(res.Attempts) > 1 || strings.Contains(string(b), "--resume") {
		t.Logf("attempts: %+v", res.Attempts)
		t.Errorf("a wrap-up was started after the signal:\n%s", b)
	}
}

// A secret is redacted from an event line however the line escapes it:
// --events is written without HTML escaping, so a value with both a quote
// and an ampersand is neither as it is nor as json.Marshal writes it.
func TestSecretsInEventLines(t *testing.T) {
	const value = `p&ss"word<1>`
	job := []string{"PATH=/usr/bin", "DB_PASSWORD=" + value}
	g, _ := grant.For(grant.Options{Level: 2, Harness: grant.Claude})
	_, s := agentEnv(Request{Grant: g, Clean: &CleanEnv{}}, job)
	for _, v := range []any{value, map[string]string{"output": "x " + value + " y"}} {
		for _, enc := range []func(any) ([]byte, error){json.Marshal, protocol.Marshal} {
			b, _ := enc(v)
			if got := s.apply(string(b)); strings.Contains(got, "ss") || !strings.Contains(got, "[redacted:DB_PASSWORD]") {
				t.Errorf("%s: redacted %s", b, got)
			}
		}
	}
}

// A signal during --retry's backoff ends the run at once, as stopped by
// it, with no further start of the agent.
func TestSignalDuringBackoff(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	prog, log := fakeClaude(t, initLine+"; echo $$ > "+pidFile+"; kill -KILL $$", answerLine)
	req := claudeRequest(t, prog, grant.Options{})
	req.Retry, req.RetryBase = 3, time.Hour
	req.StopSignal = func() syscall.Signal { return syscall.SIGTERM }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Once the killed agent is reaped, the run is on to its backoff.
		pid, err := await.PID(pidFile, 30*time.Second)
		if err == nil && await.Until(30*time.Second, func() bool { return syscall.Kill(pid, 0) != nil }) {
			cancel()
		}
	}()
	start := time.Now()
	res, err := Run(ctx, req)
	if took := time.Since(start); err != nil || res.StoppedBy != "SIGTERM" || took > 20*time.Second ||
		!strings.Contains(res.Reason, "while waiting to retry") || len(res.Attempts) > 1 {
		t.Fatalf("a signal during the backoff: %v %+v after %v", err, res, took)
	}
	if b, _ := os.ReadFile(log); strings.Count(string(b), "\n") != 1 {
		t.Errorf("starts:\n%s", b)
	}
}

// A secret the model streams across text deltas (claude's partial
// messages, with --events) is redacted though no one delta holds it: the
// deltas, joined, hold the mark and no piece of the value.
func TestSecretsAcrossDeltas(t *testing.T) {
	const value = "ghp_abcdef123456"
	delta := func(text string) string {
		return `echo '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + text + `"}}}'`
	}
	result := `echo '{"type":"result","subtype":"success","is_error":false,"result":"token ` + value + ` end","session_id":"s-1"}'`
	prog, _ := fakeClaude(t, strings.Join([]string{initLine, delta("token ghp_ab"), delta("cdef12"), delta("3456 end"), result}, "; "), answerLine)
	req := claudeRequest(t, prog, grant.Options{})
	req.Env = append(os.Environ(), "GH_TOKEN="+value)
	req.Clean = &CleanEnv{}
	var events strings.Builder
	req.Events = &events
	res, err := Run(context.Background(), req)
	if err != nil || !res.OK || res.Text != "token [redacted:GH_TOKEN] end" {
		t.Fatalf("%v %+v", err, res)
	}
	var joined strings.Builder
	for _, line := range strings.Split(events.String(), "\n") {
		var m struct {
			Event protocol.AgentEvent `json:"event"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Event.Type == protocol.EvTextDelta {
			joined.WriteString(m.Event.Text)
		}
	}
	if got := joined.String(); got != "token [redacted:GH_TOKEN] end" {
		t.Errorf("the deltas joined: %q\n%s", got, events.String())
	}
}

// A cut never leaves part of a secret: the answer cut at --max-output in
// the middle of one, the check's output kept from its end (its first
// bytes gone) starting in the middle of one.
func TestSecretsAtCuts(t *testing.T) {
	const value = "ghp_abcdef123456"
	result := `echo '{"type":"result","subtype":"success","is_error":false,"result":"token ` + value + ` end","session_id":"s-1"}'`
	prog, _ := fakeClaude(t, initLine+"; "+result, answerLine)
	req := claudeRequest(t, prog, grant.Options{})
	req.Env = append(os.Environ(), "GH_TOKEN="+value)
	req.Clean = &CleanEnv{}
	req.MaxOutput = len("token ghp_abc")
	res, err := Run(context.Background(), req)
	if err != nil || !res.OK || strings.Contains(res.Text, "ghp_abc") || !res.Truncated {
		t.Errorf("the answer cut in the secret: %v %+v", err, res)
	}

	req.MaxOutput = 0
	// 16 bytes of token and 3990 more: the last 4000 start at its 7th,
	// "cdef123456".
	req.Until, req.Attempts = `printf %s "$GH_TOKEN"; head -c 3990 /dev/zero | tr '\0' x; exit 1`, 1
	res, err = Run(context.Background(), req)
	if err != nil || len(res.Attempts) != 1 || res.Attempts[0].Check == nil {
		t.Fatalf("%v %+v", err, res)
	}
	if tail := res.Attempts[0].Check.Tail; strings.Contains(tail, "def123456") || !strings.HasPrefix(tail, "[redacted:GH_TOKEN]xxx") {
		t.Errorf("the check's tail starts %q", tail[:min(len(tail), 40)])
	}
}

// The wrap-up's one turn keeps its answer whatever it costs. The pinned
// claude checks --max-budget-usd only after a turn, and a turn over it
// ends as error_max_budget_usd without the answer it paid for (measured:
// a resumed one-turn answer with --max-budget-usd 0.0001): a budget there
// would only throw the report away. The fake does what claude did.
func TestWrapUpKeepsItsAnswer(t *testing.T) {
	msg := func(id string) string {
		return `echo '{"type":"assistant","message":{"id":"` + id + `","model":"m","content":[{"type":"text","text":"working"}]}}'`
	}
	overBudget := `echo '{"type":"result","subtype":"error_max_budget_usd","is_error":true,"terminal_reason":"budget_exhausted","errors":["Reached maximum budget"],"session_id":"s-1","total_cost_usd":0.9}'; exit 1`
	report := `echo '{"type":"result","subtype":"success","is_error":false,"result":"done: a; left: b","session_id":"s-1","total_cost_usd":0.9}'`
	prog, log := fakeClaude(t, initLine+"; "+msg("m1")+"; "+msg("m2")+"; sleep 30",
		`case "$*" in *--max-budget-usd*) `+overBudget+` ;; *) `+report+` ;; esac`)
	req := claudeRequest(t, prog, grant.Options{MaxTurns: 1})
	req.MaxTurns, req.WrapUp = 1, true
	res, err := Run(context.Background(), req)
	if err != nil || res.Limit == NoLimit || !res.Partial || res.Text != "done: a; left: b" {
		b, _ := os.ReadFile(log)
		t.Fatalf("%v %+v\n%s", err, res, b)
	}
}

// A command with backticks stays one code span in the summary: its fence
// is longer than any run of backticks inside.
func TestSummaryBackticks(t *testing.T) {
	zero := 0
	res := &Result{Agent: "claude", Level: 2, OK: true, Usage: &Usage{}}
	res.work.Commands = []CommandRun{{Command: "echo `date` | tr a b", Exit: &zero}}
	if got, want := Summary(res), "| `` echo `date` \\| tr a b `` | 0 |"; !strings.Contains(got, want) {
		t.Errorf("no %q in\n%s", want, got)
	}
}

// A signal that came before the agent started (while the workspace was
// made) starts no agent at all.
func TestSignalBeforeStart(t *testing.T) {
	prog, log := fakeClaude(t, initLine+"; "+answerLine, answerLine)
	req := claudeRequest(t, prog, grant.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Run(ctx, req)
	if err != nil || res.StoppedBy != "SIGTERM" {
		t.Errorf("%v %+v", err, res)
	}
	if b, _ := os.ReadFile(log); len(b) > 0 {
		t.Errorf("the agent was started:\n%s", b)
	}
}

// A check that ignores the signal runagent forwards still ends, SIGKILLed
// after its grace, and the run with it.
func TestUntilCheckIgnoresSignal(t *testing.T) {
	prog, _ := fakeClaude(t, initLine+"; "+answerLine, answerLine)
	req := claudeRequest(t, prog, grant.Options{})
	marker := filepath.Join(t.TempDir(), "started")
	req.Until = "trap '' INT; touch " + marker + "; sleep 60"
	req.StopSignal = func() syscall.Signal { return syscall.SIGINT }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		if await.Until(30*time.Second, func() bool { _, err := os.Stat(marker); return err == nil }) {
			cancel()
		}
	}()
	start := time.Now()
	res, err := Run(ctx, req)
	if took := time.Since(start); err != nil || res.StoppedBy != "SIGINT" || took > 30*time.Second || res.Attempts[0].Check.Signal != "SIGKILL" {
		t.Fatalf("%v %+v after %v", err, res, took)
	}
}

// A secret is redacted in the forms it is commonly encoded in, wherever it
// sits in the text: hex, base64 at each offset, URL-encoded, \u-escaped,
// \/-escaped, upper-cased, and a long prefix of it.
func TestRedactEncodings(t *testing.T) {
	const v = "ghp_Tok/en+0123456789abcdefXYZ"
	s := &secrets{}
	s.add("GH_TOKEN", v)
	b64 := func(enc *base64.Encoding, prefix string) string { return enc.EncodeToString([]byte(prefix + v + "!")) }
	u := ""
	for _, r := range v {
		u += fmt.Sprintf(`\u%04x`, r)
	}
	for name, text := range map[string]string{
		"plain": v, "hex": hex.EncodeToString([]byte(v)), "HEX": strings.ToUpper(hex.EncodeToString([]byte(v))),
		"base64": b64(base64.StdEncoding, ""), "base64+1": b64(base64.StdEncoding, "a"), "base64+2": b64(base64.StdEncoding, "ab"),
		"base64url+1": b64(base64.URLEncoding, "a"), "url": url.QueryEscape(v), "\\u": u,
		"\\/": strings.ReplaceAll(v, "/", `\/`), "upper": strings.ToUpper(v), "prefix": v[:22] + "…",
	} {
		got := s.apply("before " + text + " after")
		if !strings.Contains(got, "[redacted:GH_TOKEN]") {
			t.Errorf("%s: %q", name, got)
		}
	}
	if got := s.apply("ghp_ and an ordinary line"); got != "ghp_ and an ordinary line" {
		t.Errorf("an ordinary line: %q", got)
	}
}

// failed: the run ended without an answer, by itself (not stopped by a
// signal, a limit or a stall).
func failed(res *Result) bool {
	return res != nil && !res.OK && res.StoppedBy == "" && res.Limit == NoLimit && !res.Stalled
}

// A limit is said in the face's words where it gives them, else in the
// run's own, which name no flag.
func TestLimitWords(t *testing.T) {
	req := Request{MaxTurns: 3, MaxToolCalls: 2}
	own := map[Limit]string{LimitTurns: "the limit of 3 turns", LimitToolCalls: "the limit of 2 tool calls",
		LimitBudget: "the budget", LimitNoTools: "a tool call in a turn without tools"}
	for l, want := range own {
		if got := limitDesc(l, req); got != want {
			t.Errorf("%v: %q, want %q", l, got, want)
		}
	}
	req.Words.Limit = func(l Limit, n int) string {
		if l == LimitTurns {
			return fmt.Sprintf("TURNS(%d)", n)
		}
		return ""
	}
	if got := limitDesc(LimitTurns, req); got != "TURNS(3)" {
		t.Errorf("the face's words: %q", got)
	}
	if got := limitDesc(LimitBudget, req); got != "the budget" {
		t.Errorf("no face's words: %q", got)
	}
	if got := req.Words.limit(LimitTurns, 0); got != "TURNS(0)" {
		t.Errorf("the name: %q", got)
	}
}
