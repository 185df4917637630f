package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
)

// A signal ends ndjson with 128+N, after the lines it had already passed on;
// the read it was blocked in does not hold it up.
func TestNdjsonSignalExit(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(filepath.Join(binDir, "ndjson"), "where", "a==1")
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				// The line coming out proves the program is running and
				// its handlers are installed.
				if _, err := stdin.Write([]byte("{\"a\":1}\n{\"a\":2}\n")); err != nil {
					done <- err
					return
				}
				line, err := bufio.NewReader(stdout).ReadString('\n')
				if err == nil && line != "{\"a\":1}\n" {
					t.Errorf("got %q", line)
				}
				done <- err
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Fatal("no output within 10s")
			}
			signalAndWait(t, cmd, sig)
			if got, want := cmd.ProcessState.ExitCode(), 128+int(sig); got != want {
				t.Errorf("exit %d, want %d; stderr %q", got, want, stderr.String())
			}
			if !strings.Contains(stderr.String(), "ndjson: error: interrupted by "+map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[sig]) {
				t.Errorf("stderr %q", stderr.String())
			}
		})
	}
}

// Ctrl-C during svc run stops the command's whole tree and exits 130
// with "interrupted".
func TestSvcRunInterrupt(t *testing.T) {
	cmd := svcIn(t.TempDir())("run", "--", "sleep 4701 & echo started; sleep 4702")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "started\n" {
		t.Fatalf("%q %v", line, err)
	}
	signalAndWait(t, cmd, syscall.SIGINT)
	if code := cmd.ProcessState.ExitCode(); code != 130 || !strings.Contains(stderr.String(), "svc: interrupted") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
	if left := liveProcs(regexp.MustCompile(`^sleep 470[12]$`)); len(left) > 0 {
		t.Errorf("sleeps left behind: %v", left)
	}
}

// Ctrl-C during svc wait ends the wait at once with 130, and leaves the
// service alone.
func TestSvcWaitInterrupt(t *testing.T) {
	svcCmd := svcIn(t.TempDir())
	if out, err := svcCmd("start", "--name", "slow", "--ready-regex", "NEVER", "--ready-timeout", "1h", "--settle", "0s", "--", "sleep 4711").CombinedOutput(); err != nil {
		t.Fatalf("svc start: %v %s", err, out)
	}
	defer svcCmd("stop", "slow").Run()
	cmd := svcCmd("wait", "--timeout", "0", "slow")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// An inotify descriptor shows the wait has begun, so its handlers are in.
	pollUntil(t, cmd, "svc wait to begin its wait", func() bool { return hasInotify(cmd.Process.Pid) })
	signalAndWait(t, cmd, syscall.SIGINT)
	if code := cmd.ProcessState.ExitCode(); code != 130 || !strings.Contains(stderr.String(), "svc: error: interrupted by SIGINT") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
	if out, _ := svcCmd("ls").Output(); !bytes.Contains(out, []byte("starting")) {
		t.Errorf("the service should still be starting:\n%s", out)
	}
}

// Ctrl-C while svc start waits for readiness ends the wait at once with
// 130, shows the service, and leaves it running.
func TestSvcStartInterrupt(t *testing.T) {
	dir := t.TempDir()
	svcCmd := svcIn(dir)
	defer svcCmd("stop", "slow").Run()
	cmd := svcCmd("start", "--name", "slow", "--ready-regex", "NEVER", "--ready-timeout", "1h", "--settle", "1h", "--", "sleep 4712")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The state naming the service's pid shows start is in its wait.
	pollUntil(t, cmd, "a state with a pid", func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "slow", "state.json"))
		return bytes.Contains(b, []byte(`"pid":`))
	})
	signalAndWait(t, cmd, syscall.SIGINT)
	if code := cmd.ProcessState.ExitCode(); code != 130 || !strings.Contains(stderr.String(), "svc: error: interrupted by SIGINT") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "slow is starting (pid ") || !strings.Contains(stdout.String(), "svc stop slow to stop it") {
		t.Errorf("stdout %q", stdout.String())
	}
	if out, _ := svcCmd("ls").Output(); !bytes.Contains(out, []byte("starting")) {
		t.Errorf("the service should still be starting:\n%s", out)
	}
}

// svcIn returns a maker of svc commands that use home as SVC_HOME.
func svcIn(home string) func(args ...string) *exec.Cmd {
	return func(args ...string) *exec.Cmd {
		c := exec.Command(filepath.Join(binDir, "svc"), args...)
		c.Env = append(c.Environ(), "SVC_HOME="+home)
		return c
	}
}

// pollUntil polls ok, for at most 10s, while cmd runs; past that it kills
// cmd and fails, naming what never came.
func pollUntil(t *testing.T, cmd *exec.Cmd, what string, ok func() bool) {
	t.Helper()
	if !await.Until(10*time.Second, ok) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("no %s within 10s", what)
	}
}

// signalAndWait sends cmd sig and waits for it to end, for at most 5s.
func signalAndWait(t *testing.T, cmd *exec.Cmd, sig syscall.Signal) {
	t.Helper()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s did not end within 5s of %v", strings.Join(cmd.Args, " "), sig)
	}
}

func hasInotify(pid int) bool {
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	for _, fd := range fds {
		if l, _ := os.Readlink(fd); l == "anon_inode:inotify" {
			return true
		}
	}
	return false
}
