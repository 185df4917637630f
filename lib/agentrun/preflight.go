package agentrun

import (
	"context"
	"errors"
	"fmt"
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
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, g.Argv[0], "--version")
	cmd.Dir, cmd.Env = w.dir, w.env
	if out, err := cmd.CombinedOutput(); err != nil {
		why := proc.ErrnoName(err)
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			why = fmt.Sprintf("%s --version %s: %s", g.Harness, proc.ExitOf(ee.ProcessState.Sys().(syscall.WaitStatus)), lastChars(string(out), 200))
		}
		return &PreflightError{"starts", fmt.Sprintf("%s cannot start: %s", g.Harness, why)}
	}
	if g.Harness == grant.Claude && !claudeSignedIn(w.env) {
		return &PreflightError{"signed in", "claude is not signed in: no ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN or CLAUDE_CODE_OAUTH_TOKEN in its environment, no cloud provider chosen, and no credentials file"}
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
