// Command runagent runs one headless Claude Code, Codex or ACP agent at a
// permission level: prompt on stdin, answer on stdout. See runagent(1).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/agenthome"
	"github.com/agentry/agentry/lib/agentrun"
	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/cmdline"
	"github.com/agentry/agentry/lib/grant"
	"github.com/agentry/agentry/lib/proc"
	"github.com/alecthomas/kong"
	"golang.org/x/sys/unix"
)

func main() {
	proc.CloseOnExecFrom(3) // what a caller leaked to us goes no further than us
	// The agent runs as our user: without this it could read the
	// variables a clean environment keeps from it in our own
	// /proc/PID/environ (and our memory, by ptrace or /proc/PID/mem).
	// A process that is not dumpable has those owned by root; the agent,
	// a new program, is dumpable again, so this stays ours.
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	os.Exit(cli.Main(app()))
}

func app() cli.App {
	return cli.App{
		Name:        "runagent",
		Description: "Run one headless Claude Code, Codex or ACP agent at a permission level: prompt on stdin, answer on stdout.",
		Grammar:     &grammar{},
		// Every run pays for the parse, and a run over a fast agent is a
		// few milliseconds: kong's model of run is half a millisecond.
		Direct:  true,
		Options: []kong.Option{kong.Help(help)},
	}
}

// help is kong's help, but runagent's own (no command named) is run's,
// the default command, with the commands after its flags: the flags a
// run takes are what runagent --help is asked for.
func help(o kong.HelpOptions, ctx *kong.Context) error {
	if ctx.Selected() != nil {
		return kong.DefaultHelpPrinter(o, ctx)
	}
	run, err := kong.Trace(ctx.Kong, []string{"run"})
	if err != nil || run.Selected() == nil {
		return kong.DefaultHelpPrinter(o, ctx)
	}
	out := ctx.Kong.Stdout
	defer func() { ctx.Kong.Stdout = out }()
	var top, cmd strings.Builder
	ctx.Kong.Stdout = &top
	if err := kong.DefaultHelpPrinter(o, ctx); err != nil {
		return err
	}
	ctx.Kong.Stdout = &cmd
	if err := kong.DefaultHelpPrinter(o, run); err != nil {
		return err
	}
	head, _, ok1 := strings.Cut(top.String(), "\n\nFlags:\n")
	_, cmds, ok2 := strings.Cut(top.String(), "\n\nCommands:\n")
	usage, body, ok3 := strings.Cut(cmd.String(), "\n\n")
	_, body, ok4 := strings.Cut(body, "\n\n") // run's one-line description
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return kong.DefaultHelpPrinter(o, ctx)
	}
	_, desc, _ := strings.Cut(head, "\n\n")
	usage = strings.Replace(usage, ctx.Model.Name+" run ", ctx.Model.Name+" [run] ", 1)
	_, err = fmt.Fprintf(out, "%s\n       %s grants [--json]\n\n%s\n\n%s\n\nCommands:\n%s", usage, ctx.Model.Name, desc, strings.TrimRight(body, "\n"), cmds)
	return err
}

type grammar struct {
	cli.Globals
	Run    runCmd    `cmd:"" default:"withargs" help:"Run one agent (the default command)."`
	Grants grantsCmd `cmd:"" help:"Print what each level grants."`
}

type runCmd struct {
	Level              int           `short:"l" env:"RUNAGENT_LEVEL" help:"The permission level: 1, 2 or 3 (3 is today the same grant as 2; required, or RUNAGENT_LEVEL)." placeholder:"N"`
	Agent              string        `env:"RUNAGENT_AGENT" default:"claude" help:"The harness: claude, codex, or acp (any ACP agent, its command after --) (or RUNAGENT_AGENT)." placeholder:"NAME"`
	Dir                string        `short:"C" help:"The working copy, for levels 2 and 3 (default: the current directory)." placeholder:"DIR"`
	ToolsURL           string        `help:"The run's MCP server: the only one the agent gets." placeholder:"URL"`
	Model              string        `help:"The model." placeholder:"MODEL"`
	SessionID          string        `help:"Start a claude session with this UUID." placeholder:"UUID"`
	Resume             string        `help:"Continue a claude session, a codex thread, or an ACP agent's session (where it can load one)." placeholder:"ID"`
	NewSession         bool          `help:"Start a new session (claude: with a fresh UUID, reported in --json)."`
	PidFile            string        `help:"Write the agent's pid here the moment it starts." placeholder:"FILE"`
	MaxOutput          int           `help:"Cut the answer at this many characters." default:"1000000" placeholder:"N"`
	JSON               bool          `name:"json" help:"Print {ok, text|reason, agent, level, pid, session, exitCode, signal, truncated, durationMs, usage, stoppedBy, limit, stalled, partial, attempts, services, violation, questions, sessionId, denials, unusedAnswers}."`
	PrintArgs          bool          `help:"Print the agent's argv and grant, and start nothing."`
	File               string        `short:"f" help:"Read the prompt from FILE (- is standard input, after the words if any)." placeholder:"FILE"`
	CodexConfig        string        `help:"Take codex's model provider settings from this config.toml." placeholder:"FILE"`
	Services           bool          `help:"Levels 2 and 3: give the agent svc's tools to start servers without blocking; they are stopped when the run ends."`
	KeepServices       bool          `help:"With --services: leave the agent's services running after the run, and list them."`
	Schema             string        `help:"A JSON Schema the answer must conform to: the answer is then one line of JSON, checked here (exit 1 when it does not conform)." placeholder:"FILE" type:"path"`
	MaxTurns           int           `help:"Stop the agent after N turns (claude: model responses; codex: tool calls), counted by runagent over the whole run; exit 3 with what it had said." placeholder:"N"`
	MaxToolCalls       int           `help:"Stop the agent as its N-th tool call completes, over the whole run; exit 3." placeholder:"N"`
	MaxBudgetUSD       float64       `name:"max-budget-usd" help:"Stop once the run has cost this many US dollars, over every attempt; exit 3 (codex needs --price)." placeholder:"USD"`
	Price              string        `help:"Codex's price in US dollars per million tokens: input, output and cached input (default: the input's), for its cost and --max-budget-usd." placeholder:"IN,OUT[,CACHED]"`
	Retry              int           `help:"Resume the session up to N times after a transient failure: the API's 429 or 5xx, a cut stream, a signal nobody sent (default 0)." placeholder:"N"`
	RetryStalls        bool          `help:"With --retry: a stall (--idle-timeout) is a transient failure too."`
	WrapUp             bool          `help:"At a limit (turns, tool calls, budget, stall), resume the session once without tools for a report of what is done, what remains and where; print it as the answer (exit 3, partial in --json)."`
	Until              string        `help:"After each answer run CMD (sh -c, in the working copy); exit 0 when it succeeds, else resume the session with the end of its output, up to --attempts answers. Implies --preflight at levels 2 and 3." placeholder:"CMD"`
	Attempts           int           `help:"With --until: at most N answers (default 3)." placeholder:"N"`
	Preflight          bool          `help:"Before the first model call, prove the run can work: a writable working copy (levels 2 and 3), an agent that starts, a credential; exit 2 otherwise."`
	CleanEnv           bool          `help:"Give the agent only PATH, HOME, LANG, LC_*, TERM, TMPDIR, proxy and certificate variables, and its own (the default at level 1)."`
	EnvAllow           string        `env:"RUNAGENT_ENV_ALLOW" help:"A clean environment (--clean-env) that also passes these variables: names or globs, comma-separated." placeholder:"LIST"`
	Redact             string        `help:"Replace the values of these variables (comma-separated names) with [redacted:NAME] in the answer, --events, --json and --summary, though the agent gets them." placeholder:"NAMES"`
	Summary            string        `help:"Append a Markdown summary of the run to FILE (for $GITHUB_STEP_SUMMARY or a comment): outcome, attempts, turns, tokens, cost, duration, commands run, denials, services." placeholder:"FILE"`
	IdleTimeout        time.Duration `help:"Stop the agent when it has written nothing for this long: a stall (exit 124). Off by default." placeholder:"DUR"`
	Events             string        `help:"Write the run's progress to FILE (- for stderr) as agent-host protocol events, one JSON line each." placeholder:"FILE|-"`
	AppendSystemPrompt string        `help:"Add the text of FILE to the agent's system prompt (claude) or developer instructions (codex)." placeholder:"FILE" type:"path"`
	Effort             string        `help:"The reasoning effort: claude low|medium|high|xhigh|max, codex minimal|low|medium|high|xhigh." placeholder:"LEVEL"`
	Policy             string        `help:"Check every tool call against this policy file (agentry-policy(5)); a call it denies never runs, and --json lists it. Runs claude and codex through agentry's host." placeholder:"FILE"`
	Answers            string        `help:"Answer the agent's questions from FILE, a JSON object: a question's id or header → a label, or a list of labels; a question it does not answer ends the run (exit 5). Runs claude and codex through agentry's host." placeholder:"FILE"`
	Prompt             []string      `arg:"" optional:"" name:"prompt" help:"The prompt (else -f FILE, else standard input; -f - adds standard input after the words). It reaches the agent on its stdin, never on its argv. With --agent acp: the agent's command, after --."`
}

func (c *runCmd) Run(ctx context.Context, env *cli.Env) error {
	res, err := c.run(ctx, env)
	if err != nil {
		if c.JSON {
			c.printNotStarted(env, err)
		}
		return err
	}
	if res == nil { // --print-args
		return nil
	}
	if c.Summary != "" {
		writeSummary(env, c.Summary, agentrun.Summary(res))
	}
	if !c.JSON {
		reportServices(env, res.Services)
	}
	return c.report(env, res)
}

// notStarted is --json's object for a run that failed before its agent
// started (exit 2): no pid, no exit code, no usage.
type notStarted struct {
	OK     bool   `json:"ok"`
	Reason string `json:"reason"`
	Hint   string `json:"hint,omitempty"`
	Agent  string `json:"agent"`
	Level  int    `json:"level"`
}

// printNotStarted prints --json's object for err, a failure before the
// agent started; stderr says it too.
func (c *runCmd) printNotStarted(env *cli.Env, err error) {
	cli.PrintJSON(env.Stdout, notStarted{Reason: err.Error(), Hint: cli.Hint(err), Agent: c.Agent, Level: c.Level})
}

// run runs the agent, or with --print-args says what it would run
// (nil, nil); an error is a failure before the agent started, worded.
func (c *runCmd) run(ctx context.Context, env *cli.Env) (*agentrun.Result, error) {
	// runagent is a child subreaper, and starts every command through its
	// reaper: what the agent's tree orphans (a sandbox's wrapper whose
	// agent died as it started it) is handed to it, not to init, and ends
	// with the run (agentrun.Request.Reaper).
	reaper := proc.NewReaper()
	// A second signal while the first stops the run ends runagent at
	// once; what it runs goes first.
	cli.OnSecondSignal(ctx, func() { reaper.EndAll(time.Now().Add(time.Second)) })
	level, err := hostLevel(c.Level, env.Getenv("AGENTRY_LEVEL"))
	if err != nil {
		return nil, err
	}
	c.Level = level
	// The policy first: one that does not hold fails closed, before
	// anything is prepared or started.
	pol, err := c.policy()
	if err != nil {
		return nil, err
	}
	opts, schema, err := c.options(env, reaper)
	if err != nil {
		return nil, err
	}
	var g *grant.Grant
	if c.Agent == agentrun.ACP {
		if opts, g, err = c.acpOptions(); err != nil {
			return nil, err
		}
	} else if g, err = grant.For(opts); err != nil {
		return nil, wordGrant(err, opts.Harness)
	}
	if c.PrintArgs && g.Harness == agentrun.ACP {
		return nil, c.printACPArgs(env, g)
	}
	if c.PrintArgs {
		return nil, c.printArgs(env, g, opts)
	}
	req, closeEvents, err := c.request(env, g, opts, schema)
	if err != nil {
		return nil, err
	}
	req.Policy, req.Reaper = pol, reaper
	defer closeEvents()
	// A Direct command: from here on there are children, and a signal
	// must reach them through ctx rather than end runagent outright.
	cli.SignalsArmed(ctx)
	req.StopSignal = func() syscall.Signal {
		var sig *cli.SignalError
		if errors.As(context.Cause(ctx), &sig) {
			return sig.Signal
		}
		return syscall.SIGTERM
	}
	res, err := agentrun.Run(ctx, req)
	if err != nil {
		return nil, wordStart(err, env)
	}
	return res, nil
}

// wordStart words a run that did not get to start its agent (exit 2), or
// another failure of agentrun.Run as it is.
func wordStart(err error, env *cli.Env) error {
	var se *agentrun.StartError
	var ni *grant.NotInstalledError
	var pe *agentrun.PreflightError
	switch {
	case errors.Is(err, agentrun.ErrNoSvc):
		return cli.WithHint(cli.Usagef("--services needs svc, which is neither beside runagent nor on PATH"),
			"go install github.com/agentry/agentry/cmd/svc@latest (make install puts it beside runagent)")
	case errors.As(err, &ni) && ni.Harness == agentrun.ACP:
		if strings.ContainsRune(ni.Program, '/') {
			return cli.Usagef("the agent's command %s is not there, or not a program", ni.Program)
		}
		return cli.Usagef("the agent's command %s is not on this machine (not on PATH)", ni.Program)
	case errors.As(err, &ni):
		variable := "RUNAGENT_" + strings.ToUpper(ni.Harness) + "_BIN"
		if env.Getenv(variable) != "" { // a base name: no reason holds an absolute path
			return cli.WithHint(cli.Usagef("%s names %s, which is not on this machine", variable, filepath.Base(ni.Program)),
				"point "+variable+" at the "+ni.Harness+" to run, or unset it to run the one on PATH ("+grant.InstallCommand(ni.Harness)+")")
		}
		return cli.WithHint(cli.Usagef("%s", ni), grant.InstallAdvice(ni.Harness, variable))
	case errors.Is(err, agenthome.ErrNotSignedIn):
		return cli.WithHint(cli.Usagef("codex is not signed in on this machine (no credential and no model provider)"),
			"run codex login, set OPENAI_API_KEY, or give --codex-config a config.toml that names a model provider")
	case errors.As(err, &se):
		return cli.Usagef("%s", se.Reason)
	case errors.As(err, &pe):
		return cli.Usagef("%v; nothing was sent to the model", pe)
	}
	return err
}

// hostLevel is the level a run gets when a host ran it for a turn:
// agent-host's exec backend gives the turn's level as AGENTRY_LEVEL (and
// RUNAGENT_LEVEL, the default of -l), and the run gets the lower of it
// and -l: never more than the turn asked for, nor than the command line
// gives. AGENTRY_LEVEL alone grants nothing.
func hostLevel(level int, host string) (int, error) {
	if host == "" {
		return level, nil
	}
	n, err := strconv.Atoi(host)
	if err != nil || n < 1 || n > 3 {
		return 0, cli.Usagef("AGENTRY_LEVEL=%q: the levels are 1, 2 and 3", host)
	}
	if level > n {
		return n, nil
	}
	return level, nil
}

// options are the grant's inputs from the flags; schema is --schema,
// compiled, its validator started through reaper (a file that is no
// schema is a usage error here).
func (c *runCmd) options(env *cli.Env, reaper *proc.Reaper) (grant.Options, *agentrun.Schema, error) {
	var o grant.Options
	switch {
	case c.Level == 0:
		return o, nil, cli.WithHint(cli.Usagef("no level given (0 is none): runagent grants no implicit authority"), "give --level 1, 2 or 3 (or set RUNAGENT_LEVEL); runagent grants shows what each allows")
	case c.NewSession && (c.SessionID != "" || c.Resume != ""):
		return o, nil, cli.Usagef("--new-session cannot go with --session-id or --resume")
	case c.KeepServices && !c.Services:
		return o, nil, cli.Usagef("--keep-services goes with --services")
	case c.IdleTimeout < 0:
		return o, nil, cli.Usagef("--idle-timeout cannot be negative")
	case c.Retry < 0 || c.Attempts < 0 || c.MaxToolCalls < 0:
		return o, nil, cli.Usagef("--retry, --attempts and --max-tool-calls cannot be negative")
	case c.RetryStalls && c.Retry == 0:
		return o, nil, cli.Usagef("--retry-stalls goes with --retry N")
	case c.Attempts > 0 && c.Until == "":
		return o, nil, cli.Usagef("--attempts goes with --until")
	}
	if c.Agent == agentrun.ACP {
		return c.schemaOnly(reaper)
	}
	harness, err := grant.ParseHarness(c.Agent)
	if err != nil {
		return o, nil, wordGrant(err, "")
	}
	session := c.SessionID
	if c.NewSession && harness == grant.Claude {
		session = grant.NewSessionID()
	}
	o = grant.Options{Level: c.Level, Harness: harness, ToolsURL: c.ToolsURL, Model: c.Model,
		SessionID: session, Resume: c.Resume, Program: env.Getenv("RUNAGENT_" + strings.ToUpper(harness) + "_BIN"),
		MaxBudgetUSD: c.MaxBudgetUSD, Effort: c.Effort, PartialMessages: c.IdleTimeout > 0 || c.Events != "", Priced: c.Price != ""}
	if c.Price != "" && harness == grant.Claude {
		return o, nil, cli.Usagef("--price is for codex: claude reports its own cost")
	}
	if harness == grant.Claude {
		o.MaxTurns = c.MaxTurns // codex's are counted here
	}
	var prompts []string
	if c.AppendSystemPrompt != "" {
		b, err := os.ReadFile(c.AppendSystemPrompt)
		if err != nil {
			return o, nil, cli.Usagef("--append-system-prompt: %v", errors.Unwrap(err))
		}
		prompts = append(prompts, strings.TrimSpace(string(b)))
	}
	if c.Services {
		o.ServicesURL = agentrun.ServicesPending
		prompts = append(prompts, agentrun.ServicesPrompt(c.KeepServices))
	}
	// Claude's MCP servers and system prompt go in files of the run's
	// own, not on its argv (codex's are in its configuration file).
	o.FilesDir = agentrun.FilesPending
	o.AppendSystemPrompt = strings.Join(prompts, "\n\n")
	_, schema, err := c.schemaOnly(reaper)
	if schema != nil {
		o.Schema, o.SchemaFile = schema.Compact, schema.File
	}
	return o, schema, err
}

// schemaOnly compiles --schema, if given; a file that is no schema is a
// usage error.
func (c *runCmd) schemaOnly(reaper *proc.Reaper) (grant.Options, *agentrun.Schema, error) {
	var o grant.Options
	var schema *agentrun.Schema
	var err error
	if c.Schema != "" {
		schema, err = agentrun.LoadSchema(c.Schema, proc.Options{Reaper: reaper})
		var se *agentrun.SchemaError
		switch {
		case errors.Is(err, agentrun.ErrNoValidator):
			return o, nil, cli.WithHint(cli.Usagef("--schema needs %s, which is neither beside runagent nor on PATH", agentrun.Validator),
				"go install github.com/agentry/agentry/cmd/"+agentrun.Validator+"@latest (make install puts it beside runagent)")
		case errors.As(err, &se) && se.Problem == "read":
			return o, nil, cli.Usagef("--schema %s: %v", se.Path, se.Err)
		case errors.As(err, &se) && se.Problem == "json":
			return o, nil, cli.Usagef("--schema %s is not JSON: %v", se.Path, se.Err)
		case err != nil: // ndjson-schema's own words, which name the file
			return o, nil, cli.Usagef("%v", err)
		}
	}
	return o, schema, nil
}

// wordGrant is an option the grant refuses, named by runagent's flags
// (exit 2).
func wordGrant(err error, harness string) error {
	var o *grant.OptionError
	if !errors.As(err, &o) {
		return cli.Usagef("%v", err)
	}
	switch {
	case o.Option == "Harness":
		return cli.Usagef("unknown agent %q: runagent runs claude, codex or acp (any ACP agent, its command after --)", o.Value)
	case o.Option == "SessionID" && o.With == "Resume":
		return cli.Usagef("--session-id and --resume cannot be used together")
	case o.Option == "SessionID" && o.With == "Harness":
		return cli.Usagef("--session-id is for claude; codex names its own threads (resume one with --resume)")
	case o.Option == "SessionID":
		return cli.Usagef("--session-id %q is not a UUID, which claude requires", o.Value)
	case o.Option == "MaxTurns":
		return cli.Usagef("--max-turns cannot be negative")
	case o.Option == "MaxBudgetUSD" && o.With == "Priced":
		return cli.Usagef("--max-budget-usd needs --price for codex: codex reports no cost, so no budget can be kept without one")
	case o.Option == "MaxBudgetUSD":
		return cli.Usagef("--max-budget-usd cannot be negative")
	case o.Option == "Effort":
		return cli.Usagef("--effort %q: %s takes %s", o.Value, harness, strings.Join(o.Takes, ", "))
	case o.Option == "ServicesURL":
		return cli.Usagef("--services needs level 2 or 3: level 1 has no code tools, and so no servers to start")
	}
	return cli.Usagef("%v", err) // the level, in the words of -l's value
}

// request is the run's request: the prompt read, the working copy checked,
// the event log opened (closed by the func returned).
func (c *runCmd) request(env *cli.Env, g *grant.Grant, opts grant.Options, schema *agentrun.Schema) (agentrun.Request, func(), error) {
	req := agentrun.Request{Grant: g, Options: opts, PidFile: c.PidFile, MaxOutput: c.MaxOutput, Codex: agenthome.CodexSource{Config: c.CodexConfig, Keep: true},
		Schema: schema, IdleTimeout: c.IdleTimeout, MaxTurns: c.MaxTurns, MaxToolCalls: c.MaxToolCalls, MaxBudgetUSD: c.MaxBudgetUSD,
		Retry: c.Retry, RetryStalls: c.RetryStalls, WrapUp: c.WrapUp, Until: c.Until, Attempts: c.Attempts,
		Preflight: c.Preflight || c.Until != "" && g.Level >= 2, Redact: splitList(c.Redact), Words: agentrun.Words{Limit: limitFlag}}
	if c.CleanEnv || c.EnvAllow != "" || g.Level == 1 {
		req.Clean = &agentrun.CleanEnv{Allow: splitList(c.EnvAllow)}
	}
	var err error
	if req.Price, err = parsePrice(c.Price); err != nil {
		return req, nil, err
	}
	if base := env.Getenv("RUNAGENT_RETRY_BASE"); base != "" {
		if req.RetryBase, err = time.ParseDuration(base); err != nil || req.RetryBase <= 0 {
			return req, nil, cli.Usagef("RUNAGENT_RETRY_BASE=%s is not a duration such as 2s", base)
		}
	}
	if req.Answers, err = c.answers(); err != nil {
		return req, nil, err
	}
	if g.Harness == agentrun.ACP {
		req.Host = acpAgent()
	} else if c.hosted(g.Harness) {
		if req.Host, err = c.hostAgent(g.Harness); err != nil {
			return req, nil, err
		}
	}
	if c.Services {
		req.Services = &agentrun.ServicesOptions{Getenv: env.Getenv, Stderr: env.Stderr, Keep: c.KeepServices}
	}
	if req.Prompt, err = c.prompt(env, c.Resume != "" && req.Answers != nil); err != nil {
		return req, nil, err
	}
	if c.Resume != "" && req.Answers != nil {
		// The resumed session's agent was told nobody answered: the
		// answers come as its next input.
		req.Prompt = agentrun.ResumedPrompt(req.Answers, req.Prompt)
	}
	req.WorkDir = c.Dir
	if req.WorkDir == "" {
		req.WorkDir, _ = os.Getwd()
	}
	if st, err := os.Stat(req.WorkDir); err != nil || !st.IsDir() {
		return req, nil, cli.Usagef("-C %s is not a directory", req.WorkDir)
	}
	switch c.Events {
	case "":
		return req, func() {}, nil
	case "-":
		req.Events = env.Stderr
		return req, func() {}, nil
	}
	f, err := os.OpenFile(c.Events, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return req, nil, cli.Usagef("--events: %v", errors.Unwrap(err))
	}
	// A file that was there keeps its mode: made private, as a new one
	// is (a pipe or a device is left as it is).
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		_ = f.Chmod(0o600)
	}
	req.Events = f
	return req, func() { f.Close() }, nil
}

// limitFlag names a run's limit by the flag that gives it, with its value
// when n > 0: "--max-turns 3".
func limitFlag(l agentrun.Limit, n int) string {
	var flag string
	switch l {
	case agentrun.LimitTurns:
		flag = "--max-turns"
	case agentrun.LimitToolCalls:
		flag = "--max-tool-calls"
	case agentrun.LimitBudget:
		flag = "--max-budget-usd"
	default:
		return "" // the run's own words ("no tools", a wrap-up's)
	}
	if n > 0 {
		return flag + " " + strconv.Itoa(n)
	}
	return flag
}

// exitLimit is runagent's status when the agent was stopped at a limit it
// was given (--max-turns, --max-tool-calls, --max-budget-usd): not a
// failure, not an answer; exitStalled, when --idle-timeout stopped it.
const (
	exitLimit   = 3
	exitStalled = cli.ExitTimeout
)

// exitQuestion is runagent's status when the agent asked a question that
// --answers did not answer: the run ended there, nothing was chosen for
// the agent, and --resume with the answers continues it.
const exitQuestion = 5

// exitStatus is the status runagent exits with after a run: 0 for an
// answer, 128+N when signal N stopped it, exitStalled, exitLimit (a
// partial answer), else 1.
func exitStatus(res *agentrun.Result) int {
	switch {
	case res.OK:
		return 0
	case res.StoppedBy != "":
		return 128 + int(unix.SignalNum(res.StoppedBy))
	case res.Stalled:
		return exitStalled
	case res.Limit != agentrun.NoLimit:
		return exitLimit
	case res.Violation:
		return exitViolation
	case len(res.Questions) > 0:
		return exitQuestion
	}
	return 1
}

// report prints the run's answer (a partial one at a limit) or says why
// there is none, and returns the exit status.
func (c *runCmd) report(env *cli.Env, res *agentrun.Result) error {
	if c.JSON {
		cli.PrintJSON(env.Stdout, res)
	} else if res.OK || (res.Limit != agentrun.NoLimit || res.Partial) && res.Text != "" {
		text := res.Text
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		io.WriteString(env.Stdout, text)
	}
	if len(res.UnusedAnswers) > 0 && len(res.Questions) == 0 && res.StoppedBy == "" {
		// Known only now: no question the agent asked was answered by them.
		return cli.Usagef("--answers %s: %s %s no question the agent asked", c.Answers, quoteList(res.UnusedAnswers), plural(len(res.UnusedAnswers), "name", "names"))
	}
	switch {
	case res.OK:
		return nil
	case len(res.Questions) > 0:
		c.reportQuestions(env, res)
	case res.StoppedBy != "" || res.Limit != agentrun.NoLimit || res.Partial:
		env.Voice().Notef("%s", res.Reason)
	case !c.JSON:
		env.Voice().Error(errors.New(res.Reason))
	}
	return cli.Quiet(exitStatus(res))
}

// reportQuestions says, on stderr, the questions the run ended at and how
// to continue it.
func (c *runCmd) reportQuestions(env *cli.Env, res *agentrun.Result) {
	env.Voice().Notef("%s asked %d %s that no answer was given for; it was told nobody answered, and the run ended (exit %d)",
		res.Agent, len(res.Questions), plural(len(res.Questions), "questions", "question"), exitQuestion)
	for _, q := range res.Questions {
		var labels []string
		for _, o := range q.Options {
			labels = append(labels, o.Label)
		}
		line := fmt.Sprintf("  %s: %s", strconv.Quote(q.ID), q.Question)
		if len(labels) > 0 {
			kind := "one of"
			if q.MultiSelect {
				kind = "any of"
			}
			line += fmt.Sprintf(" [%s %s]", kind, quoteList(labels))
		}
		fmt.Fprintln(env.Stderr, line)
	}
	if res.SessionID != "" {
		fmt.Fprintf(env.Stderr, "  continue with: %s\n", c.continueLine(res))
	}
}

// continueLine is the command that continues a run with the answers in
// FILE, as it can be run: the run's working copy and, for an ACP agent,
// its command.
func (c *runCmd) continueLine(res *agentrun.Result) string {
	words := []string{"runagent", "--agent", res.Agent, "-l", strconv.Itoa(res.Level)}
	if c.Dir != "" {
		dir, err := filepath.Abs(c.Dir)
		if err != nil {
			dir = c.Dir
		}
		words = append(words, "-C", dir)
	}
	words = append(append(words, c.keptFlags()...), "--resume", res.SessionID, "--answers", "FILE")
	if c.Agent == agentrun.ACP {
		words = append(append(words, "--"), c.Prompt...)
	}
	return cmdline.ShellLine(words)
}

// keptFlags are the flags of this run that a run continuing it must have
// too, as given: what it may do (--policy, the caps, the environment, the
// MCP server), and how it runs (model, effort, instructions, schema). A
// continue line that dropped --policy would run on without it.
func (c *runCmd) keptFlags() []string {
	var out []string
	str := func(flag, v string) {
		if v != "" {
			out = append(out, flag, v)
		}
	}
	path := func(flag, v string) {
		if v != "" && v != "-" {
			if abs, err := filepath.Abs(v); err == nil {
				v = abs
			}
		}
		str(flag, v)
	}
	num := func(flag string, v float64) {
		if v > 0 {
			out = append(out, flag, strconv.FormatFloat(v, 'f', -1, 64))
		}
	}
	path("--policy", c.Policy)
	num("--max-turns", float64(c.MaxTurns))
	num("--max-tool-calls", float64(c.MaxToolCalls))
	num("--max-budget-usd", c.MaxBudgetUSD)
	str("--price", c.Price)
	if c.CleanEnv {
		out = append(out, "--clean-env")
	}
	str("--env-allow", c.EnvAllow)
	str("--redact", c.Redact)
	str("--tools-url", c.ToolsURL)
	path("--codex-config", c.CodexConfig)
	str("--model", c.Model)
	str("--effort", c.Effort)
	path("--append-system-prompt", c.AppendSystemPrompt)
	path("--schema", c.Schema)
	if c.Services {
		out = append(out, "--services")
	}
	if c.KeepServices {
		out = append(out, "--keep-services")
	}
	return out
}

// quoteList is the words quoted, comma-separated.
func quoteList(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = strconv.Quote(w)
	}
	return strings.Join(q, ", ")
}

// plural is many unless n is 1.
func plural(n int, many, one string) string {
	if n == 1 {
		return one
	}
	return many
}

// reportServices says, on stderr, what became of the agent's services.
func reportServices(env *cli.Env, ends []agentrun.ServiceEnd) {
	for _, e := range ends {
		where := e.URL
		if where == "" && e.Port > 0 {
			where = "port " + strconv.Itoa(e.Port)
		}
		switch {
		case e.Status == "kept":
			env.Voice().Notef("the agent's service %s runs on at %s (svc stop %s): %s", e.Name, orDash(where), e.Name, cmdline.ShellLine(e.Command))
		case e.StoppedBy != "":
			env.Voice().Notef("stopped the agent's service %s, which it left running: %s", e.Name, cmdline.ShellLine(e.Command))
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// prompt reads the prompt: -f FILE, the words, or standard input; it
// may be empty only when mayBeEmpty. -f - is standard input, which may
// follow words (git diff | runagent -l 1 -f - review this diff); with
// words alone, standard input is never read.
func (c *runCmd) prompt(env *cli.Env, mayBeEmpty bool) (string, error) {
	var p string
	words := c.Prompt
	if c.Agent == agentrun.ACP {
		words = nil // the agent's command
	}
	switch {
	case c.File == "-" && len(words) > 0:
		in, err := readStdin(env)
		if err != nil {
			return "", err
		}
		p = strings.Join(words, " ")
		if strings.TrimSpace(in) != "" {
			p += "\n\n" + in
		}
	case c.File != "" && c.File != "-" && len(words) > 0:
		return "", cli.Usagef("give the prompt as words or with -f, not both (-f - adds standard input after the words)")
	case c.File != "" && c.File != "-":
		b, err := os.ReadFile(c.File)
		if err != nil {
			return "", cli.Usagef("cannot read the prompt file %s: %v", c.File, errors.Unwrap(err))
		}
		p = string(b)
	case len(words) > 0:
		p = strings.Join(words, " ")
		if waiting(env.Stdin) {
			env.Voice().Notef("standard input is not read when the prompt is given as words; -f - adds it after them")
		}
	default:
		var err error
		if p, err = readStdin(env); err != nil {
			return "", err
		}
	}
	if strings.TrimSpace(p) == "" && !mayBeEmpty {
		return "", cli.Usagef("the prompt is empty")
	}
	return p, nil
}

// readStdin reads the prompt from standard input, saying so when it is
// a terminal.
func readStdin(env *cli.Env) (string, error) {
	if cli.IsTerminalReader(env.Stdin) {
		env.Voice().Notef("reading the prompt from the terminal; end it with Ctrl-D")
	}
	b, err := io.ReadAll(env.Stdin)
	if err != nil {
		return "", cli.Usagef("cannot read the prompt: %v", err)
	}
	return string(b), nil
}

// waiting tells whether r is a pipe with something to read already (git
// diff | runagent -l 1 review it), which words leave unread: a file or a
// pipe with nothing yet (a loop's input, a caller's open pipe) is not
// said, and nothing is read either way.
func waiting(r io.Reader) bool {
	p, ok := cli.LookPipe(r)
	return ok && p.Readable
}

type grantsCmd struct {
	JSON bool `name:"json" help:"One JSON object per level."`
}

func (c *grantsCmd) Run(env *cli.Env) error {
	if !c.JSON {
		grant.DescribeTable(env.Stdout, "--services")
		return nil
	}
	for _, r := range grant.Table("--services") {
		cli.PrintJSON(env.Stdout, r)
	}
	return nil
}

// printArgs shows the run without starting it: the grant, then what a
// later attempt would run (its session shown as SESSION), and the
// environment when it is clean.
func (c *runCmd) printArgs(env *cli.Env, g *grant.Grant, opts grant.Options) error {
	var out struct {
		*grant.Grant
		ResumeArgv []string `json:"resumeArgv,omitempty"`
		WrapUpArgv []string `json:"wrapUpArgv,omitempty"`
		Env        []string `json:"env,omitempty"`
		// Hosted names the flag that puts the run on agentry's host,
		// where the backend starts the CLI with flags of its own.
		Hosted string `json:"hosted,omitempty"`
	}
	out.Grant = g
	if c.hosted(g.Harness) {
		out.Hosted = c.hostedWhy()
	}
	if c.Retry > 0 || c.Until != "" {
		r, _ := grant.For(agentrun.ResumeOptions(opts, "SESSION", 0, nil, false))
		out.ResumeArgv = r.Argv
	}
	if c.WrapUp {
		w, _ := grant.For(agentrun.ResumeOptions(opts, "SESSION", 0, nil, true))
		out.WrapUpArgv = w.Argv
	}
	if c.CleanEnv || c.EnvAllow != "" || g.Level == 1 {
		out.Env = grant.EnvAllowed(g.Harness, splitList(c.EnvAllow))
	}
	if c.JSON {
		cli.PrintJSON(env.Stdout, out)
		return nil
	}
	if out.Hosted != "" {
		fmt.Fprintf(env.Stdout, "# with %s the run goes through agentry's host (as agent-host --backend %s), which starts %s with flags of its own at this level; the argv below is the CLI's stream's\n",
			out.Hosted, g.Harness, g.Harness)
	}
	g.Describe(env.Stdout)
	if out.ResumeArgv != nil {
		fmt.Fprintf(env.Stdout, "# a later attempt (--retry, --until) resumes the session:\n#   %s\n", shellLine(out.ResumeArgv))
	}
	if out.WrapUpArgv != nil {
		fmt.Fprintf(env.Stdout, "# the wrap-up at a limit (--wrap-up):\n#   %s\n", shellLine(out.WrapUpArgv))
	}
	if out.Env != nil {
		fmt.Fprintf(env.Stdout, "# environment: only %s; the values of the rest are redacted from what the run says\n", strings.Join(out.Env, " "))
	}
	return nil
}

func shellLine(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = grant.ShellQuote(a)
	}
	return strings.Join(q, " ")
}

// writeSummary appends the summary to file, as $GITHUB_STEP_SUMMARY is
// written to; a failure is a warning, the run's outcome stands.
func writeSummary(env *cli.Env, file, text string) {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err == nil {
		if st, serr := f.Stat(); serr == nil && st.Size() > 0 {
			text = "\n" + text // a heading needs a line of its own
		}
		_, err = io.WriteString(f, text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		env.Voice().Warnf("--summary: %v", err)
	}
}

// splitList is a comma-separated list, without empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// parsePrice reads --price IN,OUT[,CACHED].
func parsePrice(s string) (*agentrun.Price, error) {
	if s == "" {
		return nil, nil
	}
	f := strings.Split(s, ",")
	var n []float64
	for _, x := range f {
		v, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil || v < 0 {
			n = nil
			break
		}
		n = append(n, v)
	}
	if len(n) < 2 || len(n) > 3 {
		return nil, cli.Usagef("--price %s: give IN,OUT or IN,OUT,CACHED, in US dollars per million tokens", s)
	}
	p := &agentrun.Price{In: n[0], Out: n[1], Cached: n[0]}
	if len(n) == 3 {
		p.Cached = n[2]
	}
	return p, nil
}
