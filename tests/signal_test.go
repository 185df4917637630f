package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
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

// Ctrl-C during svc wait, its way out, ends the wait at once with 130
// and no error, says the service runs on, and leaves it alone.
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
	checkQuietInterrupt(t, cmd, stderr.String(), "svc: interrupted; slow runs on (starting): svc stop slow stops it\n")
	if out, _ := svcCmd("ls").Output(); !bytes.Contains(out, []byte("starting")) {
		t.Errorf("the service should still be starting:\n%s", out)
	}
}

// checkQuietInterrupt holds a command ended by Ctrl-C, its way out, to
// status 130, no error, and the note saying what was left running.
func checkQuietInterrupt(t *testing.T, cmd *exec.Cmd, stderr, note string) {
	t.Helper()
	if code := cmd.ProcessState.ExitCode(); code != 130 || !strings.HasSuffix(stderr, note) || strings.Contains(stderr, "error:") {
		t.Errorf("exit %d, stderr %q; want 130 and %q, no error", code, stderr, note)
	}
}

// Ctrl-C while svc start waits for readiness ends the wait at once with
// 130 and no error, shows the service, and leaves it running.
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
	checkQuietInterrupt(t, cmd, stderr.String(), "svc: interrupted; slow runs on (starting): svc stop slow stops it\n")
	if !strings.Contains(stdout.String(), "slow is starting (pid ") {
		t.Errorf("stdout %q", stdout.String())
	}
	if out, _ := svcCmd("ls").Output(); !bytes.Contains(out, []byte("starting")) {
		t.Errorf("the service should still be starting:\n%s", out)
	}
}

// Ctrl-C, the documented way out of svc up --attach, stops the project,
// says nothing is left running, and exits 130 with no error.
func TestSvcUpAttachInterrupt(t *testing.T) {
	home, dir := t.TempDir(), filepath.Join(t.TempDir(), "att")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	toml := "[services.tick]\ncommand = \"echo tick says hello; exec sleep 4721\"\n"
	if err := os.WriteFile(filepath.Join(dir, "svc.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	svcCmd := svcIn(home)
	defer svcCmd("stop", "--all").Run()
	cmd := svcCmd("up", "--attach")
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The service's row shows svc up is attached and following.
	seen := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasSuffix(sc.Text(), "| tick says hello") || sc.Text() == "tick says hello" {
				seen <- true
				break
			}
		}
		io.Copy(io.Discard, out)
	}()
	select {
	case <-seen:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("svc up --attach did not show the service's log within 20s; stderr %q", stderr.String())
	}
	signalAndWait(t, cmd, syscall.SIGINT)
	checkQuietInterrupt(t, cmd, stderr.String(), "svc: interrupted; att is stopped: none of its services is left running\n")
	if left := liveProcs(regexp.MustCompile(`^sleep 4721$`)); len(left) > 0 {
		t.Errorf("left running: %v", left)
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
