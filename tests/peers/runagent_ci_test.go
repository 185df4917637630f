package peers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/agentrun"
)

// runagent(1)'s CI example as a job runs it, with GH_TOKEN and
// OPENAI_API_KEY in the job's environment: a 529 on the first call, a
// check that fails once and prints the token. The run answers after a
// retry and a second try; the token reaches neither the model (the
// check's output handed back is redacted) nor anything the run writes;
// the summary is appended, private.
func TestCIJob(t *testing.T) {
	need(t)
	const token, key = "ghp_CIJOBTOKEN0123456789", "sk-jobkey-0123456789abcdef"
	for _, a := range loopAgents {
		t.Run(a.name, func(t *testing.T) {
			fl := newFlaky(t, a.fake(t), 529)
			head, _, _ := strings.Cut(agentrun.UntilPrompt, "%s")
			fl.rewrite[head] = a.shell("touch done.txt") + " "
			dir := t.TempDir()
			summary, events := filepath.Join(dir, "step-summary.md"), filepath.Join(dir, "events.ndjson")
			env := append(a.env(t, fl.server), fastRetry, "GH_TOKEN="+token, "OPENAI_API_KEY="+key, "GOFLAGS=-mod=mod")
			args := append(a.args, "-l", "2", "-C", ".", "--retry", "3", "--max-turns", "60", "--wrap-up",
				"--until", "echo token=$GH_TOKEN; test -f done.txt", "--attempts", "3",
				"--clean-env", "--env-allow", "GO*", "--summary", summary, "--json", "--events", events, "SAY working on it")
			r := runagent(t, env, t.TempDir(), args...)
			res := parseLoop(t, r)
			if r.code != 0 || !res.OK || len(res.Attempts) != 3 || res.Attempts[0].Fault != "HTTP 529" || res.Attempts[2].Kind != "until" {
				t.Fatalf("exit %d %+v\nstderr %s", r.code, res, r.stderr)
			}
			if tail := res.Attempts[1].Check.Tail; tail != "token=[redacted:GH_TOKEN]" {
				t.Errorf("the check's tail: %q", tail)
			}
			ev, _ := os.ReadFile(events)
			sum, _ := os.ReadFile(summary)
			st, err := os.Stat(summary)
			if err != nil || st.Mode().Perm() != 0o600 || !strings.HasPrefix(string(sum), "### runagent: answered") {
				t.Errorf("summary: %v %v\n%s", err, st.Mode(), sum)
			}
			fl.mu.Lock()
			bodies := strings.Join(fl.seen, "\n")
			fl.mu.Unlock()
			for what, text := range map[string]string{"--json": r.stdout, "--events": string(ev), "--summary": string(sum), "stderr": r.stderr, "the model's requests": bodies} {
				if strings.Contains(text, token) {
					t.Errorf("the token is in %s", what)
				}
				if a.name == "claude" && strings.Contains(text, key) {
					t.Errorf("OPENAI_API_KEY, dropped for claude, is in %s", what)
				}
			}
			if !strings.Contains(bodies, "[redacted:GH_TOKEN]") {
				t.Errorf("the check's output was not handed back to the model")
			}
		})
	}
}

// An API error whose message holds a value the clean environment dropped
// (an API that echoes what it was sent): the reason on standard error,
// --events and --summary have it redacted, and the 401 is not retried.
func TestSecretInAPIError(t *testing.T) {
	need(t)
	const token = "ghp_ECHOEDTOKEN0123456789"
	for _, a := range loopAgents {
		t.Run(a.name, func(t *testing.T) {
			fl := newFlaky(t, a.fake(t), 401, 401)
			fl.message = ": bad credential " + token
			dir := t.TempDir()
			summary, events := filepath.Join(dir, "summary.md"), filepath.Join(dir, "events.ndjson")
			env := append(a.env(t, fl.server), fastRetry, "GH_TOKEN="+token)
			r := runagent(t, env, t.TempDir(), append(a.args, "-l", "2", "--clean-env", "--retry", "2", "--summary", summary, "--events", events, "SAY hi")...)
			ev, _ := os.ReadFile(events)
			sum, _ := os.ReadFile(summary)
			if r.code != 1 || fl.count() != 1 || !strings.Contains(r.stderr, "[redacted:GH_TOKEN]") {
				t.Errorf("exit %d, %d requests\nstderr %s", r.code, fl.count(), r.stderr)
			}
			for what, text := range map[string]string{"stderr": r.stderr, "--events": string(ev), "--summary": string(sum)} {
				if strings.Contains(text, token) {
					t.Errorf("the token is in %s:\n%s", what, text)
				}
			}
		})
	}
}
