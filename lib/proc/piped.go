package proc

import (
	"io"
	"os"
	"os/exec"
	"time"
)

// Pipes say how a piped child's stdio is wired.
type Pipes struct {
	// Stdin is what the child reads (a prompt), copied to it; nil is
	// /dev/null, unless StdinPipe.
	Stdin io.Reader
	// StdinPipe gives the caller Piped.Stdin to write the child's input
	// on; closing it ends that input.
	StdinPipe bool
	// Stderr also gets the child's stderr as it comes (the host's own
	// stderr, say); the tail keeps its end either way.
	Stderr io.Writer
	// Tail is how many bytes of stderr Piped.Stderr keeps (default 4096).
	Tail int
	// MergeStderr sends stderr down the stdout pipe, one stream in the
	// order written; there is then no tail.
	MergeStderr bool
	Options
}

// Piped is a Child its parent talks to through its stdio: its input
// given or on a pipe, its stdout on a pipe the caller reads, and the end
// of its stderr kept for the reason it failed.
type Piped struct {
	*Child
	Stdin  io.WriteCloser // with Pipes.StdinPipe; else nil
	Stdout *os.File       // the read end: the caller reads it and closes it
	Stderr *Tail          // nil with Pipes.MergeStderr
}

// StartPiped starts cmd as a Child with its stdio wired as p says. Unless
// cmd says otherwise (WaitDelay), the copies to and from it are waited for
// at most a second after it exits: a process that escaped its group may
// hold a pipe for ever.
func StartPiped(cmd *exec.Cmd, p Pipes) (*Piped, error) {
	c := &Piped{}
	if p.StdinPipe {
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		c.Stdin = stdin
	} else {
		cmd.Stdin = p.Stdin
	}
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		if c.Stdin != nil {
			c.Stdin.Close()
		}
		return nil, err
	}
	cmd.Stdout = stdoutW
	if p.MergeStderr {
		cmd.Stderr = stdoutW
	} else {
		if p.Tail <= 0 {
			p.Tail = 4096
		}
		c.Stderr = NewTail(p.Tail)
		cmd.Stderr = c.Stderr
		if p.Stderr != nil {
			cmd.Stderr = tee{c.Stderr, p.Stderr}
		}
	}
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = time.Second
	}
	c.Child, err = Start(cmd, p.Options)
	stdoutW.Close()
	if err != nil {
		stdout.Close()
		if c.Stdin != nil {
			c.Stdin.Close()
		}
		return nil, err
	}
	c.Stdout = stdout
	return c, nil
}

// tee keeps stderr's tail and copies it on; a copy that fails is not the
// child's concern: its stderr is never closed because of it.
type tee struct {
	tail *Tail
	w    io.Writer
}

func (t tee) Write(b []byte) (int, error) {
	_, _ = t.w.Write(b)
	return t.tail.Write(b)
}

// ExitError is a program that ran and did not exit 0.
type ExitError struct {
	Exit   Exit
	Stderr string // the end of its stderr
}

func (e *ExitError) Error() string { return e.Exit.String() }

// Output runs cmd as a Child to its end, stdin at /dev/null, and returns
// what it wrote on stdout; an exit other than 0 is an *ExitError. A
// process it left holding stdout is not waited for.
func Output(cmd *exec.Cmd, o Options) ([]byte, error) {
	c, err := StartPiped(cmd, Pipes{Options: o})
	if err != nil {
		return nil, err
	}
	defer c.Stdout.Close()
	var out []byte
	read := make(chan struct{})
	go func() {
		defer close(read)
		out, _ = io.ReadAll(c.Stdout)
	}()
	exit := c.End()
	_ = c.Stdout.SetReadDeadline(time.Now().Add(time.Second))
	<-read
	if !exit.OK() {
		return out, &ExitError{Exit: exit, Stderr: c.Stderr.String()}
	}
	return out, nil
}
