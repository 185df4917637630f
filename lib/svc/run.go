package svc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/proc"
	"golang.org/x/sys/unix"
)

// RunOptions are what svc run needs.
type RunOptions struct {
	Argv    []string      // one argument: through /bin/sh -c
	Cwd     string        //
	Timeout time.Duration // 0: none
	Out     io.Writer     // where output streams, live
	// Keep is how much output to keep for the result (default 1 MiB, the
	// last of it).
	Keep int
	// Drain bounds how long output is read after the command exits, when a
	// background child still holds the pipe (default 200ms).
	Drain time.Duration
	// Grace is the time between SIGTERM and SIGKILL when the run is
	// stopped (default 2s).
	Grace time.Duration
}

// RunResult is how a foreground run ended.
type RunResult struct {
	ExitCode    int     `json:"exitCode"` // the code svc run exits with
	Code        *int    `json:"code,omitempty"`
	Signal      string  `json:"signal,omitempty"`
	TimedOut    bool    `json:"timedOut,omitempty"`
	Interrupted bool    `json:"interrupted,omitempty"`
	StillHeld   bool    `json:"outputHeldByBackgroundChild,omitempty"`
	ElapsedMs   float64 `json:"elapsedMs"`
	Footer      string  `json:"footer,omitempty"`
	Output      string  `json:"output"`
	Truncated   bool    `json:"outputTruncated,omitempty"`
}

// RunForeground runs a command that should finish, and never hangs: stdin
// at /dev/null, output streamed and kept, the command in its own process
// group. It returns when the command exits, even if a background child
// keeps the output pipe open; on the timeout or ctx (a signal) it stops
// the whole group — SIGTERM, then SIGKILL after the grace.
func RunForeground(ctx context.Context, o RunOptions) (*RunResult, error) {
	if o.Keep <= 0 {
		o.Keep = 1 << 20
	}
	if o.Drain <= 0 {
		o.Drain = 200 * time.Millisecond
	}
	if o.Grace <= 0 {
		o.Grace = 2 * time.Second
	}
	var cmd *exec.Cmd
	if len(o.Argv) == 1 {
		cmd = exec.Command("/bin/sh", "-c", o.Argv[0])
	} else {
		cmd = exec.Command(o.Argv[0], o.Argv[1:]...)
	}
	cmd.Dir = o.Cwd
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	cmd.Stdout, cmd.Stderr = w, w // stdin stays nil: /dev/null
	proc.InGroup(cmd)
	proc.DiesWithParent(cmd, syscall.SIGKILL)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, err
	}
	w.Close()

	keep := proc.NewTail(o.Keep)
	copied := make(chan error, 1)
	go func() {
		var dst io.Writer = keep
		if o.Out != nil {
			dst = io.MultiWriter(o.Out, keep)
		}
		_, err := io.Copy(dst, r)
		copied <- err // nil: the end of the output; else the drain deadline
	}()
	exited := make(chan struct{})
	go func() {
		_ = proc.WaitExited(cmd.Process.Pid)
		close(exited)
	}()
	var timeout <-chan time.Time
	if o.Timeout > 0 {
		t := time.NewTimer(o.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	res := &RunResult{}
	select {
	case <-exited:
	case <-timeout:
		res.TimedOut = true
		stopGroup(cmd, exited, o.Grace)
	case <-ctx.Done():
		res.Interrupted = true
		stopGroup(cmd, exited, o.Grace)
	}
	if res.TimedOut || res.Interrupted {
		// The leader is gone but not reaped: its group is still ours.
		_ = proc.SignalGroup(cmd, syscall.SIGKILL)
	}
	waitErr := cmd.Wait()
	_ = r.SetReadDeadline(time.Now().Add(o.Drain))
	res.StillHeld = <-copied != nil
	res.ElapsedMs = float64(time.Since(start).Microseconds()) / 1000
	res.Output, res.Truncated = keep.String(), keep.Truncated()

	var ee *exec.ExitError
	switch {
	case waitErr == nil:
		c := 0
		res.Code = &c
	case errors.As(waitErr, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = unix.SignalName(ws.Signal())
			res.ExitCode = 128 + int(ws.Signal())
		} else {
			c := ee.ExitCode()
			res.Code, res.ExitCode = &c, c
		}
	default:
		return nil, waitErr
	}
	switch {
	case res.TimedOut:
		res.ExitCode = 124
		res.Footer = fmt.Sprintf("timed out after %v; it looks like this command does not exit on its own: run it with svc start", o.Timeout)
	case res.Interrupted:
		res.Footer = "interrupted"
		res.ExitCode = 130 // the caller knows which signal it was
	case res.StillHeld:
		res.Footer = "the command exited, but a background child it started still holds its output"
	}
	return res, nil
}

// stopGroup is the ladder for a foreground run: SIGTERM to the group,
// SIGKILL after the grace if the leader has not exited.
func stopGroup(cmd *exec.Cmd, exited <-chan struct{}, grace time.Duration) {
	_ = proc.SignalGroup(cmd, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-exited:
	case <-t.C:
		_ = proc.SignalGroup(cmd, syscall.SIGKILL)
		<-exited
	}
}
