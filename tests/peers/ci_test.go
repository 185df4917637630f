package peers

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The agents as runagent's CI features are tested against them.
type ciAgent struct {
	name string
	env  func(t *testing.T) ([]string, *server)
	args []string
	// structured is the directive that makes the model answer value as its
	// structured answer.
	structured func(value string) string
	shell      func(n int) string
}

var ciAgents = []ciAgent{
	{name: "claude", env: func(t *testing.T) ([]string, *server) { api := fakeAnthropic(t); return claudeEnv(t, api), api },
		structured: func(v string) string { return "CALL StructuredOutput " + v },
		shell:      func(n int) string { return fmt.Sprintf(`CALL Bash {"command":"echo step %d","description":"step"}`, n) }},
	{name: "codex", env: func(t *testing.T) ([]string, *server) { api := fakeOpenAI(t); return codexEnv(t, api), api },
		args:       []string{"--agent", "codex"},
		structured: func(v string) string { return "SAY " + v },
		shell:      func(n int) string { return fmt.Sprintf(`CALL exec_command {"cmd":"echo step %d"}`, n) }},
}

type ciResult struct {
	OK     bool   `json:"ok"`
	Text   string `json:"text"`
	Reason string `json:"reason"`
	Limit  string `json:"limit"`
	Usage  *struct {
		InputTokens      *int64   `json:"inputTokens"`
		OutputTokens     *int64   `json:"outputTokens"`
		CacheReadTokens  *int64   `json:"cacheReadTokens"`
		CacheWriteTokens *int64   `json:"cacheWriteTokens"`
		CostUSD          *float64 `json:"costUsd"`
		Turns            *int     `json:"turns"`
		ToolCalls        int      `json:"toolCalls"`
		DurationMs       float64  `json:"durationMs"`
	} `json:"usage"`
}

func parseCI(t *testing.T, r result) ciResult {
	t.Helper()
	var res ciResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("--json: %v\nstdout %s\nstderr %s", err, r.stdout, r.stderr)
	}
	return res
}

const answerSchema = `{"type":"object","properties":{"answer":{"type":"integer"}},"required":["answer"],"additionalProperties":false}`

// --schema: a conforming answer is one line of JSON on stdout; one that
// does not conform is exit 1 with where and why, and nothing on stdout.
func TestSchema(t *testing.T) {
	need(t)
	schema := filepath.Join(t.TempDir(), "answer.schema.json")
	os.WriteFile(schema, []byte(answerSchema), 0o600)
	for _, a := range ciAgents {
		t.Run(a.name, func(t *testing.T) {
			env, _ := a.env(t)
			r := runagent(t, env, t.TempDir(), append(a.args, "-l", "1", "--schema", schema, a.structured(`{"answer": 42}`))...)
			if r.code != 0 || r.stdout != "{\"answer\":42}\n" {
				t.Fatalf("conforming: exit %d\nstdout %q\nstderr %s", r.code, r.stdout, r.stderr)
			}
			r = runagent(t, env, t.TempDir(), append(a.args, "-l", "1", "--schema", schema, a.structured(`{"answer":"x"}`))...)
			want := "runagent: error: the answer does not conform to the schema: at /answer: got string, want integer"
			if a.name == "claude" {
				// Claude Code checks the tool's input itself and asks again;
				// a model that then answers in text ends the run "successfully"
				// with no structured answer at all.
				want = "runagent: error: claude ended without a structured answer"
			}
			if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, want) {
				t.Fatalf("non-conforming: exit %d\nstdout %q\nstderr %s\nwant %s", r.code, r.stdout, r.stderr, want)
			}
		})
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"type":"no-such-type"}`), 0o600)
	r := runagent(t, os.Environ(), t.TempDir(), "-l", "1", "--schema", bad, "SAY hi")
	if r.code != 2 || !strings.Contains(r.stderr, "is not a valid JSON Schema") {
		t.Errorf("an invalid schema: exit %d, stderr %s", r.code, r.stderr)
	}
}

// Usage in --json is what the fake API reported, summed over the run's
// requests: claude's 12 in and 7 out each, codex's 20 and 8; and what a
// CLI does not report is absent.
func TestUsage(t *testing.T) {
	need(t)
	for _, a := range ciAgents {
		t.Run(a.name, func(t *testing.T) {
			env, _ := a.env(t)
			steps := "STEPS:\n" + a.shell(1) + "\n"
			res := parseCI(t, runagent(t, env, t.TempDir(), append(a.args, "-l", "2", "--json", steps)...))
			u := res.Usage
			if !res.OK || u == nil || u.InputTokens == nil || u.OutputTokens == nil || u.ToolCalls != 1 || u.DurationMs <= 0 {
				t.Fatalf("usage: %+v %+v", res, u)
			}
			in, out := int64(2*12), int64(2*7) // two requests: the call, then the answer
			if a.name == "codex" {
				in, out = 2*20, 2*8
			}
			if *u.InputTokens != in || *u.OutputTokens != out {
				t.Errorf("tokens in %d out %d, want %d %d", *u.InputTokens, *u.OutputTokens, in, out)
			}
			switch a.name {
			case "claude":
				if u.CostUSD == nil || *u.CostUSD <= 0 || u.Turns == nil || *u.Turns != 2 || u.CacheWriteTokens == nil {
					t.Errorf("claude reports cost, turns and cache writes: %+v", u)
				}
			case "codex":
				if u.CostUSD != nil || u.Turns != nil || u.CacheWriteTokens != nil {
					t.Errorf("codex reports no cost, turns or cache writes, yet: %+v", u)
				}
			}
		})
	}
}

// --max-turns against a model that keeps calling tools: stopped with exit
// 3 and the note, not as a failure.
func TestMaxTurns(t *testing.T) {
	need(t)
	for _, a := range ciAgents {
		t.Run(a.name, func(t *testing.T) {
			env, _ := a.env(t)
			steps := "STEPS:\n"
			for i := 1; i <= 8; i++ {
				steps += a.shell(i) + "\n"
			}
			r := runagent(t, env, t.TempDir(), append(a.args, "-l", "2", "--max-turns", "2", "--json", steps)...)
			res := parseCI(t, r)
			if r.code != 3 || res.OK || res.Limit != "--max-turns" || !strings.Contains(res.Reason, "stopped at --max-turns") {
				t.Fatalf("exit %d: %+v\nstderr %s", r.code, res, r.stderr)
			}
			if res.Usage == nil || res.Usage.ToolCalls < 1 || res.Usage.ToolCalls > 3 {
				t.Errorf("tool calls before the stop: %+v", res.Usage)
			}
		})
	}
}

// --max-budget-usd: claude keeps it (exit 3); codex, which reports no
// cost, refuses it before starting.
func TestMaxBudget(t *testing.T) {
	need(t)
	a := ciAgents[0]
	env, _ := a.env(t)
	steps := "STEPS:\n"
	for i := 1; i <= 8; i++ {
		steps += a.shell(i) + "\n"
	}
	r := runagent(t, env, t.TempDir(), "-l", "2", "--max-budget-usd", "0.0000001", "--json", steps)
	res := parseCI(t, r)
	if r.code != 3 || res.Limit != "--max-budget-usd" || res.Usage == nil || res.Usage.CostUSD == nil {
		t.Fatalf("exit %d: %+v\nstderr %s", r.code, res, r.stderr)
	}
	r = runagent(t, os.Environ(), t.TempDir(), "--agent", "codex", "-l", "2", "--max-budget-usd", "1", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "--max-budget-usd needs --price for codex") {
		t.Errorf("codex budget: exit %d, stderr %s", r.code, r.stderr)
	}
}

// --idle-timeout: an API that stops sending mid-answer is a stall (124,
// nothing left running); one that streams slowly for longer than the
// timeout is not stopped.
func TestIdleTimeout(t *testing.T) {
	need(t)
	for _, a := range ciAgents {
		t.Run(a.name, func(t *testing.T) {
			env, _ := a.env(t)
			dir := t.TempDir()
			start := time.Now()
			cmd := exec.Command(runagentBin, append(a.args, "-l", "1", "--idle-timeout", "1s", "--pid-file", filepath.Join(dir, "pid"), "STALL 60")...)
			cmd.Env, cmd.Dir = env, dir
			out, _ := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != 124 || !strings.Contains(string(out), "runagent: error: stalled: no output for 1s") {
				t.Fatalf("stall: exit %d: %s", code, out)
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("the stall was seen after %v", d)
			}
			b, _ := os.ReadFile(filepath.Join(dir, "pid"))
			if st, err := os.ReadFile("/proc/" + strings.TrimSpace(string(b)) + "/stat"); err == nil && !strings.Contains(string(st), ") Z ") {
				t.Errorf("the stalled agent (pid %s) still runs", strings.TrimSpace(string(b)))
			}
			// 100 deltas 50 ms apart: 5 s of streaming, under a 2 s
			// watchdog. 1 s was less than twice claude's own start here
			// (0.7-0.9 s to its first line), and a loaded machine made
			// that start a stall.
			r := runagent(t, env, t.TempDir(), append(a.args, "-l", "1", "--idle-timeout", "2s", "SLOW 100")...)
			if r.code != 0 || !strings.Contains(r.stdout, "tick 99") {
				t.Fatalf("slow stream: exit %d\nstdout %.200s\nstderr %s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// --events: the run as agent-host protocol messages, every one of which
// ndjson check --protocol agent-host accepts, the answer alone on stdout.
func TestEvents(t *testing.T) {
	need(t)
	ndjsonBin := filepath.Join(filepath.Dir(runagentBin), "ndjson")
	for _, a := range ciAgents {
		t.Run(a.name, func(t *testing.T) {
			env, _ := a.env(t)
			events := filepath.Join(t.TempDir(), "events.ndjson")
			steps := "STEPS:\n" + a.shell(1) + "\n"
			r := runagent(t, env, t.TempDir(), append(a.args, "-l", "2", "--events", events, steps)...)
			if r.code != 0 || !strings.HasPrefix(r.stdout, "RESULTS: ") {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
			}
			check := exec.Command(ndjsonBin, "check", "--protocol", "agent-host", "--strict", "--json")
			f, _ := os.Open(events)
			defer f.Close()
			check.Stdin = f
			out, err := check.CombinedOutput()
			if err != nil || !strings.Contains(string(out), `"bad":0,"problems":{}`) {
				t.Fatalf("ndjson check: %v %s", err, out)
			}
			b, _ := os.ReadFile(events)
			for _, want := range []string{`"type":"run_started"`, `"type":"tool_call"`, `"type":"tool_result"`, `"type":"usage"`, `"type":"completed"`, `"type":"run_done"`} {
				if !strings.Contains(string(b), want) {
					t.Errorf("no %s in the events:\n%s", want, b)
				}
			}
		})
	}
}

// --append-system-prompt and --effort reach the model's request.
func TestSystemPromptAndEffort(t *testing.T) {
	need(t)
	file := filepath.Join(t.TempDir(), "extra.md")
	os.WriteFile(file, []byte("Always answer in UNIQUE-SYSTEM-WORDS.\n"), 0o600)
	for _, a := range ciAgents {
		t.Run(a.name, func(t *testing.T) {
			env, api := a.env(t)
			effort := "high"
			r := runagent(t, env, t.TempDir(), append(a.args, "-l", "1", "--append-system-prompt", file, "--effort", effort, "SAY hi")...)
			if r.code != 0 {
				t.Fatalf("exit %d %s", r.code, r.stderr)
			}
			api.mu.Lock()
			defer api.mu.Unlock()
			if len(api.bodies) == 0 || !strings.Contains(api.bodies[0], "UNIQUE-SYSTEM-WORDS") {
				t.Errorf("the appended system prompt is not in the model's request")
			}
			if a.name == "codex" && !strings.Contains(api.bodies[0], `"effort":"high"`) {
				t.Errorf("codex did not ask for effort high")
			}
		})
	}
}
