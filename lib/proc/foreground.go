package proc

import (
	"context"
	"io"
	"os/exec"
	"syscall"
	"time"
)

// RunOptions are what a foreground run needs.
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
	ExitCode    int    `json:"exitCode"` // the status to exit with
	Code        *int   `json:"code,omitempty"`
	Signal      string `json:"signal,omitempty"`
	TimedOut    bool   `json:"timedOut,omitempty"`
	Interrupted bool   `json:"interrupted,omitempty"`
	StillHeld   bool   `json:"outputHeldByBackgroundChild,omitempty"`
	// LeftRunning are the processes the command left running in its
	// group when it exited (a "cmd &" not waited for), stopped with it.
	LeftRunning []Left  `json:"leftRunning,omitempty"`
	ElapsedMs   float64 `json:"elapsedMs"`
	Footer      string  `json:"footer,omitempty"`
	Output      string  `json:"output"`
	Truncated   bool    `json:"outputTruncated,omitempty"`
}

// Left is a process a command left running, by its pid and program.
type Left struct {
	PID  int    `json:"pid"`
	Comm string `json:"comm"`
}

// ShellCommand is how every agentry program runs a command it was given:
// one argument through /bin/sh -c, several executed directly.
func ShellCommand(argv []string) *exec.Cmd {
	if len(argv) == 1 {
		return exec.Command("/bin/sh", "-c", argv[0])
	}
	return exec.Command(argv[0], argv[1:]...)
}

// RunForeground runs a command that should finish, and never hangs: stdin
// at /dev/null, output streamed and kept, the command in its own process
// group. It returns when the command exits, and stops what the command
// left running in its group then — SIGTERM, then SIGKILL after the grace
// (LeftRunning says what); a process that left the group (setsid) and
// keeps the output pipe open is read from for Drain. On the timeout or
// ctx (a signal) it stops the whole group the same way. ExitCode is 124
// after the timeout and 130 when interrupted (the caller knows which
// signal it was).
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
	cmd := ShellCommand(o.Argv)
	cmd.Dir = o.Cwd
	start := time.Now()
	child, err := StartPiped(cmd, Pipes{MergeStderr: true}) // stdin: /dev/null
	if err != nil {
		return nil, err
	}
	r := child.Stdout
	defer r.Close()

	keep := NewTail(o.Keep)
	copied := make(chan error, 1)
	go func() {
		var dst io.Writer = keep
		if o.Out != nil {
			dst = io.MultiWriter(o.Out, keep)
		}
		_, err := io.Copy(dst, r)
		copied <- err // nil: the end of the output; else the drain deadline
	}()
	var timeout <-chan time.Time
	if o.Timeout > 0 {
		t := time.NewTimer(o.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	res := &RunResult{}
	select {
	case <-child.Exited():
	case <-timeout:
		res.TimedOut = true
		child.Stop(syscall.SIGTERM, o.Grace)
	case <-ctx.Done():
		res.Interrupted = true
		child.Stop(syscall.SIGTERM, o.Grace)
	}
	if !res.TimedOut && !res.Interrupted {
		// What it left running in its group goes with it: a run never
		// leaves a process behind (svc start is the way to keep one).
		// The leader, exited and not yet reaped, still holds the group.
		left := Tree(child.PID(), child.PID())
		for _, p := range left {
			res.LeftRunning = append(res.LeftRunning, Left{PID: p.PID, Comm: p.Comm})
		}
		if len(left) > 0 {
			// SIGTERM first, for them to end cleanly; SIGKILL to what
			// is left after the grace.
			_ = child.Signal(syscall.SIGTERM)
			WaitGone(left, time.Now().Add(o.Grace), nil)
		}
	}
	exit := child.End() // the leader is gone: the rest of its group goes too
	_ = r.SetReadDeadline(time.Now().Add(o.Drain))
	res.StillHeld = <-copied != nil
	res.ElapsedMs = Ms(time.Since(start))
	res.Output, res.Truncated = keep.String(), keep.Truncated()
	res.Code, res.Signal, res.ExitCode = exit.Code, exit.SignalName(), exit.Status()
	switch {
	case res.TimedOut:
		res.ExitCode = 124
	case res.Interrupted:
		res.ExitCode = 130
	}
	return res, nil
}
