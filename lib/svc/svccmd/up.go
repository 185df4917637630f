package svccmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/cmdline"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc"
	"github.com/agentry/agentry/lib/svc/project"
	"github.com/agentry/agentry/lib/svc/svctext"
)

// UpArgs are svc up's flags.
type UpArgs struct {
	File         string // -f; "" finds svc.toml, then Procfile
	Names        []string
	DryRun       bool
	Attach       bool
	ReadyTimeout time.Duration
}

// load finds, reads and checks the project file, and names its project.
func (v *Verbs) load(given string) (*project.File, string, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, "", err
	}
	paths, err := project.FindNearest(given, cwd)
	if err != nil {
		if above := project.FileAbove(cwd, nil); given == "" && above != "" {
			return nil, "", cli.WithHint(cli.Usagef("%v", err), "outside git svc looks in this directory alone; for the project above it: svc up -f "+typed(cwd, above))
		}
		return nil, "", cli.WithHint(cli.Usagef("%v", err), "write a svc.toml or a Procfile there, or give one with -f FILE")
	}
	f, err := project.LoadAll(paths)
	if err != nil {
		return nil, "", cli.Usagef("%v", err)
	}
	proj, err := svc.ProjectName(v.Home, f.Dir)
	if err != nil {
		return nil, "", err
	}
	return f, proj, nil
}

// Up starts the project's services: 0 when every one asked for is up, 1
// when any is not, 2 when the file is wrong and nothing started.
func (v *Verbs) Up(ctx context.Context, a UpArgs) error {
	f, proj, err := v.load(a.File)
	if err != nil {
		return err
	}
	u := &project.Up{Home: v.Home, Project: proj, File: f, ReadyTimeout: a.ReadyTimeout,
		Report: v.printResult, Note: func(s string) { v.Voice.Notef("%s", s) }}
	if a.DryRun {
		return v.printPlan(u, a.Names)
	}
	begin := time.Now()
	unlock, err := v.lockProject(ctx, proj, "up")
	if err != nil {
		return err
	}
	ok, err := u.Run(ctx, a.Names)
	unlock()
	if ce := (*project.CheckError)(nil); errors.As(err, &ce) {
		return cli.Usagef("%v", err) // nothing started
	}
	switch {
	case ctx.Err() != nil && a.Attach:
		return v.detach(ctx, proj)
	case ctx.Err() != nil:
		return v.interrupted(ctx, fmt.Sprintf("what started runs on: svc ls --project %s lists it, svc down stops it", f.Dir))
	case err != nil:
		return err
	case !ok && a.Attach:
		v.down(context.Background(), proj, nil, 0)
		return cli.Failf("not every service came up, so the project is stopped again")
	case !ok:
		return cli.Failf("not every service came up (svc ls --project %s)", f.Dir)
	case a.Attach:
		return v.attach(ctx, proj, f, begin)
	}
	return nil
}

func (v *Verbs) printResult(r project.Result) {
	if v.JSON {
		cli.PrintJSON(v.Out, r)
		return
	}
	switch {
	case r.Action == project.ActSkipped:
		fmt.Fprintf(v.Out, "%s skipped: %s\n", r.Name, r.Reason)
	case r.Action == project.ActFailed:
		fmt.Fprintf(v.Out, "%s failed: %s\n", r.Name, r.Reason)
	case r.Action == project.ActUnchanged && r.Watcher:
		fmt.Fprintf(v.Out, "%s is unchanged: running (pid %d), a watcher\n", r.Name, r.Start.PID)
	case r.Action == project.ActUnchanged && r.Worker:
		fmt.Fprintf(v.Out, "%s is unchanged: running (pid %d), a worker\n", r.Name, r.Start.PID)
	case r.Action == project.ActUnchanged:
		fmt.Fprintf(v.Out, "%s is unchanged: %s\n", r.Name, standing(r.Start))
	default:
		switch {
		case r.Action == project.ActRestarted:
			fmt.Fprintf(v.Out, "%s: %s, so it was restarted\n", r.Name, r.Reason)
		case r.Reason != "":
			fmt.Fprintf(v.Out, "%s runs again: %s\n", r.Name, r.Reason)
		}
		if r.Worker {
			fmt.Fprint(v.Out, workerLine(r))
			return
		}
		s := *r.Start
		if r.Up && s.Status == svc.Exited {
			s.Tail = nil // a one-shot that succeeded: its output is in its log
		}
		fmt.Fprint(v.Out, FormatStart(&s))
	}
}

// workerLine says a service runs without listening, so svc up did not
// wait for it: a watcher (by its command), or a worker (nothing listened
// within project.WorkerSettle).
func workerLine(r project.Result) string {
	if r.Watcher {
		return fmt.Sprintf("%s is running (pid %d); a watcher: it does not listen\n", r.Name, r.Start.PID)
	}
	return fmt.Sprintf("%s is running (pid %d); a worker: it did not listen in its first %s\n", r.Name, r.Start.PID, project.WorkerSettle)
}

// standing is how a service stands, in a few words.
func standing(r *svc.StartResult) string {
	switch {
	case r.Status == svc.Ready && r.URL != "":
		return fmt.Sprintf("ready at %s (pid %d)", r.URL, r.PID)
	case r.Status == svc.Ready && r.Port > 0:
		return fmt.Sprintf("ready on port %d (pid %d)", r.Port, r.PID)
	case r.RestartAt != nil:
		return fmt.Sprintf("%s (its last run ended; it restarts %s)", r.Status, svctext.Until(*r.RestartAt, time.Now()))
	case r.Status.Live():
		return fmt.Sprintf("%s (pid %d)", r.Status, r.PID)
	}
	return project.Outcome(r) + " already"
}

func (v *Verbs) printPlan(u *project.Up, names []string) error {
	plan, err := u.Plan(names)
	if ce := (*project.CheckError)(nil); errors.As(err, &ce) {
		return cli.Usagef("%v", err)
	} else if err != nil {
		return err
	}
	if v.JSON {
		for _, p := range plan {
			cli.PrintJSON(v.Out, p)
		}
		return nil
	}
	v.printUnderstood(u.File)
	w := tabwriter.NewWriter(v.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "STEP\tSERVICE\tACTION\tAFTER")
	for _, p := range plan {
		after := strings.Join(p.DependsOn, ", ")
		if after == "" {
			after = "-"
		}
		action := map[string]string{project.ActStarted: "start", project.ActRestarted: "restart", project.ActUnchanged: "leave"}[p.Action]
		if p.Reason != "" {
			action += ": " + p.Reason
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\n", p.Level+1, p.Name, action, after)
	}
	return w.Flush()
}

// attach follows the project's logs from since until Ctrl-C (or until every service
// has ended), then stops the project, dependents first.
func (v *Verbs) attach(ctx context.Context, proj string, f *project.File, since time.Time) error {
	_, names, err := svc.ProjectServices(v.Home, f.Dir)
	if err != nil {
		return err
	}
	var ds []svc.Dir
	for _, n := range names {
		ds = append(ds, svc.Dir{Home: v.Home, Name: n})
	}
	// Every row since this svc up began, then on as they come.
	o := TailOptions{Lines: -1, Since: since.Format(time.RFC3339Nano), Follow: true, Color: cli.UseColor("auto", v.Out, v.Getenv), Gone: v.rotatedAway}
	terr := Tail(ctx, v.Out, ds, o, v.JSON)
	if ctx.Err() != nil {
		return v.detach(ctx, proj)
	}
	if err := v.down(context.Background(), proj, nil, 0); err != nil {
		return err
	}
	return terr
}

// detach stops the project of svc up --attach when a signal ends it (Ctrl-C
// is the way out), dependents first.
func (v *Verbs) detach(ctx context.Context, proj string) error {
	v.Voice.Notef("stopping %s, dependents first", proj)
	if err := v.down(context.Background(), proj, nil, 0); err != nil {
		return err
	}
	return v.interrupted(ctx, fmt.Sprintf("%s is stopped: none of its services is left running", proj))
}

// DownArgs are svc down's flags.
type DownArgs struct {
	File  string
	Names []string
	Grace time.Duration
	// Archive: then run conductor.json's archive script.
	Archive bool
}

// Down stops the project's services, dependents first: 1 when any could
// not be stopped whole.
func (v *Verbs) Down(ctx context.Context, a DownArgs) error {
	dir, err := v.projectDir(a.File)
	if err != nil {
		return err
	}
	proj, err := svc.Registry(v.Home).FindProject(dir)
	if err != nil {
		return err
	}
	var archive *project.File
	if a.Archive { // before anything stops: a usage error does nothing
		if archive, err = archiveFile(dir); err != nil {
			return err
		}
	}
	switch {
	case proj == "" && (len(a.Names) > 0 || archive == nil):
		err := cli.Usagef("nothing to stop: svc up never ran in %s", dir)
		ran := func(d string) bool { p, _ := svc.Registry(v.Home).FindProject(d); return p != "" }
		if above := project.FileAbove(dir, ran); a.File == "" && above != "" {
			return cli.WithHint(err, "outside git svc looks in this directory alone; for the project above it: svc down -f "+typed(dir, above))
		}
		return err
	case proj == "":
		fmt.Fprintf(v.Out, "no services: svc up never ran in %s\n", dir)
	default:
		err = v.down(ctx, proj, a.Names, a.Grace)
	}
	if err != nil || archive == nil {
		return err
	}
	return v.archive(archive, dir)
}

// archiveFile is the project in dir, whose conductor.json has an archive
// script.
func archiveFile(dir string) (*project.File, error) {
	path := filepath.Join(dir, project.ConductorFile)
	if _, err := os.Stat(path); err != nil {
		return nil, cli.Usagef("--archive: no %s in %s", project.ConductorFile, dir)
	}
	paths, err := project.FindAll("", dir)
	if err != nil {
		return nil, cli.Usagef("%v", err)
	}
	f, err := project.LoadAll(paths)
	if err != nil {
		return nil, cli.Usagef("%v", err)
	}
	if f.Archive == "" {
		return nil, cli.Usagef("--archive: %s has no scripts.archive", path)
	}
	return f, nil
}

// archive runs conductor.json's archive script in dir, in the
// foreground: 1 when it fails.
func (v *Verbs) archive(f *project.File, dir string) error {
	// The same workspace name and ports the setup and run scripts had:
	// the worktree's block, which stays while the worktree does.
	wt, err := svc.ReservePorts(v.Home, f.Dir, f.PortBlock)
	if err != nil {
		return err
	}
	argv := slices.Concat([]string{"env"}, project.ConductorEnv(f.Dir, wt.Slug, strconv.Itoa(wt.PortBase)),
		[]string{"SVC_WORKTREE=" + wt.Slug, "SVC_SLOT=" + strconv.Itoa(wt.Slot), "/bin/sh", "-c", f.Archive})
	res, err := proc.RunForeground(context.Background(), proc.RunOptions{Argv: argv, Cwd: dir, Out: v.Out})
	if err != nil {
		return err
	}
	if note := svctext.Ran(res, 0, words); note != "" {
		v.Voice.Notef("the archive script: %s", note)
	}
	if res.ExitCode != 0 {
		return cli.Failf("the archive script failed (exit status %d)", res.ExitCode)
	}
	return nil
}

// typed is path as a person in dir would type it: relative when that
// is shorter.
func typed(dir, path string) string {
	if rel, err := filepath.Rel(dir, path); err == nil && len(rel) < len(path) {
		return rel
	}
	return path
}

// projectDir is the project's directory: the given file's, else the
// nearest one at or above this one (within its git checkout) with a
// project file or a project svc up started, else this one.
func (v *Verbs) projectDir(file string) (string, error) {
	if file == "" {
		cwd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		known := func(d string) bool { p, _ := svc.Registry(v.Home).FindProject(d); return p != "" }
		if dir, err := project.Locate(cwd, known); err == nil {
			return dir, nil
		}
		return cwd, nil
	}
	abs, err := filepath.Abs(file)
	return filepath.Dir(abs), err
}

// lockProject takes the project's lock for svc up or svc down, saying so
// when another holds it: one at a time starts or stops its services. A
// signal while it waits is the verb's end, having done nothing.
func (v *Verbs) lockProject(ctx context.Context, proj, verb string) (unlock func(), err error) {
	if svc.InProject(v.Getenv, proj) {
		// Run by a service of the project, which the svc up that started
		// it may wait on while it holds the lock (a one-shot that runs svc
		// up of another service): waiting would be waiting for itself.
		return func() {}, nil
	}
	unlock, err = v.waitProject(ctx, proj, verb)
	if err != nil && ctx.Err() != nil {
		did := map[string]string{"up": "started", "down": "stopped"}[verb]
		return nil, v.interrupted(ctx, "nothing was "+did)
	}
	return unlock, err
}

// waitProject waits for the project's lock, saying who holds it.
func (v *Verbs) waitProject(ctx context.Context, proj, verb string) (unlock func(), err error) {
	return svc.LockProject(ctx, v.Home, proj, verb, func(h svc.ProjectHolder) {
		switch h.Verb {
		case "up":
			v.Voice.Notef("svc up (pid %d) is starting %s's services: waiting for it to end", h.PID, proj)
		case "down":
			v.Voice.Notef("svc down (pid %d) is stopping %s's services: waiting for it to end", h.PID, proj)
		default:
			v.Voice.Notef("another svc up or svc down is starting or stopping %s's services: waiting for it to end", proj)
		}
	})
}

// down stops the project's services (names: those), once no other svc up
// or svc down of the project runs; a signal while it waits for that stops
// nothing.
func (v *Verbs) down(ctx context.Context, proj string, names []string, grace time.Duration) error {
	unlock, err := v.lockProject(ctx, proj, "down")
	if err != nil {
		return err
	}
	defer unlock()
	failed, any := false, false
	err = project.Down(v.Home, proj, names, grace, func(s project.Stopped) {
		any = true
		if s.Err != nil {
			v.Voice.Error(s.Err)
			failed = true
			return
		}
		failed = failed || len(s.Report.StillAlive) > 0
		if v.JSON {
			cli.PrintJSON(v.Out, s.Report)
		} else {
			fmt.Fprint(v.Out, FormatStop(s.Report))
		}
	})
	switch {
	case err != nil:
		return cli.Usagef("%v", err)
	case failed:
		return cli.Quiet(cli.ExitFailure)
	case !any && !v.JSON:
		fmt.Fprintf(v.Out, "nothing to stop: no service of %s is running\n", proj)
	}
	return nil
}

// printUnderstood says what svc up made of the files that are not its
// own format (.claude/launch.json, conductor.json): one line a service.
func (v *Verbs) printUnderstood(f *project.File) {
	if len(f.Sources) > 0 {
		// Several files make the project: which services are the first's.
		var own []string
		for _, d := range f.Services {
			if d.From == "" {
				own = append(own, d.Name)
			}
		}
		if len(own) > 0 {
			fmt.Fprintf(v.Out, "%s: %s\n", relTo(f.Dir, f.Path), strings.Join(own, ", "))
		}
	}
	for _, d := range f.Services {
		if d.From == "" {
			continue
		}
		parts := []string{cmdline.ShellLine(d.Command)}
		switch {
		case d.Port == svc.PortAuto:
			parts = append(parts, "port auto")
		case d.Port != "":
			parts = append(parts, "port "+d.Port)
		}
		if d.ReadyURL != "" {
			parts = append(parts, "ready at "+d.ReadyURL)
		}
		if d.Oneshot {
			parts = append(parts, "a one-shot")
		}
		if len(d.Needs) > 0 {
			parts = append(parts, "after "+strings.Join(project.NeedNames(d), ", "))
		}
		if len(d.Env) > 0 {
			keys := make([]string, len(d.Env))
			for i, kv := range d.Env {
				keys[i], _, _ = strings.Cut(kv, "=")
			}
			parts = append(parts, "env "+strings.Join(keys, " "))
		}
		fmt.Fprintf(v.Out, "%s: %s: %s\n", relTo(f.Dir, d.From), d.Name, strings.Join(parts, "; "))
	}
	if f.Archive != "" {
		fmt.Fprintf(v.Out, "%s: archive: %s; run by svc down --archive\n", project.ConductorFile, f.Archive)
	}
}

// relTo is path as from dir, when it is below it.
func relTo(dir, path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if rel, err := filepath.Rel(dir, abs); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}
