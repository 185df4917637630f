package peers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A job environment with GH_TOKEN: with --clean-env the agent's shell does
// not see it, and its value is nowhere in the answer, --events, --json or
// --summary; with --redact GH_TOKEN the agent sees it and everything the
// run says has [redacted:GH_TOKEN] in its place.
func TestCleanEnv(t *testing.T) {
	need(t)
	const token = "ghp_JOBSECRET0123456789"
	for _, a := range loopAgents {
		t.Run(a.name, func(t *testing.T) {
			api := a.fake(t)
			env := append(a.env(t, api), "GH_TOKEN="+token, "KEEP_ME=visible-value-42")
			dir := t.TempDir()
			events, summary := filepath.Join(dir, "events.ndjson"), filepath.Join(dir, "summary.md")
			r := runagent(t, env, t.TempDir(), append(a.args, "-l", "2", "--clean-env", "--env-allow", "KEEP_*", "--json", "--events", events, "--summary", summary,
				a.shell("env; echo GH=$GH_TOKEN"))...)
			res := parseLoop(t, r)
			ev, _ := os.ReadFile(events)
			sum, _ := os.ReadFile(summary)
			if r.code != 0 || !strings.Contains(res.Text, "PATH=") || !strings.Contains(res.Text, "KEEP_ME=visible-value-42") || !strings.Contains(res.Text, "GH=") {
				t.Fatalf("exit %d: %s\nstderr %s", r.code, res.Text, r.stderr)
			}
			for what, text := range map[string]string{"--json": r.stdout, "--events": string(ev), "--summary": string(sum), "stderr": r.stderr} {
				if strings.Contains(text, token) {
					t.Errorf("the token is in %s:\n%s", what, text)
				}
			}
			if strings.Contains(res.Text, "GH_TOKEN=") {
				t.Errorf("the agent's shell saw GH_TOKEN:\n%s", res.Text)
			}

			r = runagent(t, env, t.TempDir(), append(a.args, "-l", "2", "--redact", "GH_TOKEN", "--json", "--events", events, a.shell("echo GH=$GH_TOKEN"))...)
			res = parseLoop(t, r)
			ev, _ = os.ReadFile(events)
			if r.code != 0 || !strings.Contains(res.Text, "GH=[redacted:GH_TOKEN]") || strings.Contains(r.stdout+string(ev), token) ||
				!strings.Contains(string(ev), "[redacted:GH_TOKEN]") {
				t.Errorf("--redact: exit %d %s\nevents %s", r.code, r.stdout, ev)
			}
		})
	}
}

// --summary renders the run in Markdown: the outcome, the figures, the
// commands the agent ran with their exit codes.
func TestSummary(t *testing.T) {
	need(t)
	for _, a := range loopAgents {
		t.Run(a.name, func(t *testing.T) {
			api := a.fake(t)
			summary := filepath.Join(t.TempDir(), "summary.md")
			steps := "STEPS:\n" + a.shell("echo one") + "\n" + a.shell("exit 3") + "\n"
			r := runagent(t, a.env(t, api), t.TempDir(), append(a.args, "-l", "2", "--summary", summary, steps)...)
			b, _ := os.ReadFile(summary)
			s := string(b)
			if os.Getenv("PEERS_DUMP") != "" {
				t.Logf("%s", s)
			}
			for _, want := range []string{"### runagent: answered\n", "| agent | " + a.name + ", level 2 |", "| attempts | 1 |", "| tool calls | 2 |", "| tokens | ",
				"#### Commands the agent ran", "| `echo one` | 0 |", "| `exit 3` | 3 |"} {
				if r.code != 0 || !strings.Contains(s, want) {
					t.Errorf("exit %d; no %q in\n%s", r.code, want, s)
				}
			}
		})
	}
}

// --price makes codex's cost and budget: the cost from its tokens, and a
// run over the budget stopped at it (exit 3).
func TestPrice(t *testing.T) {
	need(t)
	a := loopAgents[1]
	api := a.fake(t)
	env := a.env(t, api)
	r := runagent(t, env, t.TempDir(), append(a.args, "-l", "1", "--price", "1,2", "--json", "SAY hi")...)
	res := parseLoop(t, r)
	// One request: 20 tokens in, 8 out.
	if want := (20*1.0 + 8*2.0) / 1e6; r.code != 0 || res.Usage == nil || res.Usage.CostUSD == nil || *res.Usage.CostUSD != want {
		t.Fatalf("exit %d, usage %+v, want cost %v", r.code, res.Usage, want)
	}
	r = runagent(t, env, t.TempDir(), append(a.args, "-l", "1", "--price", "1,2", "--max-budget-usd", "0.00001", "--until", "false", "--json", "SAY hi")...)
	res = parseLoop(t, r)
	if r.code != 3 || res.Limit != "--max-budget-usd" || len(res.Attempts) != 1 {
		t.Errorf("over the budget: exit %d %+v", r.code, res)
	}
}
