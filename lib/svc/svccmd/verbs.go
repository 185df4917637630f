// Package svccmd is svc's command line: each verb runs an operation of
// lib/svc (or lib/svc/project for up and down), prints its result as
// text or JSON, words the operation's typed errors for a shell, and
// returns the exit status for cli.Run. Only this face (and the MCP
// server, for its own reader) names flags, commands and exit codes.
package svccmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/cmdline"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc"
	"github.com/agentry/agentry/lib/svc/dotenv"
	"github.com/agentry/agentry/lib/svc/svctext"
)

// Verbs are svc's commands as the command line runs them: each does the
// operation, prints its result as text or as JSON, and returns the exit
// status as an error for cli.Run (nil 0, cli.Quiet(1) and so on). The
// operations themselves (svc.Start, svc.Stop, svc.Look …) print nothing.
type Verbs struct {
	Home   string
	Getenv func(string) string
	Out    io.Writer
	JSON   bool
	Voice  cli.Voice
}

// NewVerbs finds the state home from the environment.
func NewVerbs(getenv func(string) string, out io.Writer, asJSON bool, voice cli.Voice) (*Verbs, error) {
	h, err := svc.Home(getenv)
	if errors.Is(err, svc.ErrHomeNotYours) {
		return nil, cli.WithHint(cli.Usagef("%v", err),
			"svc uses only a directory of yours that no one else can write to: set SVC_HOME to one (the default is ~/.local/state/svc)")
	}
	if err != nil {
		return nil, cli.Usagef("%v", err)
	}
	return &Verbs{Home: h, Getenv: getenv, Out: out, JSON: asJSON, Voice: voice}, nil
}

// Dir is the named service's directory, the name checked: the one check
// of a name the command line gives.
func (v *Verbs) Dir(name string) (svc.Dir, error) {
	if err := svc.ValidName(name); err != nil {
		return svc.Dir{}, cli.Usagef("%v", err)
	}
	return svc.Dir{Home: v.Home, Name: name}, nil
}

// StartArgs are svc start's flags that are not the spec itself.
type StartArgs struct {
	Name   *string // nil: derived from the command; never empty
	Settle time.Duration
	Force  bool // start even when --ready-port is held by someone else
	// Port is --port: auto, a number, or "".
	Port string
	// EnvFiles are dotenv files whose lines go before --env's.
	EnvFiles []string
}

// missingWatched are the --watch patterns that name a path, with no
// pattern characters, which is not there (a typo: --watch srcc), from
// the service's directory; a name without a slash matches at any depth,
// so only one with a slash, or that names nothing anywhere, is said.
func missingWatched(spec svc.Spec) []string {
	var out []string
	for _, p := range spec.Watch {
		if strings.ContainsAny(p, "*?[") {
			continue
		}
		path := p
		if !filepath.IsAbs(path) {
			path = filepath.Join(spec.Cwd, p)
		}
		if _, err := os.Stat(path); err == nil {
			continue
		}
		if bare := !strings.Contains(strings.Trim(p, "/"), "/"); bare && foundBelow(spec.Cwd, p) {
			continue // a name at any depth, found below
		}
		out = append(out, p)
	}
	return out
}

// foundBelow reports whether a file or directory called name is in dir
// or below it (a few thousand entries looked at, at most).
func foundBelow(dir, name string) bool {
	found, seen := false, 0
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		seen++
		switch {
		case found || seen > 5000:
			return filepath.SkipAll
		case err != nil:
			return nil
		case d.Name() == name && path != dir:
			found = true
			return filepath.SkipAll
		case d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules"):
			return filepath.SkipDir
		}
		return nil
	})
	return found
}

// Start checks the spec, starts the service and reports the first true
// thing about it: 0 live, 1 ended or failed, 2 nothing started.
func (v *Verbs) Start(ctx context.Context, a StartArgs, spec svc.Spec) error {
	name, err := givenName(a.Name)
	if err != nil {
		return err
	}
	if spec.Env, err = envFiles(a.EnvFiles, spec.Env); err != nil {
		return err
	}
	spec, err = v.resolveSpec(spec)
	if err != nil {
		return err
	}
	if a.Port == "" && spec.MentionsPort() {
		v.Voice.Warnf("{port} is replaced only in a service given a port (--port auto or --port N): it is passed as written")
	}
	if ps := missingWatched(spec); len(ps) > 0 {
		dir, _ := filepath.Abs(spec.Cwd) // "" is the current directory
		for _, p := range ps {
			v.Voice.Warnf("--watch %s: nothing of that name is in %s yet; it is watched for when it appears", p, dir)
		}
	}
	if err := svc.CheckReadyPort(spec.ReadyPort); err != nil && !a.Force {
		return word(err)
	} else if err != nil {
		v.Voice.Warnf("%v; it will not count as ready", err)
	}
	res, err := svc.Start(ctx, svc.StartOptions{Home: v.Home, Name: name, Settle: a.Settle, Spec: spec, Port: a.Port})
	if res == nil {
		return cli.WithCode(wordName(err, name), cli.ExitUsage) // nothing was started
	}
	err = v.started(ctx, res, err, "")
	if finished(res) && !v.JSON {
		run := cmdline.ShellLine(append([]string{"svc", "run", "--"}, spec.Command...))
		v.Voice.Notef("hint: svc start is for a command that keeps running; %s runs one that finishes", run)
	}
	if res.Status == svc.Exited && len(spec.Watch) > 0 && (spec.Restart == "" || spec.Restart == "no") && !v.JSON {
		v.Voice.Notef("hint: --watch restarts a service on a change while it runs, and a change does not start one that ended; with --restart on-failure, a change restarts it at once after a crash")
	}
	return err
}

// finished is a start whose command ended at once with success: a
// command that finishes, which svc run is for.
func finished(res *svc.StartResult) bool {
	return res.Status == svc.Exited && res.ExitCode != nil && *res.ExitCode == 0 && res.Restarts == 0
}

// envFiles puts the lines of the --env-file files before the --env
// values, which win.
func envFiles(files, env []string) ([]string, error) {
	var out []string
	for _, f := range files {
		kvs, err := dotenv.Read(f)
		if err != nil {
			return nil, cli.Usagef("--env-file %v", err)
		}
		out = append(out, kvs...)
	}
	return append(out, env...), nil
}

// Port prints a service's port.
func (v *Verbs) Port(name string) error {
	d, err := v.Resolve(name)
	if err != nil {
		return err
	}
	p, err := svc.Port(d)
	if err != nil {
		return word(err)
	}
	_, err = fmt.Fprintln(v.Out, p)
	return err
}

// givenName is the --name flag's value: absent is "" (the name comes
// from the command), but an empty --name is an error — a script that
// passes an unset variable must not start a service it did not name.
// svc.Start checks the name itself.
func givenName(flag *string) (string, error) {
	if flag == nil {
		return "", nil
	}
	if *flag == "" {
		return "", cli.WithHint(cli.Usagef("--name is empty"), "leave --name out to name the service after its command")
	}
	return *flag, nil
}

// wordName is a start's error, with a project's service's name given to
// --name said as such.
func wordName(err error, name string) error {
	var ne *svc.NameError
	if errors.As(err, &ne) && strings.Contains(name, "/") && svc.ValidName(name) == nil {
		return cli.WithHint(cli.Usagef("%q names a project's service", name), "svc up starts a project's services from its svc.toml or Procfile")
	}
	return word(err)
}

// resolveSpec resolves what the command line gives for the spec: the
// command after --, bare --env K from this environment, the working
// directory. svc.Start checks the spec (Spec.Check).
func (v *Verbs) resolveSpec(s svc.Spec) (svc.Spec, error) {
	argv, err := CommandArgs(s.Command, "start")
	if err != nil {
		return s, err
	}
	s.Command = argv
	if s.Env, err = envAssignments(s.Env, v.Getenv); err != nil {
		return s, err
	}
	if s.LogKeep == 0 {
		// A spec's 0 is the default; the flag shows the default, and 0
		// generations is refused as the spec refuses fewer.
		s.LogKeep = -1
	}
	if s.Cwd == "" {
		s.Cwd, _ = os.Getwd()
	}
	return s, nil
}

// envAssignments reads --env values: K=V as given, and a bare K takes
// the caller's own value of K (so that a secret need not be typed on a
// command line).
func envAssignments(kvs []string, getenv func(string) string) ([]string, error) {
	out := make([]string, 0, len(kvs))
	for _, kv := range kvs {
		if strings.Contains(kv, "=") {
			out = append(out, kv)
			continue
		}
		v := getenv(kv)
		if v == "" {
			return nil, cli.WithHint(cli.Usagef("--env %q is not K=V, and %s is not set here", kv, kv),
				"give K=V, or export K first to pass its value without writing it on the command line")
		}
		out = append(out, kv+"="+v)
	}
	return out, nil
}

// CommandArgs is the command given after --, which must not be empty.
func CommandArgs(args []string, verb string) ([]string, error) {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return nil, cli.Usagef("no command to %s (svc %s -- CMD ARGS...)", verb, verb)
	}
	return args, nil
}

// started prints what a start found and returns its exit status: nil for
// a live service, 1 for one that ended or failed, a start error as it is,
// and an interruption — the service runs on — as the signal.
func (v *Verbs) started(ctx context.Context, res *svc.StartResult, err error, note string) error {
	interrupted := res != nil && err != nil && ctx.Err() != nil
	if err != nil && !interrupted {
		return word(err)
	}
	if interrupted {
		note = ""
	}
	if v.JSON {
		// stopNote as it always was, beside the cause it says
		res.StopNote = svctext.StopNote(res.StopCause, res.StopNote, words)
		cli.PrintJSON(v.Out, res)
	} else {
		fmt.Fprint(v.Out, FormatStart(res))
		if note != "" {
			fmt.Fprintln(v.Out, note)
		}
	}
	switch {
	case interrupted:
		return v.interrupted(ctx, fmt.Sprintf("%s runs on (%s): svc stop %s stops it", res.Name, res.Status, res.Name))
	case res.Status.Live():
		return nil
	}
	return cli.Quiet(cli.ExitFailure)
}

// Restart stops the service and starts it again from its spec, with
// stopSignal as its stop signal when it is not "".
func (v *Verbs) Restart(ctx context.Context, name, stopSignal string) error {
	d, err := v.Resolve(name)
	if err != nil {
		return err
	}
	res, err := svc.RestartWith(ctx, d, stopSignal)
	if err != nil && res == nil {
		return word(err)
	}
	return v.started(ctx, res, err, "")
}

// Run runs a command in the foreground, or starts it as a service when it
// looks long-running; the exit status is the command's.
func (v *Verbs) Run(ctx context.Context, req svc.RunRequest, name *string) error {
	argv, err := CommandArgs(req.Argv, "run")
	if err != nil {
		return err
	}
	if req.Name, err = givenName(name); err != nil {
		return err
	}
	req.Argv, req.Home = argv, v.Home
	if v.JSON {
		req.Out = nil
	}
	out, err := svc.Run(ctx, req)
	if out == nil {
		return cli.Failf("%v", err)
	}
	if bg := out.Background; bg != nil || err != nil {
		name := ""
		if bg != nil {
			name = bg.Name
		}
		return v.started(ctx, bg, err, fmt.Sprintf("started in the background, as it does not look like it exits on its own: svc tail %s, svc stop %s (svc run --background never to run it here)", name, name))
	}
	return v.ran(ctx, out.Foreground, req.Timeout)
}

func (v *Verbs) ran(ctx context.Context, res *proc.RunResult, timeout time.Duration) error {
	if note := svctext.Ran(res, timeout, words); note != "" {
		res.Footer = note
	}
	var sig *cli.SignalError
	if res.Interrupted && errors.As(context.Cause(ctx), &sig) {
		res.ExitCode = 128 + int(sig.Signal)
	}
	if v.JSON {
		cli.PrintJSON(v.Out, res)
	} else if res.Footer != "" {
		v.Voice.Notef("%s", res.Footer)
	}
	if res.ExitCode != 0 {
		return cli.Quiet(res.ExitCode)
	}
	return nil
}

// List prints every service, liveness reconciled; a service that cannot
// be read is a warning, not the end of the list. projectDir: only the
// services svc up started from that directory.
func (v *Verbs) List(projectDir string) error {
	rows, errs := svc.LookAll(v.Home)
	for _, err := range errs {
		v.Voice.Warnf("%v", say(err))
	}
	proxy := svc.ProxiedAmong(v.Home, rows)
	if projectDir != "" {
		project, _, err := svc.ProjectServices(v.Home, projectDir)
		if err != nil {
			return err
		}
		rows = slices.DeleteFunc(rows, func(l *svc.Listing) bool { return project == "" || !strings.HasPrefix(l.Name, project+"/") })
	}
	if !v.JSON {
		fmt.Fprint(v.Out, FormatList(rows, time.Now(), proxy))
		return nil
	}
	for _, l := range rows {
		cli.PrintJSON(v.Out, ListJSON(l, proxy))
	}
	return nil
}

// Status prints one service: 0 when it is live, 3 when it is not.
func (v *Verbs) Status(name string) error {
	d, err := v.Resolve(name)
	if err != nil {
		return err
	}
	l, err := svc.Look(d)
	if err != nil {
		return cli.Usagef("%v", say(err))
	}
	var tail []string
	if crashed(l) {
		tail = svc.EndTail(d, &l.State)
	}
	if v.JSON {
		j := listJSONOf(l, svc.LookProxied(v.Home))
		j.Tail = tail
		cli.PrintJSON(v.Out, j)
	} else {
		fmt.Fprint(v.Out, FormatStatus(l, time.Now(), svc.LookProxied(v.Home))+svctext.Tail(tail))
	}
	if l.Status.Live() {
		return nil
	}
	return cli.Quiet(3)
}

// crashed reports whether a service ended by itself and not well (an exit
// code other than 0, a signal, or it could not start), or is starting
// again after a crash: status then shows the tail of its log, as start
// did.
func crashed(l *svc.Listing) bool {
	switch l.Status {
	case svc.Failed:
		return true
	case svc.Exited:
		return l.Signal != "" || l.ExitCode != nil && *l.ExitCode != 0
	case svc.Starting:
		return l.Restarts > 0 // restarting after a crash: why is in its log
	}
	return false
}

func (v *Verbs) listing(l *svc.Listing) {
	if v.JSON {
		cli.PrintJSON(v.Out, ListJSON(l, svc.LookProxied(v.Home)))
	} else {
		fmt.Fprint(v.Out, FormatStatus(l, time.Now(), svc.LookProxied(v.Home)))
	}
}

// Tail prints the rows of the named services (all: every service), one
// service's as they are, several interleaved with their names.
func (v *Verbs) Tail(ctx context.Context, names []string, all bool, projectDir string, o TailOptions) error {
	if all {
		every, err := svc.List(v.Home)
		if err != nil {
			return err
		}
		names = append(names, every...)
	}
	if projectDir != "" {
		project, ps, err := svc.ProjectServices(v.Home, projectDir)
		if err != nil {
			return err
		}
		if project == "" {
			return cli.Usagef("svc up never ran in %s", projectDir)
		}
		names = append(names, ps...)
	}
	if len(names) == 0 {
		return cli.Usagef("name a service to tail, --project DIR or --all")
	}
	ds, err := v.ResolveAll(names)
	if err != nil {
		return err
	}
	o.Color = cli.UseColor("auto", v.Out, v.Getenv)
	o.Gone = v.rotatedAway
	return Tail(ctx, v.Out, ds, o, v.JSON)
}

// rotatedAway says that rows a tail asked for were gone.
func (v *Verbs) rotatedAway(name string, first, last int64) {
	rows := fmt.Sprintf("row %d", first)
	if last > first {
		rows = fmt.Sprintf("rows %d-%d", first, last)
	}
	v.Voice.Notef("%s of %s went with the log's rotation before they were read (--log-keep keeps more)", rows, name)
}

// Stop stops the named services (all: every live one too) and prints a
// report for each; 1 when any could not be stopped whole.
func (v *Verbs) Stop(names []string, all bool, grace time.Duration) error {
	if all {
		names = append(names, svc.LiveNames(v.Home)...)
		if len(names) == 0 && !v.JSON {
			fmt.Fprintln(v.Out, "no services running: nothing to stop")
			return nil
		}
	} else if len(names) == 0 {
		return cli.Usagef("name a service to stop, or --all")
	}
	ds, err := v.ResolveAll(names)
	if err != nil {
		return err // nothing stopped
	}
	failed := false
	for _, d := range ds {
		rep, err := svc.Stop(d, grace)
		if err != nil {
			v.Voice.Error(say(err))
			failed = true
			continue
		}
		failed = failed || len(rep.StillAlive) > 0
		if v.JSON {
			cli.PrintJSON(v.Out, rep)
		} else {
			fmt.Fprint(v.Out, FormatStop(rep))
		}
	}
	if failed {
		return cli.Quiet(cli.ExitFailure)
	}
	return nil
}

// Remove forgets stopped services; force stops a live one first.
func (v *Verbs) Remove(names []string, force bool) error {
	ds, err := v.ResolveAll(names)
	if err != nil {
		return err // nothing removed
	}
	for _, d := range ds {
		if force && svc.Supervised(d) {
			if _, err := svc.Stop(d, 0); err != nil {
				return say(err)
			}
		}
		if err := svc.Remove(d); err != nil {
			return cli.Usagef("%v", say(err))
		}
	}
	return nil
}

// Wait waits until the service is ready: 0 ready, 1 ended, 124 timeout.
func (v *Verbs) Wait(ctx context.Context, name string, timeout time.Duration) error {
	d, err := v.Resolve(name)
	if err != nil {
		return err
	}
	l, err := svc.WaitReady(ctx, d, timeout)
	if ctx.Err() != nil && l != nil {
		return v.interrupted(ctx, fmt.Sprintf("%s runs on (%s): svc stop %s stops it", d.Name, l.Status, d.Name))
	} else if ctx.Err() != nil {
		return ctx.Err()
	}
	if l != nil && (v.JSON || err == nil) {
		v.listing(l)
	}
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded) && l != nil && l.Status == svc.Unhealthy:
		// Ready again once a probe passes: it was waited for, and the
		// reason it is not is the health's.
		why := svctext.Unhealthy(&l.State, time.Now())
		if why == "" {
			why = "unhealthy"
		}
		return cli.Timeoutf("%s was not ready within %v: it is %s", d.Name, timeout, why)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return cli.Timeoutf("%s was not ready within %v", d.Name, timeout)
	case err != nil && l == nil:
		return cli.Usagef("%v", say(err))
	case err != nil:
		return cli.Failf("%v", say(err))
	}
	return nil
}

// interrupted is how a verb ends when a signal ends its wait. Ctrl-C is
// the intended way out of a wait, so SIGINT is no error: the note says
// what was left running, and the status is 130. Any other signal is
// reported as the signal, after the note.
func (v *Verbs) interrupted(ctx context.Context, left string) error {
	v.Voice.Notef("interrupted; %s", left)
	var sig *cli.SignalError
	if errors.As(context.Cause(ctx), &sig) && sig.Signal == syscall.SIGINT {
		return cli.Quiet(128 + int(sig.Signal))
	}
	return ctx.Err()
}
