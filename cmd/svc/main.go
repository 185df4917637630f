// Command svc starts long-running commands in the background, knows when
// they are ready, keeps every line of their logs and stops whole process
// trees. See svc(1).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc"
	"github.com/agentry/agentry/lib/svc/monitor"
	"github.com/alecthomas/kong"
)

func main() { os.Exit(cli.Main(app())) }

func app() cli.App {
	return cli.App{
		Name:        "svc",
		Description: "Start long-running commands in the background, know when they are ready, keep their logs, stop whole process trees.",
		Grammar:     &grammar{},
		Options: []kong.Option{kong.Vars{
			"readyTimeout": svc.DefaultReadyTimeout.String(), "settle": svc.DefaultSettle.String(),
			"stopGrace": svc.DefaultStopGrace.String(), "logMax": cli.Size(svc.DefaultLogMax).String(),
			"logKeep": fmt.Sprint(svc.DefaultLogKeep),
		}},
	}
}

type grammar struct {
	cli.Globals
	Start   startCmd   `cmd:"" help:"Start a command in the background and report the first true thing about it."`
	Ls      lsCmd      `cmd:"" help:"List every service, liveness reconciled."`
	Status  statusCmd  `cmd:"" help:"Show one service; exit 0 when it is live, 3 when it is not."`
	Tail    tailCmd    `cmd:"" help:"Print a service's log rows."`
	Stop    stopCmd    `cmd:"" help:"Stop services and everything they started."`
	Restart restartCmd `cmd:"" help:"Stop a service and start it again as it was started."`
	Rm      rmCmd      `cmd:"" help:"Forget stopped services."`
	Wait    waitCmd    `cmd:"" help:"Wait until a service is ready: 0 ready, 1 ended, 124 timeout."`
	Run     runCmd     `cmd:"" help:"Run a command in the foreground that never hangs; long-running ones go to the background."`
	// The monitor is this binary re-executed by svc start with a hidden
	// subcommand it names explicitly; it is never guessed from the
	// environment.
	Monitor monitorCmd `cmd:"" name:"__monitor" hidden:""`
}

type monitorCmd struct {
	Home string `arg:""`
	Name string `arg:""`
}

func (c *monitorCmd) Run() error { return monitor.Run(svc.Dir{Home: c.Home, Name: c.Name}) }

type runCmd struct {
	Timeout    time.Duration `help:"Stop the command's whole tree after this long (exit 124)." placeholder:"DUR"`
	Background string        `help:"auto: start dev servers, watchers and the like as services; always; never." enum:"auto,always,never" default:"auto" placeholder:"WHEN"`
	Cwd        string        `help:"Run the command in this directory." placeholder:"DIR"`
	Name       string        `help:"The service's name, when it goes to the background." placeholder:"NAME"`
	JSON       bool          `name:"json" help:"Print one JSON object at the end (with the output in it) instead of streaming the output."`
	Command    []string      `arg:"" passthrough:"" name:"command" help:"The command, after --: one argument runs through /bin/sh -c, several are executed directly."`
}

func (c *runCmd) Run(ctx context.Context, env *cli.Env) error {
	argv, err := commandArgs(c.Command, "run")
	if err != nil {
		return err
	}
	h, err := svc.Home(env.Getenv)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	opts := proc.RunOptions{Argv: argv, Cwd: c.Cwd, Timeout: c.Timeout, Out: env.Stdout}
	if c.JSON {
		opts.Out = nil
	}
	out, err := svc.Run(ctx, svc.RunRequest{RunOptions: opts, Background: c.Background, Home: h, Name: c.Name, Executable: executable()})
	if out == nil {
		return cli.Failf("%v", err)
	}
	if bg := out.Background; bg != nil || err != nil {
		return reportStart(ctx, env, bg, err, c.JSON, fmt.Sprintf("started in the background, as it does not look like it exits on its own: svc tail %s, svc stop %s (svc run --background never to run it here)", nameOf(bg), nameOf(bg)))
	}
	res := out.Foreground
	if res.Interrupted {
		var sig *cli.SignalError
		if errors.As(context.Cause(ctx), &sig) {
			res.ExitCode = 128 + int(sig.Signal)
		}
	}
	if c.JSON {
		cli.PrintJSON(env.Stdout, res)
	} else if res.Footer != "" {
		env.Voice().Notef("%s", res.Footer)
	}
	if res.ExitCode != 0 {
		return cli.Quiet(res.ExitCode)
	}
	return nil
}

func nameOf(r *svc.StartResult) string {
	if r == nil {
		return ""
	}
	return r.Name
}

// commandArgs is the command given after --, which must not be empty.
func commandArgs(args []string, verb string) ([]string, error) {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return nil, cli.Usagef("no command to %s (svc %s -- CMD ARGS...)", verb, verb)
	}
	return args, nil
}

// executable is the svc binary, which svc start runs as the monitor.
func executable() string {
	exe, err := os.Executable()
	if err != nil {
		return os.Args[0]
	}
	return exe
}

func dir(env *cli.Env, name string) (svc.Dir, error) {
	h, err := svc.Home(env.Getenv)
	if err != nil {
		return svc.Dir{}, cli.Usagef("%v", err)
	}
	if err := svc.ValidName(name); err != nil {
		return svc.Dir{}, cli.Usagef("%v", err)
	}
	return svc.Dir{Home: h, Name: name}, nil
}

type startCmd struct {
	Name         string        `help:"The service's name (default: the command's base name, made unique)." placeholder:"NAME"`
	Cwd          string        `help:"Run the command in this directory." placeholder:"DIR"`
	Env          []string      `help:"Add K=V to the command's environment; a bare K passes this shell's value of K (repeatable)." placeholder:"K=V"`
	ReadyURL     string        `help:"Ready when this URL answers HTTP." placeholder:"URL" xor:"ready"`
	ReadyPort    int           `help:"Ready when this port accepts, held by the service." placeholder:"PORT" xor:"ready"`
	ReadyRegex   string        `help:"Ready when a log line matches this regular expression." placeholder:"RE" xor:"ready"`
	ReadyCmd     string        `help:"Ready when this shell command exits 0 (run every 100ms)." placeholder:"CMD" xor:"ready"`
	ReadyTimeout time.Duration `help:"With no readiness by then, a live service is running." default:"${readyTimeout}" placeholder:"DUR"`
	Settle       time.Duration `help:"Return after this long at most, whatever the state." default:"${settle}" placeholder:"DUR"`
	StopGrace    time.Duration `help:"Wait this long after SIGTERM before SIGKILL." default:"${stopGrace}" placeholder:"DUR"`
	LogMax       cli.Size      `help:"Rotate the log at this size." default:"${logMax}" placeholder:"SIZE"`
	LogKeep      int           `help:"Keep this many log generations." default:"${logKeep}" placeholder:"N"`
	Force        bool          `help:"Start even when --ready-port is already held by another process (with a warning)."`
	UntilExit    int           `help:"Stop the service when process PID exits, such as the calling shell: --until-exit $$." placeholder:"PID"`
	Restart      string        `help:"Restart the command when it ends: no, on-failure or always, with exponential backoff." enum:"no,on-failure,always" default:"no" placeholder:"WHEN"`
	MaxRestarts  int           `help:"Give up after this many restarts (0: never)." default:"0" placeholder:"N"`
	JSON         bool          `name:"json" help:"Print the result as one JSON object."`
	Command      []string      `arg:"" passthrough:"" name:"command" help:"The command, after --: one argument runs through /bin/sh -c, several are executed directly."`
}

func (c *startCmd) Run(ctx context.Context, env *cli.Env) error {
	spec, err := c.spec(env)
	if err != nil {
		return err
	}
	warning, err := svc.CheckReadyPort(c.ReadyPort, c.Force)
	if err != nil {
		return err
	}
	if warning != "" {
		env.Voice().Warnf("%s", warning)
	}
	h, err := svc.Home(env.Getenv)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	res, err := svc.Start(ctx, svc.StartOptions{Home: h, Name: c.Name, Settle: c.Settle, Executable: executable(), Spec: spec})
	if res == nil {
		return cli.WithCode(err, cli.ExitUsage) // nothing was started
	}
	return reportStart(ctx, env, res, err, c.JSON, "")
}

// spec is the service's spec from the flags, checked.
func (c *startCmd) spec(env *cli.Env) (svc.Spec, error) {
	argv, err := commandArgs(c.Command, "start")
	if err != nil {
		return svc.Spec{}, err
	}
	envs, err := svc.EnvAssignments(c.Env, env.Getenv)
	if err != nil {
		return svc.Spec{}, err
	}
	switch {
	case c.LogKeep < 1:
		return svc.Spec{}, cli.Usagef("--log-keep must be at least 1")
	case c.MaxRestarts < 0:
		return svc.Spec{}, cli.Usagef("--max-restarts cannot be negative")
	}
	cwd := c.Cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
		return svc.Spec{}, cli.Usagef("--cwd %s is not a directory", cwd)
	}
	return svc.Spec{Command: argv, Cwd: cwd, Env: envs, ReadyURL: c.ReadyURL, ReadyPort: c.ReadyPort, ReadyRegex: c.ReadyRegex,
		ReadyCmd: c.ReadyCmd, ReadyTimeout: c.ReadyTimeout, StopGrace: c.StopGrace, LogMax: int64(c.LogMax), LogKeep: c.LogKeep,
		UntilExit: c.UntilExit, Restart: c.Restart, MaxRestarts: c.MaxRestarts}, nil
}

// reportStart prints what a start found and returns its exit status: 0
// for a live service, 1 for one that ended or failed, a start error as it
// is, and an interruption — the service runs on — as the signal.
func reportStart(ctx context.Context, env *cli.Env, res *svc.StartResult, err error, asJSON bool, note string) error {
	interrupted := res != nil && err != nil && ctx.Err() != nil
	if err != nil && !interrupted {
		return err
	}
	if interrupted {
		note = fmt.Sprintf("svc stop %s to stop it", res.Name)
	}
	if asJSON {
		cli.PrintJSON(env.Stdout, res)
	} else {
		fmt.Fprint(env.Stdout, svc.FormatStart(res))
		if note != "" {
			fmt.Fprintln(env.Stdout, note)
		}
	}
	switch {
	case interrupted:
		return ctx.Err()
	case res.Status.Live():
		return nil
	}
	return cli.Quiet(cli.ExitFailure)
}

type lsCmd struct {
	JSON bool `name:"json" help:"One JSON object per service."`
}

func (c *lsCmd) Run(env *cli.Env) error {
	h, err := svc.Home(env.Getenv)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	rows, errs := svc.LookAll(h)
	for _, err := range errs {
		env.Voice().Warnf("%v", err)
	}
	if !c.JSON {
		fmt.Fprint(env.Stdout, svc.FormatList(rows, time.Now()))
		return nil
	}
	for _, l := range rows {
		cli.PrintJSON(env.Stdout, svc.ListJSON(l))
	}
	return nil
}

type statusCmd struct {
	JSON bool   `name:"json" help:"Print the service as one JSON object."`
	Name string `arg:"" help:"The service."`
}

func (c *statusCmd) Run(env *cli.Env) error {
	d, err := dir(env, c.Name)
	if err != nil {
		return err
	}
	l, err := svc.Look(d)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	if c.JSON {
		cli.PrintJSON(env.Stdout, svc.ListJSON(l))
	} else {
		fmt.Fprint(env.Stdout, svc.FormatStatus(l, time.Now()))
	}
	if l.Status.Live() {
		return nil
	}
	return cli.Quiet(3)
}

type tailCmd struct {
	Lines  int    `short:"n" help:"Print the last N rows (default 10; every row after --since ROW)." default:"-1" placeholder:"N"`
	Follow bool   `short:"f" help:"Keep printing rows as they come, until the service has ended and its log is drained."`
	Since  int64  `help:"Print the rows after ROW." default:"-1" placeholder:"ROW"`
	JSON   bool   `name:"json" help:"Print {\"row\":N,\"line\":\"…\"} per row."`
	Name   string `arg:"" help:"The service."`
}

func (c *tailCmd) Run(ctx context.Context, env *cli.Env) error {
	d, err := dir(env, c.Name)
	if err != nil {
		return err
	}
	if _, err := os.Stat(d.Path()); err != nil {
		return cli.Usagef("no service called %s", c.Name)
	}
	since, err := svc.TailStart(d, c.Lines, c.Since)
	if err != nil {
		return err
	}
	print := svc.RowPrinter(env.Stdout, c.JSON)
	if c.Follow {
		return svc.Follow(ctx, d, since, print)
	}
	_, err = svc.ReadRows(d, since, print)
	return err
}

type stopCmd struct {
	All   bool          `help:"Stop every live service."`
	Grace time.Duration `help:"Wait this long after SIGTERM before SIGKILL (default: the service's own)." placeholder:"DUR"`
	JSON  bool          `name:"json" help:"Print each stop report as JSON: pids signalled, signals, time, SIGKILL, escapers."`
	Names []string      `arg:"" optional:"" name:"name" help:"The services."`
}

func (c *stopCmd) Run(env *cli.Env) error {
	h, err := svc.Home(env.Getenv)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	names := c.Names
	if c.All {
		names = append(names, svc.LiveNames(h)...)
	} else if len(names) == 0 {
		return cli.Usagef("name a service to stop, or --all")
	}
	failed := 0
	for _, n := range names {
		d, err := dir(env, n)
		if err != nil {
			return err
		}
		rep, err := svc.Stop(d, c.Grace)
		if err != nil {
			env.Voice().Error(err)
			failed++
			continue
		}
		if len(rep.StillAlive) > 0 {
			failed++
		}
		if c.JSON {
			cli.PrintJSON(env.Stdout, rep)
		} else {
			fmt.Fprint(env.Stdout, svc.FormatStop(rep))
		}
	}
	if failed > 0 {
		return cli.Quiet(cli.ExitFailure)
	}
	return nil
}

type restartCmd struct {
	JSON bool   `name:"json" help:"Print the start result as one JSON object."`
	Name string `arg:"" help:"The service."`
}

func (c *restartCmd) Run(ctx context.Context, env *cli.Env) error {
	d, err := dir(env, c.Name)
	if err != nil {
		return err
	}
	res, err := svc.Restart(ctx, d, executable())
	if err != nil && res == nil {
		return err
	}
	return reportStart(ctx, env, res, err, c.JSON, "")
}

type rmCmd struct {
	Force bool     `help:"Stop a live service first."`
	Names []string `arg:"" name:"name" help:"The services."`
}

func (c *rmCmd) Run(env *cli.Env) error {
	for _, n := range c.Names {
		d, err := dir(env, n)
		if err != nil {
			return err
		}
		if c.Force && svc.Supervised(d) {
			if _, err := svc.Stop(d, 0); err != nil {
				return err
			}
		}
		if err := svc.Remove(d); err != nil {
			return cli.Usagef("%v", err)
		}
	}
	return nil
}

type waitCmd struct {
	Timeout time.Duration `help:"Give up after this long (exit 124); 0 waits for ever." default:"60s" placeholder:"DUR"`
	JSON    bool          `name:"json" help:"Print the service as one JSON object."`
	Name    string        `arg:"" help:"The service."`
}

func (c *waitCmd) Run(ctx context.Context, env *cli.Env) error {
	d, err := dir(env, c.Name)
	if err != nil {
		return err
	}
	l, err := svc.WaitReady(ctx, d, c.Timeout)
	if ctx.Err() != nil {
		return ctx.Err() // interrupted: reported as the signal
	}
	if l != nil && c.JSON {
		cli.PrintJSON(env.Stdout, svc.ListJSON(l))
	} else if l != nil && err == nil {
		fmt.Fprint(env.Stdout, svc.FormatStatus(l, time.Now()))
	}
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return cli.Timeoutf("%s was not ready within %v", c.Name, c.Timeout)
	case err != nil && l == nil:
		return cli.Usagef("%v", err)
	case err != nil:
		return cli.Failf("%v", err)
	}
	return nil
}
