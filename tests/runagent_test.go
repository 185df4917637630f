package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
)

// fakeCodexRun is runagent over the fake CLI as codex at level 1, with
// args and the fake's env, its files in dir; not started.
func fakeCodexRun(t *testing.T, dir string, args []string, env ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(dir, "fakeagent")
	if err := os.Symlink(self, fake); err != nil {
		t.Fatal(err)
	}
	userHome := filepath.Join(dir, "codexhome")
	os.Mkdir(userHome, 0o700)
	os.WriteFile(filepath.Join(userHome, "auth.json"), []byte(`{}`), 0o600)
	cmd := exec.Command(filepath.Join(binDir, "runagent"), append([]string{"--agent", "codex", "-l", "1"}, args...)...)
	cmd.Env = append(append(os.Environ(), "RUNAGENT_CODEX_BIN="+fake, "CODEX_HOME="+userHome, "RUNAGENT_ENV_ALLOW=FAKE_*",
		"XDG_STATE_HOME="+filepath.Join(dir, "state")), env...)
	return cmd
}

// exitWithin waits 10s at most for runagent, signalled (after says
// how), to exit, and returns its exit status.
func exitWithin(t *testing.T, cmd *exec.Cmd, after string) int {
	t.Helper()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("runagent did not end within 10s of %s", after)
	}
	return cmd.ProcessState.ExitCode()
}

// SIGTERM to runagent goes to the agent's process group; runagent waits
// for the agent, names the signal, removes the run's CODEX_HOME (a fresh
// one: the run has an MCP server of its own) and exits 143. The prompt was never on the agent's command line.
func TestRunagentForwardsSIGTERM(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	rec := filepath.Join(dir, "rec")
	cmd := fakeCodexRun(t, dir, []string{"--pid-file", pidFile, "--tools-url", "http://127.0.0.1:9/mcp"}, "FAKE_HANG=1", "FAKE_RECORD="+rec)
	cmd.Stdin = strings.NewReader("TOP-SECRET-PROMPT")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// The pid file appears the moment the agent starts; the record, once
	// it has read its prompt.
	pid, err := await.PID(pidFile, 10*time.Second)
	if err == nil {
		_, err = await.Match(rec, regexp.MustCompile("codex_home_files"), 10*time.Second)
	}
	if err != nil {
		t.Fatalf("%v; stderr %s", err, stderr.String())
	}
	cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if len(cmdline) == 0 || bytes.Contains(cmdline, []byte("TOP-SECRET")) {
		t.Errorf("agent cmdline %q", cmdline)
	}
	r, _ := os.ReadFile(rec)
	var codexHome string
	for _, l := range strings.Split(string(r), "\n") {
		if v, ok := strings.CutPrefix(l, "codex_home: "); ok {
			codexHome = v
		}
	}
	if _, err := os.Stat(codexHome); err != nil {
		t.Fatalf("CODEX_HOME %q missing during the run: %v", codexHome, err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code := exitWithin(t, cmd, "SIGTERM"); code != 143 {
		t.Errorf("exit %d, want 143; stderr %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "runagent: stopped by SIGTERM; codex was ended with everything it started\n") {
		t.Errorf("stderr %q", stderr.String())
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
		if st, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); !bytes.Contains(st, []byte(") Z ")) {
			t.Errorf("agent %d still running", pid)
		}
	}
	if _, err := os.Stat(codexHome); err == nil {
		t.Errorf("the run's CODEX_HOME %s was left behind", codexHome)
	}
}

// An agent ended by a signal that was not runagent's: a failure that
// names the signal, exit 1.
func TestRunagentAgentKilled(t *testing.T) {
	dir := t.TempDir()
	self, _ := os.Executable()
	fake := filepath.Join(dir, "fakeagent")
	if err := os.Symlink(self, fake); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dir, "pid")
	cmd := exec.Command(filepath.Join(binDir, "runagent"), "-l", "2", "--pid-file", pidFile, "hello")
	cmd.Env = append(os.Environ(), "RUNAGENT_CLAUDE_BIN="+fake, "FAKE_HANG=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	pid, err := await.PID(pidFile, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("runagent did not end after its agent was killed")
	}
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(stderr.String(), "runagent: error: claude was ended by SIGKILL") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

// A second SIGTERM while runagent waits for the agent to stop (this one
// takes SIGTERM for nothing) ends runagent at once, and every process it
// still has first: the agent, and a sleep it detached into a session of
// its own.
func TestRunagentSecondSignalEndsItsTree(t *testing.T) {
	dir := t.TempDir()
	pidFile, held := filepath.Join(dir, "pid"), filepath.Join(dir, "held")
	cmd := fakeCodexRun(t, dir, []string{"--pid-file", pidFile}, "FAKE_HANG=1", "FAKE_DETACH="+dir, "FAKE_HOLD_TERM="+held)
	cmd.Stdin = strings.NewReader("hi")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	agent, err := await.PID(pidFile, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(agent, syscall.SIGKILL)
	detached, err := await.PID(filepath.Join(dir, "detached.pid"), 10*time.Second)
	if err != nil {
		t.Fatalf("%v; stderr %s", err, stderr.String())
	}
	defer syscall.Kill(detached, syscall.SIGKILL)
	cmd.Process.Signal(syscall.SIGTERM)
	if _, err := await.Match(held, regexp.MustCompile("SIGTERM"), 10*time.Second); err != nil {
		t.Fatalf("the agent never got the first SIGTERM: %v", err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code := exitWithin(t, cmd, "a second SIGTERM"); code != 143 {
		t.Errorf("exit %d, want 143; stderr %s", code, stderr.String())
	}
	for _, pid := range []int{agent, detached} {
		if alive(pid) {
			t.Errorf("process %d outlived runagent", pid)
		}
	}
}
