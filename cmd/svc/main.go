// Command svc starts long-running commands in the background, knows when
// they are ready, keeps every line of their logs and stops whole process
// trees. See svc(1).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc"
	"github.com/agentry/agentry/lib/svc/mcpserver"
	"github.com/agentry/agentry/lib/svc/svccmd"
	"github.com/alecthomas/kong"
)

func main() {
	// What a caller leaked to svc (a shell's pipe, a forgotten file) goes
	// no further: not to a monitor that outlives the caller, nor to a
	// service.
	proc.CloseOnExecFrom(3)
	os.Exit(cli.Main(app()))
}

func app() cli.App {
	return cli.App{
		Name:        "svc",
		Description: "Start long-running commands in the background, know when they are ready, keep their logs, stop whole process trees.",
		Grammar:     &grammar{},
		Options: []kong.Option{kong.Vars{
			"readyTimeout": svc.DefaultReadyTimeout.String(), "settle": svc.DefaultSettle.String(),
			"stopGrace": svc.DefaultStopGrace.String(), "logMax": cli.Size(svc.DefaultLogMax).String(),
			"logKeep": fmt.Sprint(svc.DefaultLogKeep), "proxyPort": fmt.Sprint(svc.DefaultProxyPort),
			"detachKeys": svc.DefaultDetachKeys,
		}, kong.BindToProvider(verbs)},
		Completers: map[string]func() []string{
			"service": func() []string { return svccmd.CompleteNames(os.Getenv) },
			"project": svccmd.CompleteProjectNames,
		},
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
	Send    sendCmd    `cmd:"" help:"Type text into a --pty service's terminal (escapes: \\n \\r \\t \\e \\xHH …)."`
	Attach  attachCmd  `cmd:"" help:"Show a --pty service's terminal and type into it until the detach keys (Ctrl-]); it runs on."`
	Port    portCmd    `cmd:"" help:"Print a service's port, for scripts."`
	Run     runCmd     `cmd:"" help:"Run a command in the foreground that never hangs; long-running ones go to the background."`
	Up      upCmd      `cmd:"" help:"Start a project's services from svc.toml or a Procfile, in dependency order."`
	Down    downCmd    `cmd:"" help:"Stop a project's services, dependents first."`
	Mcp     mcpCmd     `cmd:"" name:"mcp" help:"Serve svc to an agent as MCP tools, over stdio or streamable HTTP on loopback."`
	Env     envCmd     `cmd:"" help:"Print the ports, URLs, worktree and slot of this project's services as KEY=VALUE lines, or run a command with them."`
	Who     whoCmd     `cmd:"" help:"Say which process holds a port, and which service, worktree and scope it belongs to."`
	Gc      gcCmd      `cmd:"" name:"gc" help:"Stop and remove the services whose worktree, directory or owner is gone."`
	Export  exportCmd  `cmd:"" help:"Write a project's services as units of an init system (systemd)."`
	Proxy   proxyCmd   `cmd:"" help:"Run the proxy that gives each HTTP service a stable URL, http://NAME.localhost:PORT/ (NAME.WORKTREE or NAME.PROJECT where the short name would be shared; a service itself)."`

	// The verbs other tools taught (pm2, docker, heroku), each answered
	// with svc's own.
	Logs otherVerb `cmd:"" hidden:"" passthrough:""`
	Log  otherVerb `cmd:"" hidden:"" passthrough:""`
	Kill otherVerb `cmd:"" hidden:"" passthrough:""`
	Ps   otherVerb `cmd:"" hidden:"" passthrough:""`
}

// otherVerb is a verb svc does not have.
type otherVerb struct {
	Args []string `arg:"" optional:""`
}

func (c *otherVerb) Run(kctx *kong.Context) error {
	return svccmd.OtherVerb(kctx.Selected().Name, c.Args)
}

type exportCmd struct {
	Systemd exportSystemdCmd `cmd:"" help:"Write one systemd unit per service of the project, and a target that groups them."`
}

type exportSystemdCmd struct {
	File  string   `short:"f" help:"The project file (default: found as svc up finds it)." placeholder:"FILE" type:"path"`
	User  bool     `help:"Units for a user's manager (systemctl --user), not the system's."`
	Print bool     `help:"Print the files, each after a ### PATH line, instead of writing them."`
	Dir   string   `arg:"" name:"dir" help:"Where the units go (with --print, would go: their EnvironmentFile= name files there)." type:"path"`
	Names []string `arg:"" optional:"" name:"name" help:"The services to export, with what they depend on (default: all)." predictor:"project"`
}

func (c *exportSystemdCmd) Run(v *svccmd.Verbs) error {
	return v.ExportSystemd(svccmd.ExportArgs{File: c.File, User: c.User, Print: c.Print, Dir: c.Dir, Names: c.Names})
}

type proxyCmd struct {
	Port  string `help:"The proxy's port on loopback: a number, or auto." default:"${proxyPort}" placeholder:"N|auto"`
	JSON  bool   `name:"json" help:"Print the proxy as one JSON object."`
	Serve bool   `hidden:"" help:"Serve on loopback at $PORT, in the foreground: what the svc-proxy service runs."`
}

func (c *proxyCmd) Run(ctx context.Context, v *svccmd.Verbs) error {
	if c.Serve {
		return v.ServeProxy(ctx)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	return v.Proxy(ctx, svccmd.ProxyArgs{Port: c.Port, Self: self})
}

type envCmd struct {
	All     bool     `help:"Every service of this worktree, not only the project svc up started in this directory."`
	JSON    bool     `name:"json" help:"Print one JSON object of the variables."`
	Command []string `arg:"" optional:"" passthrough:"partial" name:"command" help:"Run this command with the variables in its environment, after --."`
}

func (c *envCmd) Run(v *svccmd.Verbs) error {
	cmd := c.Command
	if len(cmd) > 0 && cmd[0] == "--" {
		cmd = cmd[1:]
	}
	return v.Env(svccmd.EnvArgs{All: c.All, Command: cmd})
}

type whoCmd struct {
	JSON bool   `name:"json" help:"Print the answer as one JSON object."`
	Port string `arg:"" help:"The port."`
}

func (c *whoCmd) Run(v *svccmd.Verbs) error {
	return v.Who(c.Port)
}

type gcCmd struct {
	DryRun bool          `help:"Print what would be stopped and removed, and do nothing."`
	Hook   bool          `help:"Read a Claude Code hook's JSON input on stdin: a WorktreeRemove hook's worktree_path is collected as though gone."`
	Going  []string      `arg:"" optional:"" name:"worktree" help:"Worktrees about to be removed: their services are collected as though they were gone." type:"path"`
	Grace  time.Duration `help:"Wait this long after the stop signal before SIGKILL (default: each service's own)." placeholder:"DUR"`
	JSON   bool          `name:"json" help:"One JSON object per service collected."`
}

func (c *gcCmd) Run(env *cli.Env, v *svccmd.Verbs) error {
	return v.GC(svccmd.GCArgs{DryRun: c.DryRun, Grace: c.Grace, Going: c.Going, Hook: c.Hook, Stdin: env.Stdin})
}

type mcpCmd struct {
	HTTP      string `name:"http" help:"Serve streamable HTTP on this loopback address (127.0.0.1:0 picks a port) and print its URL first, instead of stdio." placeholder:"ADDR"`
	Scope     string `help:"Start every service as SCOPE/NAME, and see and stop only those." placeholder:"SCOPE"`
	UntilExit string `help:"Stop every service started here, and this server, when process PID exits; parent is the process that started svc mcp (its MCP client, over stdio)." placeholder:"PID|parent"`
}

// untilExit is --until-exit's pid: a positive number, or parent, this
// process's parent; 0 when not given.
func (c *mcpCmd) untilExit() (int, error) {
	switch c.UntilExit {
	case "":
		return 0, nil
	case "parent":
		if pp := os.Getppid(); pp > 1 {
			return pp, nil
		}
		return 0, cli.Usagef("--until-exit parent: svc mcp has no parent left to tie its services to (it is init's)")
	}
	pid, err := strconv.Atoi(c.UntilExit)
	if err != nil || pid <= 0 {
		return 0, cli.Usagef("--until-exit %s: give a process id (a positive number) or parent", c.UntilExit)
	}
	return pid, nil
}

// Run serves the MCP tools in this process: the monitors the tools start
// are svc-monitor, so the MCP SDK is in none of them.
func (c *mcpCmd) Run(ctx context.Context, env *cli.Env) error {
	home, err := svc.Home(env.Getenv)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	if c.Scope != "" {
		var ne *svc.NameError
		switch err := svc.ClaimScope(home, c.Scope, c.Scope); {
		case errors.As(err, &ne):
			return cli.Usagef("--scope %q: scopes are named as services are, and %s", c.Scope, ne.Problem)
		case err != nil:
			return cli.Usagef("--scope %v", err)
		}
	}
	until, err := c.untilExit()
	if err != nil {
		return err
	}
	if until > 0 {
		// The server ends with the process too, as the services it
		// starts do: one left serving could only refuse every start.
		gone, err := proc.WatchExit(until)
		if err != nil {
			return cli.Usagef("--until-exit %s: %v", c.UntilExit, err)
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-gone:
				cancel()
				// A stdio server blocked reading an input nobody closes
				// does not see the cancel: it is given a moment, and
				// then the process ends (its services end on their own).
				time.Sleep(2 * time.Second)
				os.Exit(0)
			case <-ctx.Done():
			}
		}()
	}
	s := &mcpserver.Server{Home: home, Scope: c.Scope, UntilExit: until, Version: cli.Version()}
	if c.HTTP == "" {
		return s.ServeStdio(ctx, io.NopCloser(env.Stdin), nopWriteCloser{env.Stdout})
	}
	err = s.ServeHTTP(ctx, c.HTTP, func(url string) { fmt.Fprintln(env.Stdout, url) })
	if ae := (*mcpserver.AddrError)(nil); errors.As(err, &ae) {
		return cli.Usagef("--http %v", err)
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

type upCmd struct {
	File         string        `short:"f" help:"The project file (default: svc.toml, else Procfile, in this directory)." placeholder:"FILE" type:"path"`
	DryRun       bool          `help:"Print what would start, restart or be left alone, in order, and start nothing."`
	Attach       bool          `help:"Then follow every service's log, and on Ctrl-C stop the project, dependents first."`
	ReadyTimeout time.Duration `help:"The ready timeout of services whose file gives none." default:"${readyTimeout}" placeholder:"DUR"`
	JSON         bool          `name:"json" help:"One JSON object per service as its result is known (with --dry-run: per step)."`
	Names        []string      `arg:"" optional:"" name:"name" help:"The services to bring up, with what they depend on (default: all)." predictor:"project"`
}

func (c *upCmd) Run(ctx context.Context, v *svccmd.Verbs) error {
	return v.Up(ctx, svccmd.UpArgs{File: c.File, Names: c.Names, DryRun: c.DryRun, Attach: c.Attach, ReadyTimeout: c.ReadyTimeout})
}

type downCmd struct {
	File    string        `short:"f" help:"The project file, whose directory is the project (default: this directory)." placeholder:"FILE" type:"path"`
	Grace   time.Duration `help:"Wait this long after the stop signal before SIGKILL (default: each service's own)." placeholder:"DUR"`
	Archive bool          `help:"Then run conductor.json's archive script in the project's directory."`
	JSON    bool          `name:"json" help:"Print each stop report as JSON."`
	Names   []string      `arg:"" optional:"" name:"name" help:"The services, by their names in the project (default: all of it)." predictor:"project"`
}

func (c *downCmd) Run(ctx context.Context, v *svccmd.Verbs) error {
	return v.Down(ctx, svccmd.DownArgs{File: c.File, Names: c.Names, Grace: c.Grace, Archive: c.Archive})
}

// verbs is svc's command line (lib/svc/svccmd) in this environment, which
// kong hands every Run that takes it: its output is JSON when the
// command chosen has --json, and it was given.
func verbs(env *cli.Env, kctx *kong.Context) (*svccmd.Verbs, error) {
	return svccmd.NewVerbs(env.Getenv, env.Stdout, jsonFlag(kctx), env.Voice())
}

// jsonFlag is the value of the chosen command's --json, false when it
// has none.
func jsonFlag(kctx *kong.Context) bool {
	for _, f := range kctx.Flags() {
		if f.Name == "json" {
			on, _ := kctx.FlagValue(f).(bool)
			return on
		}
	}
	return false
}

type runCmd struct {
	Timeout    time.Duration `help:"Stop the command's whole tree after this long (exit 124)." placeholder:"DUR"`
	Background string        `help:"auto: start dev servers, watchers and the like as services; always; never." enum:"auto,always,never" default:"auto" placeholder:"WHEN"`
	Cwd        string        `help:"Run the command in this directory." placeholder:"DIR"`
	Name       *string       `help:"The service's name, when it goes to the background." placeholder:"NAME"`
	JSON       bool          `name:"json" help:"Print one JSON object at the end (with the output in it) instead of streaming the output."`
	Command    []string      `arg:"" passthrough:"partial" name:"command" help:"The command, after --: one argument runs through /bin/sh -c, several are executed directly."`
}

func (c *runCmd) Run(ctx context.Context, v *svccmd.Verbs) error {
	return v.Run(ctx, svc.RunRequest{RunOptions: proc.RunOptions{Argv: c.Command, Cwd: c.Cwd, Timeout: c.Timeout, Out: v.Out},
		Background: c.Background}, c.Name)
}

type startCmd struct {
	Name         *string       `help:"The service's name (default: the script, tool or program the command runs, made unique: see svc(1))." placeholder:"NAME"`
	Cwd          string        `help:"Run the command in this directory." placeholder:"DIR"`
	Env          []string      `help:"Add K=V to the command's environment; a bare K passes this shell's value of K (repeatable)." placeholder:"K=V"`
	EnvFile      []string      `help:"Add the K=V lines of a dotenv file to the command's environment; --env wins (repeatable)." placeholder:"FILE" type:"path"`
	Port         string        `help:"Give the command a port: auto picks a free one; it is in $PORT and replaces {port} in the command." placeholder:"auto|N"`
	Pty          bool          `help:"Run the command on a pseudo-terminal, so stdio prints each line as it is written, and svc send and attach can type into it."`
	StopKeys     string        `help:"With --pty, type this into the terminal to stop the service, before the stop signal (quit()\\n for a REPL; escapes as svc send)." placeholder:"TEXT"`
	ReadyURL     string        `help:"Ready when this URL answers HTTP." placeholder:"URL" xor:"ready"`
	ReadyPort    int           `help:"Ready when this port accepts, held by the service." placeholder:"PORT" xor:"ready"`
	ReadyRegex   string        `help:"Ready when a log line matches this regular expression." placeholder:"RE" xor:"ready"`
	ReadyCmd     string        `help:"Ready when this shell command exits 0 (run every 100ms)." placeholder:"CMD" xor:"ready"`
	ReadyTimeout time.Duration `help:"With no readiness by then, a live service is running." default:"${readyTimeout}" placeholder:"DUR"`
	Settle       time.Duration `help:"Return after this long at most, whatever the state." default:"${settle}" placeholder:"DUR"`
	StopGrace    time.Duration `help:"Wait this long after the stop signal before SIGKILL." default:"${stopGrace}" placeholder:"DUR"`
	StopSignal   string        `help:"Stop with this signal first (TERM, INT, QUIT, HUP, USR1, USR2, or a number; default TERM, INT for go run)." placeholder:"SIG"`
	NoFollow     bool          `help:"When the command exits 0 and leaves processes behind (a daemon), end the service and stop them rather than follow the daemon."`
	LogMax       cli.Size      `help:"Rotate the log at this size." default:"${logMax}" placeholder:"SIZE"`
	LogKeep      int           `help:"Keep this many log generations." default:"${logKeep}" placeholder:"N"`
	Force        bool          `help:"Start even when --ready-port is already held by another process (with a warning)."`
	UntilExit    int           `help:"Stop the service when process PID exits, such as the calling shell: --until-exit $$." placeholder:"PID"`
	Restart      string        `help:"Restart the command when it ends: no, on-failure or always, with exponential backoff; unhealthy: on-failure, and when its health probes fail." enum:"no,on-failure,always,unhealthy" default:"no" placeholder:"WHEN"`
	MaxRestarts  int           `help:"Give up after this many restarts (0: never)." default:"0" placeholder:"N"`
	JSON         bool          `name:"json" help:"Print the result as one JSON object."`
	Command      []string      `arg:"" passthrough:"partial" name:"command" help:"The command, after --: one argument runs through /bin/sh -c, several are executed directly."`
	healthFlags
	watchFlags
}

func (c *startCmd) Run(ctx context.Context, v *svccmd.Verbs) error {
	settle := c.Settle
	switch {
	case settle < 0:
		return cli.Usagef("--settle %v: give a time of 0 or more, the most svc start waits for the service to be ready", c.Settle)
	case settle == 0:
		settle = time.Nanosecond // return once it runs (the library's 0 is its default)
	}
	spec := svc.Spec{
		Command: c.Command, Cwd: c.Cwd, Env: c.Env, ReadyURL: c.ReadyURL, ReadyPort: c.ReadyPort, ReadyRegex: c.ReadyRegex,
		ReadyCmd: c.ReadyCmd, ReadyTimeout: c.ReadyTimeout, StopGrace: c.StopGrace, LogMax: int64(c.LogMax), LogKeep: c.LogKeep,
		UntilExit: c.UntilExit, Restart: c.Restart, MaxRestarts: c.MaxRestarts, StopSignal: c.StopSignal, NoFollow: c.NoFollow,
		HealthSpec: c.healthFlags.spec(), WatchSpec: c.watchFlags.spec()}
	if c.Pty {
		rows, cols := proc.TerminalSize(1, 2)
		spec.PTY = &svc.TermSize{Rows: rows, Cols: cols}
	}
	var err error
	if spec.StopKeys, err = svccmd.StopKeys(c.StopKeys); err != nil {
		return err
	}
	return v.Start(ctx, svccmd.StartArgs{Name: c.Name, Settle: settle, Force: c.Force, Port: c.Port, EnvFiles: c.EnvFile}, spec)
}

type portCmd struct {
	Name string `arg:"" help:"The service." predictor:"service"`
}

func (c *portCmd) Run(v *svccmd.Verbs) error {
	return v.Port(c.Name)
}

type lsCmd struct {
	JSON    bool   `name:"json" help:"One JSON object per service."`
	Project string `help:"Only the services svc up started from this directory." placeholder:"DIR" type:"path"`
}

func (c *lsCmd) Run(v *svccmd.Verbs) error {
	return v.List(c.Project)
}

type statusCmd struct {
	JSON bool   `name:"json" help:"Print the service as one JSON object."`
	Name string `arg:"" help:"The service." predictor:"service"`
}

func (c *statusCmd) Run(v *svccmd.Verbs) error {
	return v.Status(c.Name)
}

type tailCmd struct {
	Lines      int      `short:"n" help:"Print the last N rows of each service (default 10; every row after --since)." default:"-1" placeholder:"N"`
	Follow     bool     `short:"f" help:"Keep printing rows as they come, until every service has ended and its log is drained."`
	Since      string   `help:"Print the rows after row N, received in the last DUR (5m), or since a time (2026-12-01T10:00:00Z)." placeholder:"N|DUR|TIME"`
	Timestamps bool     `short:"t" help:"Prefix each row with the time svc received it."`
	All        bool     `help:"Every service, interleaved."`
	Project    string   `help:"Every service svc up started from this directory, interleaved." placeholder:"DIR" type:"path"`
	JSON       bool     `name:"json" help:"Print {\"row\":N,\"line\":\"…\",\"ts\":\"…\"} per row (and \"name\" for several services)."`
	Names      []string `arg:"" optional:"" name:"name" help:"The services: several are interleaved in the order their rows were received." predictor:"service"`
}

func (c *tailCmd) Run(ctx context.Context, v *svccmd.Verbs) error {
	return v.Tail(ctx, c.Names, c.All, c.Project, svccmd.TailOptions{Lines: c.Lines, Since: c.Since, Follow: c.Follow, Timestamps: c.Timestamps})
}

type stopCmd struct {
	All   bool          `help:"Stop every live service."`
	Grace time.Duration `help:"Wait this long after the stop signal before SIGKILL (default: the service's own)." placeholder:"DUR"`
	JSON  bool          `name:"json" help:"Print each stop report as JSON: pids signalled, signals, time, SIGKILL, escapers."`
	Names []string      `arg:"" optional:"" name:"name" help:"The services." predictor:"service"`
}

func (c *stopCmd) Run(v *svccmd.Verbs) error {
	return v.Stop(c.Names, c.All, c.Grace)
}

type restartCmd struct {
	JSON       bool   `name:"json" help:"Print the start result as one JSON object."`
	StopSignal string `help:"From now on, stop it with this signal first (as svc start --stop-signal)." placeholder:"SIG"`
	Name       string `arg:"" help:"The service." predictor:"service"`
}

func (c *restartCmd) Run(ctx context.Context, v *svccmd.Verbs) error {
	return v.Restart(ctx, c.Name, c.StopSignal)
}

type rmCmd struct {
	Force bool     `help:"Stop a live service first."`
	Names []string `arg:"" name:"name" help:"The services." predictor:"service"`
}

func (c *rmCmd) Run(v *svccmd.Verbs) error {
	return v.Remove(c.Names, c.Force)
}

type waitCmd struct {
	Timeout time.Duration `help:"Give up after this long (exit 124); 0 waits for ever." default:"60s" placeholder:"DUR"`
	JSON    bool          `name:"json" help:"Print the service as one JSON object."`
	Name    string        `arg:"" help:"The service." predictor:"service"`
}

func (c *waitCmd) Run(ctx context.Context, v *svccmd.Verbs) error {
	return v.Wait(ctx, c.Name, c.Timeout)
}

type sendCmd struct {
	JSON bool     `name:"json" help:"Print {\"name\":…,\"sent\":N}, the bytes the terminal took."`
	Name string   `arg:"" help:"The service, started with --pty." predictor:"service"`
	Text []string `arg:"" help:"The text to type, its escapes read; several are joined with spaces; - is standard input, as it is. Nothing is added: end a line with \\n."`
}

func (c *sendCmd) Run(v *svccmd.Verbs) error {
	return v.Send(c.Name, c.Text, os.Stdin)
}

type attachCmd struct {
	DetachKeys string `help:"The keys that detach: ctrl-X or single characters, separated by commas." default:"${detachKeys}" placeholder:"KEYS"`
	Name       string `arg:"" help:"The service, started with --pty." predictor:"service"`
}

func (c *attachCmd) Run(v *svccmd.Verbs) error {
	return v.Attach(c.Name, c.DetachKeys)
}
