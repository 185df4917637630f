package peers

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
	"github.com/agentry/agentry/lib/protocol"
	"github.com/agentry/agentry/tests/acpclient"
)

// claudePolicy is the policy: pushes denied however the command
// line wraps them, npm test allowed, .env never written.
const claudePolicy = `[commands]
deny = ["git push*"]
allow = ["npm test"]

[paths]
deny_write = ["**/.env"]
`

// pushTripwire puts in bin a git that leaves a mark in marks/git-ran when
// it is asked to push, and is the real git otherwise (Claude Code runs
// git itself, to read the working copy).
func pushTripwire(t *testing.T, bin, marks string) {
	t.Helper()
	realGit := "false"
	if p, err := exec.LookPath("git"); err == nil {
		realGit = "exec '" + p + "' \"$@\""
	}
	body := "#!/bin/sh\nfor a; do [ \"$a\" = push ] && { echo \"$@\" >> '" + marks + "/git-ran'; exit 0; }; done\n" + realGit + "\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// A policy on a claude run (params.policy): every call is checked,
// through whatever wrapper the command line puts around it, and a denied
// one never runs; the model is told the rule; each denial is a denied
// event naming it. What the policy allows runs as the level lets it.
func TestClaudePolicy(t *testing.T) {
	need(t)
	api := fakeAnthropic(t)
	marks, bin, work := t.TempDir(), t.TempDir(), t.TempDir()
	pushTripwire(t, bin, marks)
	// An npm that leaves a mark too.
	if err := os.WriteFile(filepath.Join(bin, "npm"), []byte("#!/bin/sh\necho \"$@\" >> '"+marks+"/npm-ran'\necho npm-tests-passed\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(work, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", filepath.Join(work, "link")); err != nil {
		t.Fatal(err)
	}
	w := startClaudeWire(t, api, "PATH="+bin+":"+os.Getenv("PATH"))

	denied := []string{`git -C . push origin x`, `true && git push`, `sh -c 'git push'`, `env A=1 git push`, `find . -exec git push \;`}
	var steps []string
	for _, c := range append(denied, "npm test") {
		in, _ := json.Marshal(map[string]string{"command": c, "description": "run " + c})
		steps = append(steps, "CALL Bash "+string(in))
	}
	envPath := filepath.Join(work, "link", ".env")
	in, _ := json.Marshal(map[string]string{"file_path": envPath, "content": "SECRET=1\n"})
	steps = append(steps, "CALL Write "+string(in))
	w.send(&protocol.RunTurn{ID: "t1", RunID: "r1", Params: protocol.ChatRunParams{ChatID: "c1", Workspace: work, Policy: claudePolicy,
		Prompt: "STEPS:\n" + strings.Join(steps, "\n")}})
	evs := w.runDone("r1")

	if b, err := os.ReadFile(filepath.Join(marks, "git-ran")); err == nil {
		t.Errorf("a denied git push ran: %q", b)
	}
	if _, err := os.Stat(filepath.Join(marks, "npm-ran")); err != nil {
		t.Errorf("npm test did not run: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(work, "sub", ".env")); err == nil {
		t.Error("the Write through the symlink made sub/.env")
	}

	// Each denial is an event with its rule, and the model's tool result
	// for the call is an error.
	calls := map[string]string{} // tool call id → its command or file
	for _, e := range evs {
		if e.Type == protocol.EvToolCall {
			var in struct{ Command, File_path string }
			_ = json.Unmarshal(e.Input, &in)
			calls[e.ToolCallID] = in.Command + in.File_path
		}
	}
	deniedCalls := map[string]string{}
	for _, e := range evs {
		if e.Type != protocol.EvDenied {
			continue
		}
		if e.Denial == nil || e.Denial.Verdict != "deny" {
			t.Errorf("denied event %+v", e)
			continue
		}
		deniedCalls[calls[e.ToolCallID]] = e.Denial.Rule
	}
	for _, c := range denied {
		if rule := deniedCalls[c]; !strings.Contains(rule, "git push*") {
			t.Errorf("%s: denied by %q, want the git push* rule; denials %v", c, rule, deniedCalls)
		}
	}
	if rule := deniedCalls[envPath]; !strings.Contains(rule, ".env") {
		t.Errorf("the Write of %s: denied by %q, want the .env rule", envPath, rule)
	}
	if _, ok := deniedCalls["npm test"]; ok {
		t.Error("npm test was denied")
	}
	rs := toolResults(api)
	if len(rs) != len(steps) {
		t.Fatalf("%d tool results, want %d: %v", len(rs), len(steps), rs)
	}
	for i, r := range rs {
		isNpm := i == len(denied)
		if r.Get("is_error").Bool() == isNpm {
			t.Errorf("step %d (%s): tool result %s", i, steps[i], r.Raw)
		}
		if isNpm && !strings.Contains(resultText(r), "npm-tests-passed") {
			t.Errorf("npm test's output: %s", r.Raw)
		}
		if !isNpm && !strings.Contains(resultText(r), "policy") && !strings.Contains(resultText(r), "rule") {
			t.Errorf("step %d: the model is not told a rule denied it: %s", i, resultText(r))
		}
	}
}

// What Claude Code never asks for by itself — a Read, a Grep, a
// read-only command such as ls — is checked too: the backend's hook has
// the CLI ask for every call.
func TestClaudePolicyReads(t *testing.T) {
	need(t)
	api := fakeAnthropic(t)
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, ".env"), []byte("SECRET=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// (A read of a directory holding the .env — a Glob or Grep of the
	// working copy — is denied too, agentry-policy(5) says; the Glob that
	// runs is of a directory without one.)
	if err := os.MkdirAll(filepath.Join(work, "src"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "src", "a.go"), []byte("package a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w := startClaudeWire(t, api)
	policy := "[commands]\ndeny = [\"ls*\"]\n\n[paths]\ndeny_read = [\"**/.env\"]\n"
	steps := []string{
		`CALL Read {"file_path":"` + filepath.Join(work, ".env") + `"}`,
		`CALL Bash {"command":"ls -a","description":"list"}`,
		`CALL Glob {"pattern":"*.go","path":"` + filepath.Join(work, "src") + `"}`,
	}
	w.send(&protocol.RunTurn{ID: "t1", RunID: "r1", Params: protocol.ChatRunParams{ChatID: "c1", Workspace: work, Policy: policy,
		Prompt: "STEPS:\n" + strings.Join(steps, "\n")}})
	evs := w.runDone("r1")
	var denials []string
	for _, e := range evs {
		if e.Type == protocol.EvDenied && e.Denial != nil {
			denials = append(denials, e.Name+": "+e.Denial.Rule)
		}
	}
	if len(denials) != 2 || !strings.Contains(denials[0], "Read: ") || !strings.Contains(denials[0], ".env") ||
		!strings.Contains(denials[1], "Bash: ") || !strings.Contains(denials[1], "ls*") {
		t.Errorf("denials %q, want the Read of .env and ls", denials)
	}
	rs := toolResults(api)
	if len(rs) != 3 || strings.Contains(resultText(rs[0]), "SECRET") || !rs[0].Get("is_error").Bool() || !rs[1].Get("is_error").Bool() || rs[2].Get("is_error").Bool() {
		t.Errorf("tool results %v", rs)
	}
}

// A one-shot under agent-host's --policy is checked as a turn is: claude
// -p cannot ask, so the backend runs it as one streamed turn.
func TestClaudePolicyOneShot(t *testing.T) {
	need(t)
	api := fakeAnthropic(t)
	marks, bin, work := t.TempDir(), t.TempDir(), t.TempDir()
	pushTripwire(t, bin, marks)
	policy := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(policy, []byte(claudePolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	w := startClaudeWireArgs(t, api, []string{"--policy", policy}, "PATH="+bin+":"+os.Getenv("PATH"))
	w.send(&protocol.OneShot{ID: "o1", RunID: "r1", Params: protocol.OneShotParams{Workspace: work, SystemPrompt: "You are terse.",
		Prompt: `CALL Bash {"command":"env A=1 git push","description":"push"}`}})
	evs := w.runDone("r1")
	if b, err := os.ReadFile(filepath.Join(marks, "git-ran")); err == nil {
		t.Errorf("a one-shot's denied git push ran: %q", b)
	}
	var denied []string
	for _, e := range evs {
		if e.Type == protocol.EvDenied && e.Denial != nil {
			denied = append(denied, e.Denial.Rule)
		}
	}
	if len(denied) != 1 || !strings.Contains(denied[0], "git push*") {
		t.Errorf("denials %q", denied)
	}
	if l := last(evs); l.Type != protocol.EvCompleted || !strings.HasPrefix(l.Text, "TOOL_RESULT(True)") {
		t.Errorf("ended with %+v", l)
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	if !strings.Contains(api.bodies[0], "You are terse.") {
		t.Error("the one-shot's system prompt did not reach the model")
	}
}

// Over ACP, under agent-host --policy: a denied call never runs and the
// editor is not asked about it, the model is told the rule, and the first
// prompt runs on the CLI the session started ahead (its hook registered
// whatever the turn), not on another.
func TestClaudePolicyACP(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(pol, []byte("[commands]\ndeny = [\"touch *\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _ := claudeACP(t, "--policy", pol)
	s, work := newACPSession(t, c)
	var before []int
	if !await.Until(20*time.Second, func() bool { before = claudePIDs(c); return len(before) == 1 }) {
		t.Fatalf("no CLI under agent-host before the first prompt: %v", before)
	}
	tag := c.Send("session/prompt", acpclient.Prompt(s, `CALL Bash {"command":"touch made.txt","description":"touch"}`))
	evs := c.Wait(tag)
	if _, err := os.Stat(filepath.Join(work, "made.txt")); err == nil {
		t.Error("a denied touch ran")
	}
	if got := acpclient.Text(evs); !strings.HasPrefix(got, "TOOL_RESULT(True)") || !strings.Contains(got, `"touch *"`) {
		t.Errorf("the model was told %q", got)
	}
	if asked(evs) {
		t.Error("the editor was asked about a call the policy denies")
	}
	if after := claudePIDs(c); len(after) != 1 || after[0] != before[0] {
		t.Errorf("the first prompt started another CLI: %v, then %v", before, after)
	}
	c.End()
}
