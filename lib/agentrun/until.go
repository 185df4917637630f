package agentrun

import (
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/proc"
)

// checkTail is how much of the check's output is kept, and handed to the
// agent when it fails.
const checkTail = 4000

// checkGrace is how long the check has to end after the signal runagent
// forwarded to it.
const checkGrace = 5 * time.Second

// Check is what the run's check command (--until) made of an answer.
type Check struct {
	Command    string  `json:"command"`
	OK         bool    `json:"ok"`
	ExitCode   *int    `json:"exitCode"`
	Signal     string  `json:"signal,omitempty"`
	Status     string  `json:"status"` // "exited 0", "exited 1", "killed by SIGKILL"
	Tail       string  `json:"tail,omitempty"`
	DurationMs float64 `json:"durationMs"`
}

// runCheck runs command with sh -c in dir, the working copy (at level 1
// too: what the agent's MCP tools did lands there, if anywhere), with the
// job's environment, its output captured; the signal that cancels ctx
// (sig's) is forwarded to its group, as it is to the agent's, and SIGKILL
// follows after checkGrace.
func runCheck(ctx context.Context, command, dir string, env []string, sig func() syscall.Signal, starts proc.Options) *Check {
	c := &Check{Command: command}
	start := time.Now()
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Dir, cmd.Env = dir, env
	if env == nil {
		cmd.Env = os.Environ()
	}
	child, err := proc.StartPiped(cmd, proc.Pipes{Stdin: strings.NewReader(""), MergeStderr: true, Options: starts})
	if err != nil {
		c.Status = "could not start: " + proc.ErrnoName(err)
		return c
	}
	tail := proc.NewTail(checkTail)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		io.Copy(tail, child.Stdout)
	}()
	select {
	case <-child.Exited():
	case <-ctx.Done():
		// A shell can take the signal for later (dash does, for a SIGINT
		// that comes between two commands) and go on: the check is
		// runagent's own, so it gets a grace, then SIGKILL.
		child.Stop(sig(), checkGrace)
	}
	exit := child.End()
	_ = child.Stdout.SetReadDeadline(time.Now().Add(time.Second))
	<-copied
	child.Stdout.Close()
	c.DurationMs = proc.Ms(time.Since(start))
	c.ExitCode, c.Signal, c.OK = exit.Code, exit.SignalName(), exit.OK()
	c.Status = exit.String()
	c.Tail = strings.TrimSpace(tail.String())
	return c
}
