package agentrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/grant"
	"github.com/agentry/agentry/lib/proc"
)

// PreflightError is a run that would not have been able to do its work,
// found before the first model call.
type PreflightError struct {
	Check  string // "writable", "starts", "signed in"
	Reason string
}

func (e *PreflightError) Error() string { return "preflight: " + e.Reason }

// preflight proves, before any model call, what the run needs: a working
// copy it can write at level 2 and 3, an agent CLI that starts, a
// credential for it. (codex's credential is already checked by prepare.)
func preflight(ctx context.Context, req Request, w *workspace) error {
	g := req.Grant
	if g.Level >= 2 {
		f, err := os.CreateTemp(w.dir, ".runagent-preflight-*")
		if err != nil {
			return &PreflightError{"writable", "the working copy is not writable: " + proc.ErrnoName(err)}
		}
		f.Close()
		os.Remove(f.Name())
	}
	if req.Host != nil {
		return warm(ctx, req, w) // its own proof that it starts
	}
	if err := starts(ctx, g, w, req.procOptions()); err != nil {
		return err
	}
	if g.Harness == grant.Claude && !claudeSignedIn(w.env) {
		return &PreflightError{"signed in", "claude is not signed in: no ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN or CLAUDE_CODE_OAUTH_TOKEN in its environment, no cloud provider chosen, and no credentials file"}
	}
	return nil
}

// errStopped is a preflight a signal to runagent ended.
var errStopped = errors.New("stopped during the preflight")

// startsTimeout bounds the agent's --version.
const startsTimeout = 30 * time.Second

// versionArg is the argument that has an agent CLI say its version.
const versionArg = "--version"

// starts runs the agent's --version in the run's environment, in a group
// of its own that goes with it, however it ends: by itself, at
// startsTimeout, or at a signal to runagent (errStopped), which does not
// wait for what --version left holding its output.
func starts(ctx context.Context, g *grant.Grant, w *workspace, o proc.Options) error {
	cmd := exec.Command(g.Argv[0], versionArg)
	ran := g.Harness + " " + versionArg
	cmd.Dir, cmd.Env = w.dir, w.env
	child, err := proc.StartPiped(cmd, proc.Pipes{MergeStderr: true, Options: o})
	if err != nil {
		return &PreflightError{"starts", fmt.Sprintf("%s cannot start: %s", g.Harness, proc.ErrnoName(err))}
	}
	defer child.Stdout.Close()
	out := proc.NewTail(4096)
	read := make(chan struct{})
	go func() {
		defer close(read)
		io.Copy(out, child.Stdout)
	}()
	t := time.NewTimer(startsTimeout)
	defer t.Stop()
	var why string
	select {
	case <-child.Exited():
	case <-ctx.Done():
		child.Stop(syscall.SIGTERM, time.Second)
		why = "stopped"
	case <-t.C:
		child.Stop(syscall.SIGTERM, time.Second)
		why = fmt.Sprintf("%s did not end within %v", ran, startsTimeout)
	}
	exit := child.End()
	_ = child.Stdout.SetReadDeadline(time.Now().Add(time.Second))
	<-read
	switch {
	case why == "stopped":
		return errStopped
	case why != "":
		return &PreflightError{"starts", fmt.Sprintf("%s cannot start: %s", g.Harness, why)}
	case !exit.OK():
		return &PreflightError{"starts", fmt.Sprintf("%s cannot start: %s %s: %s", g.Harness, ran, exit, lastChars(out.String(), 200))}
	}
	return nil
}

// claudeSignedIn: claude has a credential it will use — a key or token in
// its environment, Bedrock/Vertex, or the file claude login writes.
func claudeSignedIn(env []string) bool {
	for _, k := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"} {
		if lookup(env, k) != "" {
			return true
		}
	}
	dir := lookup(env, "CLAUDE_CONFIG_DIR")
	if dir == "" {
		dir = filepath.Join(lookup(env, "HOME"), ".claude")
	}
	_, err := os.Stat(filepath.Join(dir, ".credentials.json"))
	return err == nil
}
