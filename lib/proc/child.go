package proc

import (
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Child is a command started as the leader of a process group of its own:
// the one lifecycle every agentry program uses for what it starts.
//
//	start     Start (or Reaper.Start): own group, parent-death signal
//	watch     Exited: closed when the leader has exited, still unreaped
//	signal    Signal: to the whole group, only while the leader is unreaped
//	reap      Wait (reap only) or End (kill what the group left, then reap)
//	decode    Exit: code, signal and the 128+N status
//
// Until the leader is reaped its pid, and so its group id, cannot be
// reused: that is what makes a signal to the group safe, and why Signal
// does nothing once Wait or End has run. Started through Options.Reaper,
// a child is reaped as it exits: Exited closes then, and what it left in
// its group is killed then, whether Wait or End follows.
type Child struct {
	cmd    *exec.Cmd // nil for a process a Reaper adopted
	pid    int       // kept: the Process forgets its pid once released
	exited chan struct{}
	reaper *Reaper

	mu     sync.Mutex
	reaped bool
	waited bool // cmd.Wait has run: the copies of its stdio are done
	// endGroup: the Reaper kills what the leader left in its group as it
	// collects the leader's exit (Options.Reaper).
	endGroup bool
	exit     Exit
	comm     string // the program it ran when it ended (through a Reaper)
}

// Options say how a child is started.
type Options struct {
	// DeathSignal is what the kernel sends the child when the thread that
	// started it dies, however it dies (default SIGKILL): a parent killed
	// outright does not leave its child running on. (Go never ends the
	// thread that started a child while the program runs.)
	DeathSignal syscall.Signal
	// Outlive leaves the child running when its parent dies: a service
	// outlives a monitor killed outright, and is stopped by pid and start
	// time afterwards.
	Outlive bool
	// Reaper starts the child through the process's Reaper, when it has
	// one: a process that is a child subreaper starts every child so.
	// The reaper collects the leader's exit as it comes, and so kills what
	// it left in its group first, as End would: after, the group can no
	// longer be signalled safely.
	Reaper *Reaper
}

// Exit is how a process ended: an exit code, or the signal that ended it.
type Exit struct {
	Code   *int           `json:"code,omitempty"`
	Signal syscall.Signal `json:"-"`
}

// Ended is how a process ended as a report gives it: its exit code, or
// the name of the signal that ended it.
type Ended struct {
	ExitCode *int   `json:"exitCode,omitempty"`
	Signal   string `json:"signal,omitempty"`
}

// Ended is the exit as a report gives it.
func (e Exit) Ended() Ended { return Ended{ExitCode: e.Code, Signal: e.SignalName()} }

// ExitOf decodes a wait status.
func ExitOf(ws syscall.WaitStatus) Exit {
	switch {
	case ws.Exited():
		c := ws.ExitStatus()
		return Exit{Code: &c}
	case ws.Signaled():
		return Exit{Signal: ws.Signal()}
	}
	return Exit{}
}

// Status is the exit status a shell would show: the code, or 128+N for
// signal N.
func (e Exit) Status() int {
	if e.Signal != 0 {
		return 128 + int(e.Signal)
	}
	if e.Code != nil {
		return *e.Code
	}
	return 0
}

// OK reports an exit with code 0.
func (e Exit) OK() bool { return e.Code != nil && *e.Code == 0 }

// SignalName is the conventional name of the signal that ended the
// process ("SIGTERM"), or "" when it exited.
func (e Exit) SignalName() string {
	if e.Signal == 0 {
		return ""
	}
	if n := unix.SignalName(e.Signal); n != "" {
		return n
	}
	return fmt.Sprintf("signal %d", int(e.Signal))
}

// String says how it ended: "exited 3", "ended by SIGTERM".
func (e Exit) String() string {
	switch {
	case e.Signal != 0:
		return "ended by " + e.SignalName()
	case e.Code != nil:
		return fmt.Sprintf("exited %d", *e.Code)
	}
	return "ended"
}

// Start starts cmd as a Child: the leader of a new process group, with
// the parent-death signal unless o.Outlive; through o.Reaper when there
// is one.
func Start(cmd *exec.Cmd, o Options) (*Child, error) {
	if o.Reaper != nil {
		return o.Reaper.start(cmd, o, true)
	}
	prepare(cmd, o)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &Child{cmd: cmd, pid: cmd.Process.Pid, exited: make(chan struct{})}
	go func() {
		_ = waitExited(cmd.Process.Pid)
		close(c.exited)
	}()
	return c, nil
}

func prepare(cmd *exec.Cmd, o Options) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// A new session is a new group too (setpgid would fail in it): a
	// command given a controlling terminal asks for one.
	cmd.SysProcAttr.Setpgid = !cmd.SysProcAttr.Setsid
	if !o.Outlive {
		sig := o.DeathSignal
		if sig == 0 {
			sig = syscall.SIGKILL
		}
		cmd.SysProcAttr.Pdeathsig = sig
	}
}

// PID is the leader's pid, which is also the group's id. It stays known
// after the child is reaped.
func (c *Child) PID() int { return c.pid }

// Exited is closed when the leader has exited. For a child started
// through a Reaper it is closed once the reaper has collected it.
func (c *Child) Exited() <-chan struct{} { return c.exited }

// Signal sends sig to the child's whole group (to an adopted process,
// which need not lead a group, alone). Once the leader is reaped it does
// nothing: the group id may then name someone else's processes. A group
// already gone is not an error.
func (c *Child) Signal(sig syscall.Signal) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reaped {
		return nil
	}
	target := -c.pid
	if c.cmd == nil {
		target = c.pid
	}
	err := unix.Kill(target, sig)
	if err == unix.ESRCH {
		return nil
	}
	return err
}

// Wait waits for the leader to exit, reaps it and decodes its exit. It
// may be called more than once. Through a Reaper, the exit was collected
// already, and cmd.Wait, which then reaps nothing, still finishes the
// copies of its stdio.
func (c *Child) Wait() Exit {
	<-c.exited
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.waited && c.cmd != nil {
		c.waited = true
		_ = c.cmd.Wait()
		if c.reaper == nil && c.cmd.ProcessState != nil {
			if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
				c.exit = ExitOf(ws)
			}
		}
	}
	c.reaped = true
	return c.exit
}

// End waits for the leader to exit, kills with SIGKILL whatever it left
// running in its group, then reaps it.
func (c *Child) End() Exit {
	<-c.exited
	_ = c.Signal(syscall.SIGKILL)
	return c.Wait()
}

// Stop sends sig to the group and waits up to grace for the leader to
// exit; then SIGKILL to the group, and it waits on. It does not reap.
func (c *Child) Stop(sig syscall.Signal, grace time.Duration) {
	_ = c.Signal(sig)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-c.exited:
	case <-t.C:
		_ = c.Signal(syscall.SIGKILL)
		<-c.exited
	}
}

// Finish ends a child that stops at the end of its input: stdin closed,
// then, if the leader has not exited within grace, Stop with SIGTERM and
// the same grace. It waits for the leader's exit. It does not reap.
func (c *Child) Finish(stdin io.Closer, grace time.Duration) {
	stdin.Close()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-c.exited:
	case <-t.C:
		c.Stop(syscall.SIGTERM, grace)
	}
}

// Comm is the program the child was running when it ended, as /proc named
// it (an exec after the start shows here): known once a Reaper collected
// it, "" otherwise.
func (c *Child) Comm() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.comm
}

// Running reports whether the leader has not exited yet.
func (c *Child) Running() bool {
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// Ms is d in milliseconds, to the microsecond: how every report gives a
// process's times (durationMs, elapsedMs, exitMs).
func Ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
