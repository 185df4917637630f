package peers

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/agentrun"
)

// The agents as runagent's loop (retries, caps, wrap-up, the check) is
// tested against them, each behind a flaky proxy in front of its fake.
type loopAgent struct {
	name       string
	args       []string
	fake       func(t *testing.T) *server
	env        func(t *testing.T, api *server) []string
	shell      func(cmd string) string
	structured func(value string) string
}

var loopAgents = []loopAgent{
	{name: "claude", fake: fakeAnthropic, env: claudeEnv,
		shell:      func(cmd string) string { return fmt.Sprintf(`CALL Bash {"command":%q,"description":"run"}`, cmd) },
		structured: func(v string) string { return "CALL StructuredOutput " + v }},
	{name: "codex", args: []string{"--agent", "codex"}, fake: fakeOpenAI, env: codexEnv,
		shell:      func(cmd string) string { return fmt.Sprintf(`CALL exec_command {"cmd":%q}`, cmd) },
		structured: func(v string) string { return "SAY " + v }},
}

// loopResult is runagent --json, with its attempts.
type loopResult struct {
	ciResult
	Session  string             `json:"session"`
	Partial  bool               `json:"partial"`
	Stalled  bool               `json:"stalled"`
	Attempts []agentrun.Attempt `json:"attempts"`
}

func parseLoop(t *testing.T, r result) loopResult {
	t.Helper()
	var res loopResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("--json: %v\nstdout %s\nstderr %s", err, r.stdout, r.stderr)
	}
	if os.Getenv("PEERS_DUMP") != "" {
		t.Logf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	return res
}

// fastRetry makes runagent's backoff milliseconds, not seconds.
const fastRetry = "RUNAGENT_RETRY_BASE=20ms"

// A 529 (claude's overloaded) and a cut stream on the first attempt: with
// --retry 2 the session is resumed and the run answers, its usage summed
// over both attempts; with --retry 0 the run fails.
func TestRetryTransient(t *testing.T) {
	need(t)
	for _, a := range loopAgents {
		for _, fault := range []struct {
			name   string
			faults []int
			want   string
		}{
			{"529", []int{529}, "HTTP 529"},
			// claude answers a cut stream by asking again without
			// streaming: both are cut.
			{"cut", []int{0, 0}, "a cut stream"},
		} {
			if a.name == "codex" && fault.name == "cut" {
				fault.faults = []int{0} // codex does not ask again
			}
			t.Run(a.name+"/"+fault.name, func(t *testing.T) {
				api := a.fake(t)
				fl := newFlaky(t, api, fault.faults...)
				env := append(a.env(t, fl.server), fastRetry)
				events := filepath.Join(t.TempDir(), "events.ndjson")
				r := runagent(t, env, t.TempDir(), append(a.args, "-l", "1", "--retry", "2", "--json", "--events", events, "SAY made it through")...)
				res := parseLoop(t, r)
				checkEvents(t, events)
				if r.code != 0 || !res.OK || len(res.Attempts) != 2 {
					t.Fatalf("--retry 2: exit %d %+v\nstderr %s", r.code, res, r.stderr)
				}
				t.Logf("runagent --retry 2 --json: %s", r.stdout)
				first, second := res.Attempts[0], res.Attempts[1]
				if first.Ended != "transient" || first.Fault != fault.want || second.Kind != "retry" || second.Ended != "answer" || second.WaitedMs <= 0 {
					t.Errorf("attempts: %+v / %+v", first, second)
				}
				if first.Session == "" || second.Session != first.Session {
					t.Errorf("the retry did not resume the session: %q then %q", first.Session, second.Session)
				}
				// The resumed session still holds the task.
				if last := fl.seen[len(fl.seen)-1]; !strings.Contains(last, "made it through") {
					t.Errorf("the resumed request lost the prompt: %.400s", last)
				}
				u := res.Usage
				if u == nil || u.InputTokens == nil || second.Usage == nil || second.Usage.InputTokens == nil ||
					*u.InputTokens != *second.Usage.InputTokens+deref64(first.Usage.InputTokens) {
					t.Errorf("usage is not the attempts' sum: %+v", u)
				}
				fl2 := newFlaky(t, a.fake(t), fault.faults...)
				r = runagent(t, append(a.env(t, fl2.server), fastRetry), t.TempDir(), append(a.args, "-l", "1", "--json", "SAY made it through")...)
				if res := parseLoop(t, r); r.code != 1 || res.OK || len(res.Attempts) != 0 {
					t.Errorf("--retry 0: exit %d %+v", r.code, res)
				}
			})
		}
	}
}

func deref64(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// A 401 is never retried: one attempt, one request.
func TestRetryNotAuth(t *testing.T) {
	need(t)
	for _, a := range loopAgents {
		t.Run(a.name, func(t *testing.T) {
			fl := newFlaky(t, a.fake(t), 401, 401, 401)
			r := runagent(t, append(a.env(t, fl.server), fastRetry), t.TempDir(), append(a.args, "-l", "1", "--retry", "2", "--json", "SAY hi")...)
			res := parseLoop(t, r)
			if r.code != 1 || res.OK || len(res.Attempts) != 0 || fl.count() != 1 || !strings.Contains(res.Reason, "401") {
				t.Fatalf("exit %d, %d requests: %+v\nstderr %s", r.code, fl.count(), res, r.stderr)
			}
		})
	}
}

// A model that calls tools for ever stops at --max-turns exactly, with
// either agent: three tool calls completed, exit 3. With --wrap-up the
// session is resumed once, without tools, and its report is the answer
// (partial); with --schema too, the report is checked against it.
func TestMaxTurnsWrapUp(t *testing.T) {
	need(t)
	schema := filepath.Join(t.TempDir(), "report.schema.json")
	os.WriteFile(schema, []byte(`{"type":"object","properties":{"done":{"type":"string"},"left":{"type":"string"}},"required":["done","left"]}`), 0o600)
	for _, a := range loopAgents {
		t.Run(a.name, func(t *testing.T) {
			steps := "STEPS:\n"
			for i := 1; i <= 8; i++ {
				steps += a.shell(fmt.Sprintf("echo step %d", i)) + "\n"
			}
			fl := newFlaky(t, a.fake(t))
			env := a.env(t, fl.server)
			r := runagent(t, env, t.TempDir(), append(a.args, "-l", "2", "--max-turns", "3", "--json", steps)...)
			res := parseLoop(t, r)
			if r.code != 3 || res.Limit != "--max-turns" || res.Usage == nil || res.Usage.ToolCalls != 3 || res.Partial {
				t.Fatalf("--max-turns 3: exit %d %+v %+v\nstderr %s", r.code, res, res.Usage, r.stderr)
			}
			if a.name == "claude" && (res.Usage.Turns == nil || *res.Usage.Turns != 3 || fl.count() != 3) {
				t.Errorf("claude: %d requests, turns %v", fl.count(), res.Usage.Turns)
			}

			fl.rewrite[agentrun.WrapUpPrompt] = "SAY WRAPPED: steps 1 to 3 done, 4 to 8 left"
			r = runagent(t, env, t.TempDir(), append(a.args, "-l", "2", "--max-turns", "3", "--wrap-up", "--json", steps)...)
			res = parseLoop(t, r)
			if r.code != 3 || res.Limit != "--max-turns" || !res.Partial || !strings.HasPrefix(res.Text, "WRAPPED: steps 1 to 3 done") || res.Usage.ToolCalls != 3 {
				t.Fatalf("--wrap-up: exit %d %+v\nstderr %s", r.code, res, r.stderr)
			}
			t.Logf("runagent --max-turns 3 --wrap-up --json: %s", r.stdout)
			if n := len(res.Attempts); n != 2 || res.Attempts[1].Kind != "wrap-up" || res.Attempts[1].Ended != "answer" {
				t.Errorf("attempts: %+v", res.Attempts)
			}
			r = runagent(t, env, t.TempDir(), append(a.args, "-l", "2", "--max-turns", "3", "--wrap-up", steps)...)
			if r.code != 3 || !strings.HasPrefix(r.stdout, "WRAPPED: steps 1 to 3 done") || !strings.Contains(r.stderr, "runagent: stopped at --max-turns 3") {
				t.Errorf("--wrap-up without --json: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
			}

			fl.rewrite[agentrun.WrapUpPrompt] = a.structured(`{"done":"steps 1-3","left":"steps 4-8"}`)
			r = runagent(t, env, t.TempDir(), append(a.args, "-l", "2", "--max-turns", "3", "--wrap-up", "--schema", schema, steps)...)
			if r.code != 3 || r.stdout != `{"done":"steps 1-3","left":"steps 4-8"}`+"\n" {
				t.Errorf("--wrap-up --schema: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// A stall is a limit too: with --wrap-up the stalled session is resumed
// for its report, printed, and the run exits 124 as a stall does; with
// --retry-stalls it is retried instead.
func TestStallWrapUp(t *testing.T) {
	need(t)
	for _, a := range loopAgents {
		t.Run(a.name, func(t *testing.T) {
			fl := newFlaky(t, a.fake(t))
			fl.rewrite[agentrun.WrapUpPrompt] = "SAY WRAPPED after the stall"
			env := a.env(t, fl.server)
			// 5 s: a loaded machine has taken 2 s to start claude.
			r := runagent(t, env, t.TempDir(), append(a.args, "-l", "1", "--idle-timeout", "5s", "--wrap-up", "STALL 60")...)
			if r.code != 124 || r.stdout != "WRAPPED after the stall\n" || !strings.Contains(r.stderr, "runagent: stalled: no output for 5s; the answer is "+a.name+"'s report") {
				t.Errorf("--wrap-up: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
			}
			delete(fl.rewrite, agentrun.WrapUpPrompt)
			fl.rewrite[strings.SplitN(agentrun.ContinuePrompt, " (", 2)[0]] = "SAY went on after the stall"
			r = runagent(t, append(env, fastRetry), t.TempDir(), append(a.args, "-l", "1", "--idle-timeout", "5s", "--retry", "1", "--retry-stalls", "--json", "STALL 60")...)
			res := parseLoop(t, r)
			if r.code != 0 || len(res.Attempts) != 2 || res.Attempts[0].Ended != "stalled" || !strings.HasPrefix(res.Text, "went on after the stall") {
				t.Errorf("--retry-stalls: exit %d %+v\nstderr %s", r.code, res, r.stderr)
			}
		})
	}
}

// checkEvents holds an --events file to the agent-host protocol.
func checkEvents(t *testing.T, events string) {
	t.Helper()
	check := exec.Command(filepath.Join(filepath.Dir(runagentBin), "ndjson"), "check", "--protocol", "agent-host", "--strict", "--json")
	f, err := os.Open(events)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	check.Stdin = f
	if out, err := check.CombinedOutput(); err != nil || !strings.Contains(string(out), `"bad":0,"problems":{}`) {
		t.Errorf("ndjson check of the events: %v %s", err, out)
	}
}

// A wait the API asks for is honoured when the agent passes it on: Claude
// Code puts a 429's message in its result ("Please try again in 1.5s");
// Codex passes on neither the message nor a Retry-After, so its backoff
// is runagent's own.
func TestRetryAfter(t *testing.T) {
	need(t)
	a := loopAgents[0]
	fl := newFlaky(t, a.fake(t), 429)
	fl.retryAfter, fl.message = "1", ". Please try again in 1.5s."
	r := runagent(t, append(a.env(t, fl.server), fastRetry), t.TempDir(), append(a.args, "-l", "1", "--retry", "1", "--json", "SAY hi")...)
	res := parseLoop(t, r)
	if r.code != 0 || len(res.Attempts) != 2 || res.Attempts[0].Fault != "HTTP 429" || res.Attempts[1].WaitedMs != 1500 {
		t.Fatalf("exit %d %+v", r.code, res.Attempts)
	}
}

// --max-tool-calls stops either agent as its N-th tool call completes.
func TestMaxToolCalls(t *testing.T) {
	need(t)
	for _, a := range loopAgents {
		t.Run(a.name, func(t *testing.T) {
			steps := "STEPS:\n"
			for i := 1; i <= 8; i++ {
				steps += a.shell(fmt.Sprintf("echo step %d >> log.txt", i)) + "\n"
			}
			work := t.TempDir()
			r := runagent(t, a.env(t, a.fake(t)), work, append(a.args, "-l", "2", "--max-tool-calls", "2", "--json", steps)...)
			res := parseLoop(t, r)
			b, _ := os.ReadFile(filepath.Join(work, "log.txt"))
			if r.code != 3 || res.Limit != "--max-tool-calls" || res.Usage == nil || res.Usage.ToolCalls != 2 || string(b) != "step 1\nstep 2\n" ||
				!strings.Contains(res.Reason, "stopped at --max-tool-calls 2") {
				t.Fatalf("exit %d %+v %+v, log %q\nstderr %s", r.code, res, res.Usage, b, r.stderr)
			}
		})
	}
}
