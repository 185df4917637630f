package peers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/protocol"
)

// pushes are the ways of running git push a policy's deny "git push*"
// must catch; each is run without a login shell, which would reset PATH
// and so bypass the git wrapper that is first on it.
var pushes = []string{"git -C . push origin x", "true && git push", "sh -c 'git push'", "env A=1 git push", `find . -exec git push \;`}

// policyWork is a working copy with an npm test script, and a directory
// holding a git wrapper that records each run in marker; the wrapper's
// directory goes first on PATH.
func policyWork(t *testing.T) (work, bin, marker string) {
	t.Helper()
	work, bin = t.TempDir(), t.TempDir()
	marker = filepath.Join(t.TempDir(), "git-ran")
	os.WriteFile(filepath.Join(work, "package.json"), []byte(`{"name":"p","version":"1.0.0","scripts":{"test":"echo NPM-TEST-RAN"}}`), 0o644)
	os.WriteFile(filepath.Join(bin, "git"), []byte("#!/bin/sh\necho \"$@\" >> "+marker+"\n"), 0o755)
	return work, bin, marker
}

// shellSteps is a STEPS prompt running each command through codex's
// exec_command, without a login shell.
func shellSteps(cmds ...string) string {
	var b strings.Builder
	b.WriteString("STEPS:\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "CALL exec_command {\"cmd\":%q,\"login\":false}\n", c)
	}
	return b.String()
}

// Under a policy (Turn.AskAll) agent-host's codex backend runs codex at
// its ask level: every command comes to Ask, the level's own too
// (Granted), as its argv; one denied never runs (the
// git wrapper first on PATH records nothing), and the model reads why;
// one allowed runs.
func TestCodexBackendAskAll(t *testing.T) {
	need(t)
	api := fakeOpenAI(t)
	work, bin, marker := policyWork(t)
	b := codexBackendOn(t, api, "PATH="+bin+":"+os.Getenv("PATH"))
	var mu sync.Mutex
	var asks []host.Ask
	turn := &host.Turn{RunID: "r1", AskAll: true, Params: protocol.ChatRunParams{ChatID: "c1", Prompt: shellSteps(append(pushes, "npm test")...), Workspace: work, Level: 2},
		Ask: func(a host.Ask) host.Answer {
			mu.Lock()
			asks = append(asks, a)
			mu.Unlock()
			// The host's policy stands in here: a push is denied.
			if strings.Contains(strings.Join(a.Call.Argv, " "), "push") {
				return host.Answer{Decision: protocol.DecisionDeny, Message: `denied by commands.deny "git push*" (policy.toml:2)`, By: "policy"}
			}
			return host.Answer{Decision: protocol.DecisionAllow, By: "policy"}
		}}
	evs := runCodexTurn(t, b, turn)
	if len(asks) != len(pushes)+1 {
		t.Fatalf("%d calls asked, want %d: %+v", len(asks), len(pushes)+1, asks)
	}
	for i, cmd := range append(pushes, "npm test") {
		c := asks[i].Call
		if len(c.Argv) != 3 || c.Argv[2] != cmd || c.Dir != work || !asks[i].Granted || asks[i].Tool != "command" {
			t.Errorf("call %d: %+v granted %v, want %q", i, c, asks[i].Granted, cmd)
		}
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("a denied git push ran: %q", b)
	}
	outs := toolOutputs(api)
	if len(outs) != len(pushes)+1 || !strings.Contains(outs[len(pushes)], "NPM-TEST-RAN") {
		t.Errorf("tool outputs %q", outs)
	}
	api.mu.Lock()
	told := strings.Count(api.bodies[len(api.bodies)-1], `agentry did not let the command`)
	api.mu.Unlock()
	if told != len(pushes) {
		t.Errorf("the model was told why %d times, want %d", told, len(pushes))
	}
	if !strings.HasPrefix(last(evs).Text, "RESULTS: ") {
		t.Errorf("the turn ended with %q", last(evs).Text)
	}
}

// A file change under a policy: codex's apply_patch comes to Ask with the
// paths it writes, Granted only inside the workspace; denied, nothing is
// written.
func TestCodexBackendAskAllPatch(t *testing.T) {
	need(t)
	api := fakeOpenAI(t)
	work := t.TempDir()
	outside, err := os.MkdirTemp("/var/tmp", "agentry-patch-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	b := codexBackendOn(t, api)
	patch := func(path string) string {
		return fmt.Sprintf(`CALL apply_patch {"input":"*** Begin Patch\n*** Add File: %s\n+SECRET=1\n*** End Patch\n"}`, path)
	}
	var asks []host.Ask
	turn := &host.Turn{RunID: "r1", AskAll: true, Params: protocol.ChatRunParams{ChatID: "c1", Workspace: work, Level: 2,
		Prompt: "STEPS:\n" + patch("sub/.env") + "\n" + patch(filepath.Join(outside, "x.txt")) + "\n"},
		Ask: func(a host.Ask) host.Answer {
			asks = append(asks, a)
			return host.Answer{Decision: protocol.DecisionDeny, Message: `denied by paths.deny-write "**/.env"`, By: "policy"}
		}}
	runCodexTurn(t, b, turn)
	if len(asks) != 2 {
		t.Fatalf("asked %+v", asks)
	}
	if w := asks[0].Call.Writes; asks[0].Tool != "file_change" || len(w) != 1 || w[0] != filepath.Join(work, "sub/.env") || !asks[0].Granted {
		t.Errorf("the patch in the workspace: %+v granted %v", asks[0].Call, asks[0].Granted)
	}
	if w := asks[1].Call.Writes; len(w) != 1 || w[0] != filepath.Join(outside, "x.txt") || asks[1].Granted {
		t.Errorf("the patch outside: %+v granted %v", asks[1].Call, asks[1].Granted)
	}
	if _, err := os.Stat(filepath.Join(work, "sub/.env")); err == nil {
		t.Error("a denied patch wrote sub/.env")
	}
	if outs := toolOutputs(api); len(outs) != 2 || !strings.Contains(outs[0], "rejected") {
		t.Errorf("tool outputs %q", outs)
	}
}

// issuePolicy is the issue's policy, as a run's params.policy.
const issuePolicy = `[commands]
allow = ["npm test"]
deny = ["git push*", "rm -rf *"]
`

// A policy through agent-host protocol v1 on codex: every disguise of git
// push is denied and never runs (the git wrapper first on PATH records
// nothing), each with a denied event naming the rule, and the model reads
// the rule; npm test runs. Nobody is asked: the run does not ask.
func TestHostCodexPolicy(t *testing.T) {
	need(t)
	api := fakeOpenAI(t)
	work, bin, marker := policyWork(t)
	c := codexHostAt(t, api, 2, "PATH="+bin+":"+os.Getenv("PATH"))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r, err := c.RunTurn(ctx, "r1", protocol.ChatRunParams{ChatID: "c1", Workspace: work, Level: 2, Policy: issuePolicy,
		Prompt: shellSteps(append(pushes, "npm test")...)})
	if err != nil {
		t.Fatal(err)
	}
	evs, done := collect(t, r)
	if done.StopReason != protocol.StopCompleted {
		t.Fatalf("ended %s: %+v", done.StopReason, last(evs))
	}
	var denials []protocol.AgentEvent
	for _, ev := range evs {
		if ev.Type == protocol.EvDenied {
			denials = append(denials, ev)
		}
	}
	if len(denials) != len(pushes) {
		t.Errorf("%d denied events, want %d: %+v", len(denials), len(pushes), denials)
	}
	for _, d := range denials {
		if d.Denial == nil || d.Denial.Rule != `commands.deny "git push*" (params.policy:3)` || d.Denial.Verdict != "deny" || !strings.HasPrefix(d.Denial.Match, "git push") || d.Name != "command" {
			t.Errorf("denied event %+v %+v", d, d.Denial)
		}
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("a denied git push ran: %q", b)
	}
	outs := toolOutputs(api)
	if len(outs) != len(pushes)+1 || !strings.Contains(outs[len(pushes)], "NPM-TEST-RAN") {
		t.Errorf("tool outputs %q", outs)
	}
	api.mu.Lock()
	told := strings.Count(api.bodies[len(api.bodies)-1], `git push*`)
	api.mu.Unlock()
	if told != len(pushes) {
		t.Errorf("the model read the rule %d times, want %d", told, len(pushes))
	}
}

// The issue's write rule on codex through protocol v1: an apply_patch of
// sub/.env, sub a symlink in the working copy, is denied (the path read
// through the link), with a denied event naming the rule, and nothing is
// written; a patch of another file in the working copy is applied.
func TestHostCodexPolicyWrites(t *testing.T) {
	need(t)
	api := fakeOpenAI(t)
	work := t.TempDir()
	real := filepath.Join(work, "real")
	os.Mkdir(real, 0o755)
	if err := os.Symlink("real", filepath.Join(work, "sub")); err != nil {
		t.Fatal(err)
	}
	c := codexHostAt(t, api, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	patch := func(path string) string {
		return fmt.Sprintf(`CALL apply_patch {"input":"*** Begin Patch\n*** Add File: %s\n+SECRET=1\n*** End Patch\n"}`, path)
	}
	r, err := c.RunTurn(ctx, "r1", protocol.ChatRunParams{ChatID: "c1", Workspace: work, Level: 2,
		Policy: "[paths]\ndeny_write = [\"**/.env\"]\n", Prompt: "STEPS:\n" + patch("sub/.env") + "\n" + patch("notes.txt") + "\n"})
	if err != nil {
		t.Fatal(err)
	}
	evs, done := collect(t, r)
	if done.StopReason != protocol.StopCompleted {
		t.Fatalf("ended %s: %+v", done.StopReason, last(evs))
	}
	var denials []*protocol.Denial
	for _, ev := range evs {
		if ev.Type == protocol.EvDenied {
			denials = append(denials, ev.Denial)
		}
	}
	if len(denials) != 1 || denials[0].Rule != `paths.deny_write "**/.env" (params.policy:2)` {
		t.Errorf("denials %+v", denials)
	}
	if _, err := os.Stat(filepath.Join(real, ".env")); err == nil {
		t.Error("a denied patch wrote real/.env")
	}
	if b, err := os.ReadFile(filepath.Join(work, "notes.txt")); err != nil || string(b) != "SECRET=1\n" {
		t.Errorf("the allowed patch: %q %v", b, err)
	}
}
