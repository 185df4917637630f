// Command svc starts long-running commands in the background, knows when
// they are ready, keeps every line of their logs and stops whole process
// trees. See svc(1).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/svc"
)

func main() {
	// The monitor is this binary re-executed with a hidden subcommand that
	// svc start names explicitly; it is never guessed from the environment.
	if len(os.Args) == 5 && os.Args[1] == svc.MonitorCommand {
		var spec svc.Spec
		if err := json.Unmarshal([]byte(os.Args[4]), &spec); err != nil {
			os.Exit(2)
		}
		os.Exit(svc.RunMonitor(svc.Dir{Home: os.Args[2], Name: os.Args[3]}, spec, os.NewFile(3, "report")))
	}
	os.Exit(cli.Main(app()))
}

func app() cli.App {
	return cli.App{
		Name:        "svc",
		Description: "Start long-running commands in the background, know when they are ready, keep their logs, stop whole process trees.",
		Grammar:     &grammar{},
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
}

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
	line := strings.Join(argv, " ")
	if c.Background == "always" || c.Background == "auto" && svc.LooksLongRunning(line) {
		return c.background(ctx, env, argv)
	}
	out := env.Stdout
	if c.JSON {
		out = nil
	}
	res, err := svc.RunForeground(ctx, svc.RunOptions{Argv: argv, Cwd: c.Cwd, Timeout: c.Timeout, Out: out})
	if err != nil {
		return cli.Failf("%v", err)
	}
	if res.Interrupted {
		var sig *cli.SignalError
		if errors.As(context.Cause(ctx), &sig) {
			res.ExitCode = 128 + int(sig.Signal)
		}
	}
	if c.JSON {
		cli.PrintJSON(env.Stdout, res)
	} else if res.Footer != "" {
		fmt.Fprintf(env.Stderr, "svc: %s\n", res.Footer)
	}
	if res.ExitCode != 0 {
		return cli.Quiet(res.ExitCode)
	}
	return nil
}

// background starts a command that would not exit as a service.
func (c *runCmd) background(ctx context.Context, env *cli.Env, argv []string) error {
	h, err := home(env)
	if err != nil {
		return err
	}
	cwd := c.Cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	monitor, err := monitorArgv()
	if err != nil {
		return err
	}
	res, err := svc.Start(ctx, svc.StartOptions{Home: h, Name: c.Name, Settle: 4 * time.Second, Monitor: monitor,
		Spec: svc.Spec{Command: argv, Cwd: cwd, ReadyTimeout: 60 * time.Second, StopGrace: 5 * time.Second, LogMax: 16 << 20, LogKeep: 5}})
	if res != nil && err != nil && ctx.Err() != nil {
		return interruptedStart(ctx, env, res, c.JSON)
	}
	if errors.Is(err, svc.ErrNameTaken) {
		return cli.Usagef("%v", err)
	}
	if err != nil {
		return err
	}
	res.Background = true
	return reportStart(env, res, c.JSON, fmt.Sprintf("started in the background, as it does not look like it exits on its own: svc tail %s, svc stop %s (svc run --background never to run it here)", res.Name, res.Name))
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

// monitorArgv is how svc runs a service's monitor: itself, with the hidden
// subcommand.
func monitorArgv() ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return []string{exe, svc.MonitorCommand}, nil
}

func home(env *cli.Env) (string, error) {
	h, err := svc.Home(env.Getenv)
	if err != nil {
		return "", cli.Usagef("%v", err)
	}
	return h, nil
}

func dir(env *cli.Env, name string) (svc.Dir, error) {
	h, err := home(env)
	if err != nil {
		return svc.Dir{}, err
	}
	if err := svc.ValidName(name); err != nil {
		return svc.Dir{}, cli.Usagef("%v", err)
	}
	return svc.Dir{Home: h, Name: name}, nil
}

type startCmd struct {
	Name         string        `help:"The service's name (default: the command's base name, made unique)." placeholder:"NAME"`
	Cwd          string        `help:"Run the command in this directory." placeholder:"DIR"`
	Env          []string      `help:"Add K=V to the command's environment (repeatable)." placeholder:"K=V"`
	ReadyURL     string        `help:"Ready when this URL answers HTTP." placeholder:"URL"`
	ReadyPort    int           `help:"Ready when this port accepts, held by the service." placeholder:"PORT"`
	ReadyRegex   string        `help:"Ready when a log line matches this regular expression." placeholder:"RE"`
	ReadyCmd     string        `help:"Ready when this shell command exits 0 (run every 100ms)." placeholder:"CMD"`
	ReadyTimeout time.Duration `help:"With no readiness by then, a live service is running." default:"60s" placeholder:"DUR"`
	Settle       time.Duration `help:"Return after this long at most, whatever the state." default:"4s" placeholder:"DUR"`
	StopGrace    time.Duration `help:"Wait this long after SIGTERM before SIGKILL." default:"5s" placeholder:"DUR"`
	LogMax       cli.Size      `help:"Rotate the log at this size." default:"16MiB" placeholder:"SIZE"`
	LogKeep      int           `help:"Keep this many log generations." default:"5" placeholder:"N"`
	Force        bool          `help:"Start even when --ready-port is already held by another process (with a warning)."`
	UntilExit    int           `help:"Stop the service when process PID exits, such as the calling shell: --until-exit $$." placeholder:"PID"`
	Restart      string        `help:"Restart the command when it ends: no, on-failure or always, with exponential backoff." enum:"no,on-failure,always" default:"no" placeholder:"WHEN"`
	MaxRestarts  int           `help:"Give up after this many restarts (0: never)." default:"0" placeholder:"N"`
	JSON         bool          `name:"json" help:"Print the result as one JSON object."`
	Command      []string      `arg:"" passthrough:"" name:"command" help:"The command, after --: one argument runs through /bin/sh -c, several are executed directly."`
}

func (c *startCmd) Run(ctx context.Context, env *cli.Env) error {
	argv, err := commandArgs(c.Command, "start")
	if err != nil {
		return err
	}
	n := 0
	for _, set := range []bool{c.ReadyURL != "", c.ReadyPort != 0, c.ReadyRegex != "", c.ReadyCmd != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return cli.Usagef("give at most one of --ready-url, --ready-port, --ready-regex and --ready-cmd")
	}
	for _, kv := range c.Env {
		if !strings.Contains(kv, "=") {
			return cli.Usagef("--env %q is not K=V", kv)
		}
	}
	if c.LogKeep < 1 {
		return cli.Usagef("--log-keep must be at least 1")
	}
	if c.MaxRestarts < 0 {
		return cli.Usagef("--max-restarts cannot be negative")
	}
	h, err := home(env)
	if err != nil {
		return err
	}
	cwd := c.Cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
		return cli.Usagef("--cwd %s is not a directory", cwd)
	}
	if c.ReadyPort > 0 {
		if holder := svc.PortHolder(c.ReadyPort); holder != "" {
			if !c.Force {
				return cli.WithHint(cli.Usagef("port %d is already held by %s", c.ReadyPort, holder),
					"stop that process, choose another port, or svc start --force to start anyway")
			}
			fmt.Fprintf(env.Stderr, "svc: warning: port %d is already held by %s; it will not count as ready\n", c.ReadyPort, holder)
		}
	}
	monitor, err := monitorArgv()
	if err != nil {
		return err
	}
	res, err := svc.Start(ctx, svc.StartOptions{Home: h, Name: c.Name, Settle: c.Settle, Monitor: monitor,
		Spec: svc.Spec{Command: argv, Cwd: cwd, Env: c.Env, ReadyURL: c.ReadyURL, ReadyPort: c.ReadyPort, ReadyRegex: c.ReadyRegex,
			ReadyCmd: c.ReadyCmd, ReadyTimeout: c.ReadyTimeout, StopGrace: c.StopGrace, LogMax: int64(c.LogMax), LogKeep: c.LogKeep,
			UntilExit: c.UntilExit, Restart: c.Restart, MaxRestarts: c.MaxRestarts}})
	if res != nil && err != nil && ctx.Err() != nil {
		return interruptedStart(ctx, env, res, c.JSON)
	}
	if errors.Is(err, svc.ErrNameTaken) {
		return cli.Usagef("%v", err)
	}
	if err != nil {
		return cli.WithCode(err, cli.ExitUsage)
	}
	return reportStart(env, res, c.JSON, "")
}

// interruptedStart shows a service whose start was interrupted — it runs
// on — and returns the interruption.
func interruptedStart(ctx context.Context, env *cli.Env, res *svc.StartResult, asJSON bool) error {
	reportStart(env, res, asJSON, fmt.Sprintf("svc stop %s to stop it", res.Name))
	return ctx.Err()
}

// reportStart prints what start found and returns start's exit status: 0
// for a live service, 1 for one that ended or failed.
func reportStart(env *cli.Env, res *svc.StartResult, asJSON bool, note string) error {
	if asJSON {
		cli.PrintJSON(env.Stdout, res)
	} else {
		fmt.Fprint(env.Stdout, svc.FormatStart(res))
		if note != "" {
			fmt.Fprintln(env.Stdout, note)
		}
	}
	if svc.Live(res.Status) {
		return nil
	}
	return cli.Quiet(cli.ExitFailure)
}

type lsCmd struct {
	JSON bool `name:"json" help:"One JSON object per service."`
}

func (c *lsCmd) Run(env *cli.Env) error {
	h, err := home(env)
	if err != nil {
		return err
	}
	names, err := svc.List(h)
	if err != nil {
		return err
	}
	var rows []*svc.Listing
	for _, n := range names {
		l, err := svc.Look(svc.Dir{Home: h, Name: n})
		if err != nil {
			fmt.Fprintf(env.Stderr, "svc: %v\n", err)
			continue
		}
		rows = append(rows, l)
	}
	if c.JSON {
		for _, l := range rows {
			cli.PrintJSON(env.Stdout, svc.ListJSON(l))
		}
		return nil
	}
	fmt.Fprint(env.Stdout, svc.FormatList(rows, time.Now()))
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
	if svc.Live(l.Status) {
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
	since := c.Since
	if since < 0 {
		n := c.Lines
		if n < 0 {
			n = 10
		}
		last, err := svc.LastRow(d)
		if err != nil {
			return err
		}
		since = max(last-int64(n), 0)
	} else if c.Lines >= 0 {
		last, _ := svc.LastRow(d)
		since = max(since, last-int64(c.Lines))
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
	h, err := home(env)
	if err != nil {
		return err
	}
	names := c.Names
	if c.All {
		all, _ := svc.List(h)
		for _, n := range all {
			// Live, not just supervised: a service whose monitor was
			// killed still runs, and --all must stop it too.
			if l, err := svc.Look(svc.Dir{Home: h, Name: n}); err == nil && svc.Live(l.Status) {
				names = append(names, n)
			}
		}
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
			fmt.Fprintf(env.Stderr, "svc: error: %v\n", err)
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
	s, err := svc.ReadState(d)
	if err != nil {
		return cli.Usagef("cannot restart %s: %v", c.Name, err)
	}
	if _, err := svc.Stop(d, 0); err != nil {
		return err
	}
	s.Spec.UntilExit = 0 // the process it was tied to is not ours to pin again
	monitor, err := monitorArgv()
	if err != nil {
		return err
	}
	res, err := svc.Start(ctx, svc.StartOptions{Home: d.Home, Name: c.Name, Settle: 4 * time.Second, Monitor: monitor, Spec: s.Spec})
	if res != nil && err != nil && ctx.Err() != nil {
		return interruptedStart(ctx, env, res, c.JSON)
	}
	if err != nil {
		return err
	}
	return reportStart(env, res, c.JSON, "")
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
