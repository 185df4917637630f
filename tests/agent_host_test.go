package tests

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
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
	"github.com/agentry/agentry/lib/hostclient"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/protocol"
)

// hostProc is an agent-host under test, fed through a pipe.
type hostProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr bytes.Buffer
}

func startHost(t *testing.T, args ...string) *hostProc {
	t.Helper()
	h := &hostProc{t: t, cmd: exec.Command(filepath.Join(binDir, "agent-host"), args...), lines: make(chan string, 1024)}
	var err error
	if h.stdin, err = h.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := h.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	h.cmd.Stderr = &h.stderr
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
		close(h.lines)
	}()
	t.Cleanup(func() {
		h.cmd.Process.Kill()
		h.cmd.Wait()
	})
	return h
}

func (h *hostProc) send(lines ...string) {
	h.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(h.stdin, l+"\n"); err != nil {
			h.t.Fatal(err)
		}
	}
}

// expect reads lines until one contains want, failing after 10s.
func (h *hostProc) expect(want string) string {
	h.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-h.lines:
			if !ok {
				h.t.Fatalf("output ended before %q; stderr %s", want, h.stderr.String())
			}
			if strings.Contains(l, want) {
				return l
			}
		case <-deadline:
			h.t.Fatalf("no %q within 10s", want)
		}
	}
}

func (h *hostProc) wait() int {
	h.t.Helper()
	done := make(chan struct{})
	go func() { h.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		h.t.Fatal("agent-host did not exit within 10s")
	}
	return h.cmd.ProcessState.ExitCode()
}

// SIGTERM drains: the run in flight finishes, then bye, then exit 0.
func TestAgentHostSIGTERMDrains(t *testing.T) {
	h := startHost(t)
	h.send(`{"type":"hello","id":"h1","protocol":1}`,
		`{"type":"run_turn","id":"t1","runId":"r1","params":{"chatId":"c1","prompt":"!slow=30ms\na b c d e"}}`)
	h.expect(`"type":"run_started"`)
	if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	h.expect(`"type":"run_done","id":"t1","runId":"r1","stopReason":"completed"`)
	h.expect(`{"type":"bye"}`)
	if code := h.wait(); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0", code)
	}
}

// An exec turn that is interrupted has its whole process group killed,
// and nothing it started outlives the turn.
func TestAgentHostExecInterruptKillsTree(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "grandchild")
	script := `sleep 300 & echo $! > ` + pidfile + `; echo started; wait`
	h := startHost(t, "--backend", "exec", "--interrupt-grace", "2s", "--", "sh", "-c", script)
	h.send(`{"type":"hello","id":"h1","protocol":1}`,
		`{"type":"run_turn","id":"t1","runId":"r1","params":{"chatId":"c1","prompt":"x"}}`)
	h.expect(`"text":"started\n"`)
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	h.send(`{"type":"interrupt","id":"i1","chatId":"c1"}`)
	h.expect(`"stopReason":"interrupted"`)
	if alive(pid) {
		t.Errorf("grandchild %d outlived its interrupted turn", pid)
	}
	h.stdin.Close()
	h.expect(`{"type":"bye"}`)
	if code := h.wait(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// A turn's command that exits leaves nothing running behind it, even a
// child that held its stdout; the turn does not wait for that child.
func TestAgentHostExecLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "child")
	script := `sleep 300 & echo $! > ` + pidfile + `; echo done`
	h := startHost(t, "--backend", "exec", "--", "sh", "-c", script)
	h.send(`{"type":"hello","id":"h1","protocol":1}`,
		`{"type":"run_turn","id":"t1","runId":"r1","params":{"chatId":"c1","prompt":"x"}}`)
	h.expect(`"stopReason":"completed"`)
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if alive(pid) {
		t.Errorf("background child %d outlived its turn", pid)
	}
	h.stdin.Close()
	h.wait()
}

// A process a turn's command detached from its group (a new session, its
// parent gone) escapes the end of the turn, but not the host: agent-host
// is a child subreaper, so it is handed back to the host, which ends it
// as it exits.
func TestAgentHostEndsWhatEscapedItsGroup(t *testing.T) {
	dir := t.TempDir()
	script := `mkfifo f; setsid sh -c 'sleep 4819 & echo $! > f; wait' & read pid < f; echo $pid > pid; echo started`
	h := startHost(t, "--backend", "exec", "--", "sh", "-c", script)
	h.send(`{"type":"hello","id":"h1","protocol":1}`,
		`{"type":"run_turn","id":"t1","runId":"r1","params":{"chatId":"c1","prompt":"x","workspace":"`+dir+`"}}`)
	h.expect(`"stopReason":"completed"`)
	pid := waitPid(t, filepath.Join(dir, "pid"))
	defer syscall.Kill(pid, syscall.SIGKILL)
	sleeper, err := proc.Stat(pid)
	if err != nil || sleeper.State == 'Z' {
		t.Fatalf("the detached sleep %d is gone before the host ends: the test shows nothing", pid)
	}
	if parent, err := proc.Stat(sleeper.PPID); err != nil || parent.PPID != h.cmd.Process.Pid {
		t.Errorf("the detached shell %d is not the host's (%d) after its parent exited: %+v", sleeper.PPID, h.cmd.Process.Pid, parent)
	}
	h.stdin.Close()
	h.expect(`{"type":"bye"}`)
	h.wait()
	if alive(pid) {
		t.Errorf("the detached sleep %d outlived its host", pid)
	}
}

// A second SIGTERM while the first drains ends the host at once, and
// every process it still has first: the turn's command, which ignores
// the interrupt, and a sleep it detached into a session of its own.
func TestAgentHostSecondSignalEndsItsTree(t *testing.T) {
	dir := t.TempDir()
	script := `trap "" INT TERM; mkfifo f; setsid sh -c 'sleep 4823 & echo $! > f; wait' & read pid < f; echo $pid > pid; exec sleep 4824`
	h := startHost(t, "--drain-timeout", "30s", "--interrupt-grace", "30s", "--backend", "exec", "--", "sh", "-c", script)
	h.send(`{"type":"hello","id":"h1","protocol":1}`,
		`{"type":"run_turn","id":"t1","runId":"r1","params":{"chatId":"c1","prompt":"x","workspace":"`+dir+`"}}`)
	pid := waitPid(t, filepath.Join(dir, "pid"))
	defer syscall.Kill(pid, syscall.SIGKILL)
	var turn int
	if !await.Until(10*time.Second, func() bool {
		if ps := liveProcs(regexp.MustCompile(`^sleep 4824$`)); len(ps) == 1 {
			turn = ps[0].PID
		}
		return turn != 0
	}) {
		t.Fatal("the turn's command never ran sleep 4824")
	}
	defer syscall.Kill(turn, syscall.SIGKILL)
	h.cmd.Process.Signal(syscall.SIGTERM)
	h.expect(`"msg":"signalled; draining"`)
	h.cmd.Process.Signal(syscall.SIGTERM)
	// Its output read to the end before it is waited for (Wait closes the
	// pipe).
	var out []string
	for l := range h.lines {
		out = append(out, l)
	}
	// 143, or 0 when the drain, its turn's processes killed, ended first.
	if code := h.wait(); code != 143 && code != 0 {
		t.Errorf("exit %d after a second SIGTERM, want 143 (or 0)", code)
	}
	if alive(turn) {
		t.Errorf("the turn's command %d outlived its host", turn)
	}
	if alive(pid) {
		t.Errorf("the sleep %d it detached outlived its host", pid)
	}
	// The run the host ended so is said interrupted, not a failure of
	// its backend.
	done := false
	for _, l := range out {
		if strings.Contains(l, `"backend_failed"`) || strings.Contains(l, `"runId":"r1"`) && strings.Contains(l, `"type":"run_done"`) && !strings.Contains(l, `"stopReason":"interrupted"`) {
			t.Errorf("after a second SIGTERM: %s", l)
		}
		done = done || strings.Contains(l, `"type":"run_done"`)
	}
	if !done {
		t.Error("no run_done after the second SIGTERM")
	}
}

// alive reports whether pid is a live process (not a zombie), waiting up
// to a second for a killed one to go.
func alive(pid int) bool {
	return !await.Until(time.Second, func() bool {
		in, err := proc.Stat(pid)
		return err != nil || in.State == 'Z'
	})
}

// waitPid reads the pid a turn's command wrote, polling for at most 10s.
func waitPid(t *testing.T, file string) int {
	t.Helper()
	pid, err := await.PID(file, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// A daemon's Close stops the host at once and everything its backend
// started — here a grandchild of the host, in the turn's own process
// group, which a SIGKILL to the host alone would leave running.
func TestHostClientCloseLeavesNothing(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	c, err := hostclient.Subprocess(hostclient.SubprocessOptions{Path: filepath.Join(binDir, "agent-host"),
		Args: []string{"--backend", "exec", "--", "sh", "-c", "sleep 4811 & echo $! > " + pidfile + "; wait"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Hello(ctx, "tests", nil); err != nil {
		t.Fatal(err)
	}
	r, err := c.RunTurn(ctx, "r1", protocol.ChatRunParams{ChatID: "c1", Prompt: "x"})
	if err != nil {
		t.Fatal(err)
	}
	pid := waitPid(t, pidfile)
	start := time.Now()
	c.Close()
	if alive(pid) {
		t.Errorf("the turn's child %d outlived Close", pid)
		syscall.Kill(pid, syscall.SIGKILL)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Close took %v", d)
	}
	if done, err := r.Wait(ctx); err == nil && done.StopReason != protocol.StopInterrupted {
		t.Errorf("the run in flight ended %+v, not interrupted", done)
	}
}

// A host killed outright takes its backend's command with it.
func TestAgentHostKilledTakesItsCommand(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	h := startHost(t, "--backend", "exec", "--", "sh", "-c", "echo $$ > "+pidfile+"; exec sleep 4812")
	h.send(`{"type":"hello","id":"h1","protocol":1}`,
		`{"type":"run_turn","id":"t1","runId":"r1","params":{"chatId":"c1","prompt":"x"}}`)
	pid := waitPid(t, pidfile)
	h.cmd.Process.Kill()
	h.wait()
	if alive(pid) {
		t.Errorf("the turn's command %d outlived its host", pid)
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// hostWrapper is a stand-in for `ssh HOST agent-host`: a wrapper command
// that runs the host apart from itself, in a session of its own as a
// remote host would be, writing both pids into dir.
func hostWrapper(t *testing.T, dir string) string {
	t.Helper()
	w := filepath.Join(dir, "wrapper")
	script := "#!/bin/sh\n" +
		"echo $$ > \"" + dir + "/wrapper.pid\"\n" +
		"setsid sh -c 'echo $$ > \"$0\"; exec \"$@\"' \"" + dir + "/host.pid\" \"$@\"\n"
	if err := os.WriteFile(w, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return w
}

// The subprocess client runs the host through a wrapper command as it
// would run it itself; when the wrapper dies, the runs in flight are lost
// (after the second the client reads on for what the host still sends),
// and the host, its input gone, drains and ends, and with it what its
// backend started: nothing is left running on either side.
func TestHostClientThroughAWrapper(t *testing.T) {
	dir := t.TempDir()
	cmdPid := filepath.Join(dir, "cmd.pid")
	c, err := hostclient.Subprocess(hostclient.SubprocessOptions{Path: hostWrapper(t, dir),
		// A drain longer than the second the client reads on after the
		// wrapper's end, so that the run is lost rather than reported
		// interrupted by the draining host.
		Args: []string{filepath.Join(binDir, "agent-host"), "--drain-timeout", "5s", "--backend", "exec", "--",
			"sh", "-c", "echo $$ > " + cmdPid + "; read line; echo \"got $line\"; exec sleep 4813"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ready, err := c.Hello(ctx, "tests", nil)
	if err != nil || !strings.HasPrefix(ready.Host, "agent-host ") {
		t.Fatalf("hello through the wrapper: %+v %v", ready, err)
	}
	r, err := c.RunTurn(ctx, "r1", protocol.ChatRunParams{ChatID: "c1", Prompt: "over the wire"})
	if err != nil {
		t.Fatal(err)
	}
	for ev := range r.Events() {
		if ev.Type == protocol.EvTextDelta && strings.Contains(ev.Text, "got over the wire") {
			break
		}
	}
	wrapper, host, command := waitPid(t, filepath.Join(dir, "wrapper.pid")), waitPid(t, filepath.Join(dir, "host.pid")), waitPid(t, cmdPid)
	if wrapper == host {
		t.Fatalf("the host is the wrapper (%d): the test needs them apart", host)
	}
	syscall.Kill(wrapper, syscall.SIGKILL)
	done, err := r.Wait(ctx)
	if !errors.Is(err, hostclient.ErrHostDied) || done == nil || done.StopReason != protocol.StopLost {
		t.Errorf("the run in flight when the wrapper died: %+v %v", done, err)
	}
	if err := c.Ping(ctx); !errors.Is(err, hostclient.ErrHostDied) {
		t.Errorf("a call after the wrapper died: %v", err)
	}
	for name, pid := range map[string]int{"host": host, "its command": command} {
		if !await.Until(15*time.Second, func() bool {
			in, err := proc.Stat(pid)
			return err != nil || in.State == 'Z'
		}) {
			t.Errorf("%s (%d) still running 15s after the wrapper died", name, pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
