package tests

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
	"github.com/agentry/agentry/lib/proc"
	"golang.org/x/sys/unix"
)

// fakeACP is the tiny ACP agent runagent's tests run (tests/testdata).
func fakeACP(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	abs, err := filepath.Abs(filepath.Join("testdata", "acpagent.py"))
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// SIGTERM (or SIGHUP) to runagent mid-turn of an ACP agent: within 3 s
// runagent has exited 128+N and no process of the agent's tree survives —
// the agent, the sleep it started in the background, and what a terminal
// agentry ran for it left behind.
func TestRunagentACPSIGTERMLeavesNothing(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(unix.SignalName(sig), func(t *testing.T) { signalACP(t, sig) })
	}
}

func signalACP(t *testing.T, sig syscall.Signal) {
	dir := t.TempDir()
	cmd := exec.Command(filepath.Join(binDir, "runagent"), "--agent", "acp", "-l", "2", "-C", dir, "--json", "--", "python3", fakeACP(t))
	cmd.Stdin = strings.NewReader("RUN sleep 6918 & echo $! > term.pid\nHANG " + dir + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	agent, err := await.PID(filepath.Join(dir, "agent.pid"), 10*time.Second)
	if err != nil {
		t.Fatalf("%v; stderr %s", err, stderr.String())
	}
	sleeper, _ := await.PID(filepath.Join(dir, "sleep.pid"), time.Second)
	term, err := await.PID(filepath.Join(dir, "term.pid"), time.Second)
	if err != nil {
		t.Fatalf("the terminal did not run: %v; stderr %s", err, stderr.String())
	}
	var tree []proc.Info
	for _, pid := range []int{agent, sleeper, term} {
		if in, err := proc.Stat(pid); err == nil {
			tree = append(tree, in)
		}
	}
	if len(tree) < 2 {
		t.Fatalf("the agent's tree is not running: %v; stderr %s", tree, stderr.String())
	}
	start := time.Now()
	cmd.Process.Signal(sig)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Fatalf("runagent did not end within 3s of %v; stderr %s", sig, stderr.String())
	}
	left := proc.WaitGone(tree, start.Add(3*time.Second), nil)
	for _, in := range proc.All() { // the agent's group, whoever is in it now
		if in.PGID == agent && in.State != 'Z' {
			left = append(left, in)
		}
	}
	if len(left) > 0 {
		for _, in := range left {
			proc.Signal(in, syscall.SIGKILL)
		}
		t.Fatalf("3s after %v these of the agent's tree still run: %+v", sig, left)
	}
	if code := cmd.ProcessState.ExitCode(); code != 128+int(sig) {
		t.Errorf("exit %d, want %d; stderr %s", code, 128+int(sig), stderr.String())
	}
	name := unix.SignalName(sig)
	if !strings.Contains(stdout.String(), `"stoppedBy":"`+name+`"`) || !strings.Contains(stderr.String(), "runagent: stopped by "+name) {
		t.Errorf("stdout %s stderr %s", stdout.String(), stderr.String())
	}
}
