package peers

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/tests/acpclient"
)

// runagentACP runs runagent --agent acp with the prompt from a file, and
// the agent's command after --.
func runagentACP(t *testing.T, env []string, dir, prompt string, args ...string) result {
	t.Helper()
	f := filepath.Join(t.TempDir(), "prompt")
	if err := os.WriteFile(f, []byte(prompt), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(runagentBin, append([]string{"--agent", "acp", "-f", f}, args...)...)
	cmd.Env, cmd.Dir = env, dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(120 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("runagent %v did not finish in 120s; stderr %s", args, errb.String())
	}
	return result{out.String(), errb.String(), cmd.ProcessState.ExitCode()}
}

// @zed-industries/claude-agent-acp, with the pinned claude behind the
// fake Anthropic API, under runagent --agent acp: the model's Write is a
// permission request agentry answers from the level — rejected at level
// 1 (no file on disk), allowed at level 2 (the file written) — and the
// answer comes back on stdout.
func TestRunagentACPClaudeAgent(t *testing.T) {
	need(t)
	sdk := acpclient.SDK()
	if sdk == "" {
		t.Skip("no ACP adapters in $AGENTRY_PEERS/acp")
	}
	api := fakeAnthropic(t)
	env := append(withoutEnv(claudeEnv(t, api), "IS_SANDBOX"), "CLAUDE_CODE_EXECUTABLE="+claudeBin)
	agent := []string{"--", "node", filepath.Join(sdk, "node_modules/@zed-industries/claude-agent-acp/dist/index.js")}
	allow := []string{"--env-allow", "ANTHROPIC_*,CLAUDE_*,DISABLE_*"}

	work := t.TempDir()
	r := runagentACP(t, env, work, "say PEERS-HELLO", append(append([]string{"-l", "1", "--json"}, allow...), agent...)...)
	if r.code != 0 || !strings.Contains(r.stdout, `"ok":true`) || !strings.Contains(r.stdout, `"agent":"acp"`) {
		t.Fatalf("a plain answer: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}

	target := filepath.Join(work, "made.txt")
	write := `CALL Write {"file_path":"` + target + `","content":"made by the model\n"}`
	r = runagentACP(t, env, work, write, append(append([]string{"-l", "1"}, allow...), agent...)...)
	if _, err := os.Stat(target); err == nil {
		t.Fatalf("level 1: the Write happened; exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	// claude-agent-acp asks: agentry's rejection is what the model sees.
	if r.code != 0 || !strings.Contains(r.stdout, "TOOL_RESULT(True): User refused permission") {
		t.Fatalf("level 1: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}

	r = runagentACP(t, env, work, write, append([]string{"-l", "2"}, agent...)...)
	b, err := os.ReadFile(target)
	if r.code != 0 || err != nil || string(b) != "made by the model\n" {
		t.Fatalf("level 2: exit %d, file %q (%v)\nstdout %s\nstderr %s", r.code, b, err, r.stdout, r.stderr)
	}
}

// SIGTERM to runagent while claude-agent-acp's claude runs a command the
// level allowed: within 3 s no process of the agent's tree survives —
// node, claude, the shell and its sleep.
func TestRunagentACPClaudeAgentSIGTERM(t *testing.T) {
	need(t)
	sdk := acpclient.SDK()
	if sdk == "" {
		t.Skip("no ACP adapters in $AGENTRY_PEERS/acp")
	}
	api := fakeAnthropic(t)
	env := append(withoutEnv(claudeEnv(t, api), "IS_SANDBOX"), "CLAUDE_CODE_EXECUTABLE="+claudeBin)
	f := filepath.Join(t.TempDir(), "prompt")
	os.WriteFile(f, []byte(`CALL Bash {"command":"echo go; (sleep 6932 &) ; sleep 6931; echo done"}`), 0o600)
	cmd := exec.Command(runagentBin, "--agent", "acp", "-l", "2", "-f", f, "--",
		"node", filepath.Join(sdk, "node_modules/@zed-industries/claude-agent-acp/dist/index.js"))
	cmd.Env, cmd.Dir = env, t.TempDir()
	var errb bytes.Buffer
	cmd.Stderr, cmd.Stdout = &errb, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var tree []proc.Info
	sleeping := func() bool {
		tree = tree[:0]
		found := false
		for _, pid := range proc.Descendants(cmd.Process.Pid) {
			if in, err := proc.Stat(pid); err == nil {
				tree = append(tree, in)
				found = found || in.Comm == "sleep"
			}
		}
		return found
	}
	if !await.Until(25*time.Second, sleeping) {
		t.Fatalf("the agent's sleep never ran; its tree %+v; stderr %s", tree, errb.String())
	}
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Fatalf("runagent did not end within 3s of SIGTERM; stderr %s", errb.String())
	}
	// The sleep the shell put in the background is no descendant of
	// runagent's (its parent exited at once): found by its arguments.
	for _, in := range proc.All() {
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(in.PID) + "/cmdline"); bytes.HasPrefix(b, []byte("sleep\x00693")) {
			tree = append(tree, in)
		}
	}
	if left := proc.WaitGone(tree, start.Add(3*time.Second), nil); len(left) > 0 {
		for _, in := range left {
			proc.Signal(in, syscall.SIGKILL)
		}
		t.Fatalf("3s after SIGTERM these of the agent's %d processes still run: %+v", len(tree), left)
	}
	if code := cmd.ProcessState.ExitCode(); code != 143 {
		t.Errorf("exit %d, want 143; stderr %s", code, errb.String())
	}
	t.Logf("%d processes of the agent's tree, all gone in %v", len(tree), time.Since(start))
}

// The fake agent on the official SDK (fakeagent.mjs) under runagent
// --agent acp: level 1 rejects its command (no file), level 2 runs it;
// its $0.40 is over a $0.30 budget (exit 3); its unasked edit at level 1
// trips the wire (exit 4); and SIGTERM mid-turn leaves none of its tree,
// the sleep it started and its terminal's included.
func TestRunagentACPFakeSDK(t *testing.T) {
	need(t)
	p := fakeAgentPeer(t)
	agent := append([]string{"--env-allow", "ACP_SDK", "--"}, p.argv...)

	work := t.TempDir()
	r := runagentACP(t, p.env, work, "RUN", append([]string{"-l", "1", "--json"}, agent...)...)
	if r.code != 0 || !strings.Contains(r.stdout, `"text":"mode default; ran it all"`) || !strings.Contains(r.stdout, `"costUsd":0.4`) {
		t.Fatalf("level 1: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(work, "w")); err == nil {
		t.Fatal("level 1: the command ran")
	}
	r = runagentACP(t, p.env, work, "RUN", append([]string{"-l", "2", "--max-budget-usd", "0.30", "--json"}, agent...)...)
	if r.code != 3 || !strings.Contains(r.stdout, `"limit":"--max-budget-usd"`) {
		t.Fatalf("level 2 over budget: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(work, "w")); err != nil {
		t.Fatal("level 2: the command did not run")
	}
	r = runagentACP(t, p.env, work, "SNEAK", append([]string{"-l", "1", "--json"}, agent...)...)
	if r.code != 4 || !strings.Contains(r.stdout, `"violation":true`) || !strings.Contains(r.stdout, "Write sneaked.txt") {
		t.Fatalf("the tripwire: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}

	f := filepath.Join(t.TempDir(), "prompt")
	os.WriteFile(f, []byte("HOLD"), 0o600)
	cmd := exec.Command(runagentBin, append([]string{"--agent", "acp", "-l", "2", "-f", f}, agent...)...)
	cmd.Env, cmd.Dir = p.env, t.TempDir()
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var tree []proc.Info
	if !await.Until(30*time.Second, p.holding) {
		t.Fatalf("the held command never ran; stderr %s", errb.String())
	}
	for _, pid := range proc.Descendants(cmd.Process.Pid) {
		if in, err := proc.Stat(pid); err == nil {
			tree = append(tree, in)
		}
	}
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Fatalf("runagent did not end within 3s of SIGTERM; stderr %s", errb.String())
	}
	if left := proc.WaitGone(tree, start.Add(3*time.Second), nil); len(left) > 0 || p.holding() {
		t.Fatalf("3s after SIGTERM these of the agent's %d processes still run: %+v (held command: %v)", len(tree), left, p.holding())
	}
	if code := cmd.ProcessState.ExitCode(); code != 143 {
		t.Errorf("exit %d, want 143; stderr %s", code, errb.String())
	}
}
