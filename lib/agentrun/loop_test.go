package agentrun

import (
	"context"
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
	if err != nil || res.OK || res.Exit != 1 || !strings.Contains(res.Reason, "SIGKILL") {
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
	if err != nil || res.OK || res.Exit != 1 || len(res.Attempts) != 2 || res.Attempts[1].Kind != "until" ||
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
	if err != nil || res.StoppedBy != "SIGINT" || res.Exit != 130 || len(res.Attempts) != 1 || time.Since(start) > 30*time.Second {
		t.Fatalf("a signal during the check: %v %+v after %v", err, res, time.Since(start))
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
	if u := st.result(); u.turns != 2 || st.limitName != "--max-turns" {
		t.Errorf("turns %d, limit %q", u.turns, st.limitName)
	}
}

// The summary of a run that hit its limit, was wrapped up, had its check
// run and left a service: each in its place, in Markdown.
func TestSummaryRenders(t *testing.T) {
	cost, in, out := 0.01234, int64(1200), int64(34)
	turns := 5
	res := &Result{Agent: "claude", Level: 2, Limit: "--max-turns", Partial: true, Reason: "stopped at --max-turns 5: …",
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
