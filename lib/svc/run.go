package svc

import (
	"context"
	"os"

	"github.com/agentry/agentry/lib/cmdline"
	"github.com/agentry/agentry/lib/proc"
)

// RunRequest is svc run: a command in the foreground that never hangs,
// or, when it looks long-running, in the background as a service.
type RunRequest struct {
	proc.RunOptions
	// Background is "auto" (a command that looks long-running becomes a
	// service), "always" or "never".
	Background string
	Home, Name string // for a command sent to the background
	// Scope and UntilExit are those of a service it starts (see
	// StartOptions.Scope and Spec.UntilExit).
	Scope     string
	UntilExit int
}

// RunOutcome is what svc run did: a foreground run, or a service started.
type RunOutcome struct {
	Foreground *proc.RunResult
	Background *StartResult
}

// Run runs the request.
func Run(ctx context.Context, req RunRequest) (*RunOutcome, error) {
	if req.Background == "always" || req.Background == "auto" && cmdline.LooksLongRunning(cmdline.ShellLine(req.Argv)) {
		cwd := req.Cwd
		if cwd == "" {
			cwd, _ = os.Getwd()
		}
		res, err := Start(ctx, StartOptions{Home: req.Home, Name: req.Name, Scope: req.Scope,
			Spec: Spec{Command: req.Argv, Cwd: cwd, UntilExit: req.UntilExit}})
		if res != nil {
			res.Background = true
		}
		return &RunOutcome{Background: res}, err
	}
	res, err := proc.RunForeground(ctx, req.RunOptions)
	if err != nil {
		return nil, err
	}
	return &RunOutcome{Foreground: res}, nil
}
