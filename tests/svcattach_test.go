package tests

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
)

// attached is svc attach run on a terminal of its own (script(1)), its
// keys given by the test and its screen read as it comes.
type attached struct {
	cmd  *exec.Cmd
	keys io.WriteCloser
	mu   sync.Mutex
	seen bytes.Buffer
	done chan error
}

// pre runs first on the same terminal (stty sets its size).
func attach(t *testing.T, home, pre string, args ...string) *attached {
	t.Helper()
	line := pre + filepath.Join(binDir, "svc") + " attach " + strings.Join(args, " ")
	a := &attached{cmd: exec.Command("script", "-qec", line, "/dev/null"), done: make(chan error, 1)}
	a.cmd.Env = append(a.cmd.Environ(), "SVC_HOME="+home)
	var err error
	if a.keys, err = a.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := a.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	a.cmd.Stderr = a.cmd.Stdout
	if err := a.cmd.Start(); err != nil {
		t.Skipf("script(1) cannot run here: %v", err)
	}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := out.Read(buf)
			a.mu.Lock()
			a.seen.Write(buf[:n])
			a.mu.Unlock()
			if err != nil {
				break
			}
		}
		a.done <- a.cmd.Wait()
	}()
	t.Cleanup(func() {
		if a.cmd.ProcessState == nil {
			_ = a.cmd.Process.Kill()
		}
	})
	return a
}

func (a *attached) screen() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.seen.String()
}

// waitFor waits until the screen, from byte from on, matches re.
func (a *attached) waitFor(t *testing.T, from int, re string) {
	t.Helper()
	rx := regexp.MustCompile(re)
	if !await.Until(15*time.Second, func() bool { s := a.screen(); return len(s) >= from && rx.MatchString(s[from:]) }) {
		t.Fatalf("the screen never showed %q; it shows:\n%q", re, a.screen())
	}
}

func (a *attached) typeKeys(t *testing.T, keys string) {
	t.Helper()
	if _, err := io.WriteString(a.keys, keys); err != nil {
		t.Fatal(err)
	}
}

func (a *attached) exit(t *testing.T) {
	t.Helper()
	select {
	case err := <-a.done:
		if err != nil {
			t.Fatalf("svc attach: %v\n%q", err, a.screen())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("svc attach did not end on its detach keys:\n%q", a.screen())
	}
}

// Two svc attach on a python REPL started with --pty: both see its
// prompt and what a line prints, at the first one's terminal size; the keys are the first typist's until it
// detaches (Ctrl-]), the other's are dropped with a word; then the other
// types and detaches with its own --detach-keys. The REPL runs on, and a
// stop with --stop-keys ends it with no signal.
func TestSvcAttach(t *testing.T) {
	home := filepath.Join(t.TempDir(), "svc")
	svc := svcIn(home)
	t.Cleanup(func() { svc("stop", "--all", "--grace", "1s").Run() })
	run := func(args ...string) string {
		t.Helper()
		out, err := svc(args...).CombinedOutput()
		if err != nil {
			t.Fatalf("svc %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("start", "--pty", "--name", "repl", "--stop-keys", `quit()\n`, "--settle", "100ms", "--", "python3", "-i", "-q")
	if _, err := await.Match(filepath.Join(home, "repl", "log"), regexp.MustCompile(`>>> `), 20*time.Second); err != nil {
		t.Fatalf("no prompt: %v", err)
	}

	a := attach(t, home, "stty rows 40 cols 100; ", "repl")
	a.waitFor(t, 0, `attached to repl; ctrl-\] detaches`)
	a.waitFor(t, 0, `>>> $`)
	b := attach(t, home, "", "--detach-keys", "ctrl-p,ctrl-q", "repl")
	b.waitFor(t, 0, `>>> $`)
	fromA, fromB := len(a.screen()), len(b.screen())
	a.typeKeys(t, "print(6*7)\r")
	a.waitFor(t, fromA, `(?m)^42\r?$`)
	b.waitFor(t, fromB, `(?m)^42\r?$`)
	// The service's terminal took the size of the attach's.
	a.typeKeys(t, "import os; print(os.get_terminal_size())\r")
	a.waitFor(t, fromA, `columns=100, lines=40`)

	fromB = len(b.screen())
	b.typeKeys(t, "print(5*5)\r")
	b.waitFor(t, fromB, `another attach has the keyboard until it detaches`)

	a.typeKeys(t, "\x1d")
	a.exit(t)
	if s := a.screen(); !strings.Contains(s, "detached from repl; it runs on") {
		t.Errorf("no word of the detach: %q", s)
	}

	fromB = len(b.screen())
	b.typeKeys(t, "print(7*8)\r")
	b.waitFor(t, fromB, `(?m)^56\r?$`)
	b.typeKeys(t, "\x10\x11")
	b.exit(t)
	if strings.Contains(b.screen(), "25") {
		t.Errorf("the keys typed without the keyboard reached the service: %q", b.screen())
	}

	if out := run("status", "repl"); !strings.Contains(out, "repl") {
		t.Errorf("status: %q", out)
	}
	c := attach(t, home, "", "repl")
	c.waitFor(t, 0, `>>> $`)
	out := run("stop", "repl")
	if !regexp.MustCompile(`^repl stopped in [\d.]+s by its stop keys, no signal needed; it exited with code 0\n$`).MatchString(out) {
		t.Errorf("stop: %q", out)
	}
	// An attach of a service that ends says so, and exits 1.
	select {
	case err := <-c.done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(c.screen(), "svc: error: repl ended") {
			t.Errorf("the attach of a service that ended: %v\n%q", err, c.screen())
		}
	case <-time.After(15 * time.Second):
		t.Errorf("the attach of a service that ended runs on:\n%q", c.screen())
	}
}
