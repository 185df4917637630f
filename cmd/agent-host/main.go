// Command agent-host hosts an agent backend in its own process and speaks
// the agent-host v1 NDJSON protocol on stdin and stdout. See agent-host(1)
// and agent-host-protocol(7).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/acp"
	acpbackend "github.com/agentry/agentry/lib/backend/acp"
	"github.com/agentry/agentry/lib/backend/claude"
	"github.com/agentry/agentry/lib/backend/codex"
	"github.com/agentry/agentry/lib/backend/echo"
	"github.com/agentry/agentry/lib/backend/exec"
	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/grant"
	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/policy"
	"github.com/agentry/agentry/lib/proc"
)

func main() {
	proc.CloseOnExecFrom(3) // what a caller leaked to us goes no further than us
	os.Exit(cli.Main(app()))
}

func app() cli.App {
	return cli.App{
		Name:        "agent-host",
		Description: "Host an agent backend in its own process, speaking the agent-host v1 NDJSON protocol on stdin and stdout.",
		Grammar:     &grammar{},
	}
}

type grammar struct {
	cli.Globals

	ACP               bool          `name:"acp" help:"Speak the Agent Client Protocol (v1) as an agent on stdin and stdout instead, for editors; see agent-host-acp(7)."`
	Config            string        `help:"With --acp: the backend's configuration, as hello.config gives it in protocol v1 (a JSON object), such as '{\"claude\":{\"models\":[...]}}'." placeholder:"JSON"`
	Backend           string        `help:"Backend to host: echo, exec, claude, codex or acp (default: ${default}; hello.config's \"backend\" overrides it)." default:"echo" placeholder:"NAME"`
	MaxLine           cli.Size      `help:"Skip input lines longer than this, with a log notice (default: ${default})." default:"64MiB" placeholder:"SIZE"`
	MaxConcurrentRuns int           `help:"Refuse runs beyond this many in flight, with a busy error (default: ${default})." default:"64" placeholder:"N"`
	DrainTimeout      time.Duration `help:"On shutdown, end of input or SIGTERM, wait this long for runs in flight before interrupting them (with --acp, end of input cancels them at once; default: ${default})." default:"30s" placeholder:"DUR"`
	InterruptGrace    time.Duration `help:"After an interrupt, wait this long for the run to stop before ending it and killing what it started (default: ${default})." default:"5s" placeholder:"DUR"`
	LogLevel          string        `help:"Lowest level of log notice to send: debug, info, warn or error (default: ${default})." enum:"debug,info,warn,error" default:"info" placeholder:"LEVEL"`
	Policy            string        `help:"Check every tool call of every run against this policy file (agentry-policy(5)), beside a run's own params.policy; a file that does not parse is an error before anything starts." placeholder:"FILE"`
	IdleStop          time.Duration `help:"With --acp: stop a session's CLI after this long without a turn, to resume it on its next prompt (claude; 0: never; default: ${default})." default:"5m" placeholder:"DUR"`
	Command           []string      `arg:"" optional:"" passthrough:"partial" name:"command" help:"For --backend exec: the command to run for each turn; for --backend acp: the ACP agent to start; after --."`
}

// acpStateDir is where the ACP face keeps its sessions for session/load:
// $XDG_STATE_HOME/agent-host/acp, else ~/.local/state/agent-host/acp.
func acpStateDir(getenv func(string) string) string {
	if d := getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "agent-host", "acp")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "agent-host", "acp")
	}
	return ""
}

// endAllWithin is how long agent-host waits, as it ends, for what is
// left of its agents' trees after SIGKILL.
const endAllWithin = 2 * time.Second

// memoryLimit is the heap's soft limit for a line cap: twice the cap, less
// what the process needs outside the heap, and never under a floor that
// lets a small cap run without the collector working all the time.
func memoryLimit(maxLine int64) int64 {
	return max(2*maxLine-16<<20, 24<<20)
}

func (g *grammar) Run(ctx context.Context, env *cli.Env) error {
	if g.MaxLine < 1 || g.MaxLine > 1<<40 {
		return cli.Usagef("--max-line must be between 1 byte and 1TiB")
	}
	if g.MaxConcurrentRuns < 1 {
		return cli.Usagef("--max-concurrent-runs must be at least 1")
	}
	// A policy that does not parse fails closed, before any agent starts.
	var pol *policy.Policy
	if g.Policy != "" {
		var err error
		if pol, err = policy.Load(g.Policy); err != nil {
			return policyError(g.Policy, err)
		}
	}
	command := g.Command
	if len(command) > 0 && command[0] == "--" {
		command = command[1:]
	}
	// agent-host is a child subreaper: what an agent's tree orphans (a
	// sandbox's wrapper whose parent died mid-spawn, a daemon that forked
	// away) is handed back to it, not to init, and is ended with the rest
	// when the host ends (DESIGN.md, "One child lifecycle").
	reaper := proc.NewReaper()
	defer func() { reaper.EndAll(time.Now().Add(endAllWithin)) }()
	// A second signal while the first drains ends the host at once; what
	// it runs goes first.
	// Its runs are marked interrupted first, so that their agents, killed,
	// are reported an interrupt and not a backend's failure.
	stopper := &host.Stopper{}
	cli.OnSecondSignal(ctx, func() {
		stopper.StopRuns()
		reaper.EndAll(time.Now().Add(time.Second))
	})
	benv := host.Env{Environ: grant.GitGuard(os.Environ()), Stderr: env.Stderr, Reaper: reaper}
	factory := func(name string, config json.RawMessage) (host.Backend, error) {
		switch name {
		case "echo":
			return echo.New(config)
		case "exec":
			return exec.New(command, benv)
		case "claude":
			return claude.New(config, benv)
		case "codex":
			return codex.New(config, benv)
		case "acp":
			return acpbackend.New(config, command, benv)
		}
		return nil, fmt.Errorf("unknown backend %q (agent-host has echo, exec, claude, codex and acp)", name)
	}
	// Check the flag's backend now, so a mistake is a usage error before
	// any protocol is spoken. A CLI that is not installed is no mistake
	// of the command line: the daemon's hello is answered
	// backend_unavailable, saying so, unless it names another backend.
	var notInstalled *grant.NotInstalledError
	if _, err := factory(g.Backend, nil); errors.As(err, &notInstalled) && !g.ACP {
		env.Voice().Warnf("%v", err)
	} else if err != nil {
		return cli.Usagef("%v", err)
	}
	if g.Backend != "exec" && g.Backend != "acp" && len(command) > 0 {
		return cli.Usagef("a command is only for --backend exec and --backend acp")
	}
	// Lines up to the cap must be held; the heap's soft limit keeps what
	// holding one costs (the reader's growth, GC headroom) within twice
	// the cap, however long the line (DESIGN.md).
	debug.SetMemoryLimit(memoryLimit(int64(g.MaxLine)))
	opts := host.Options{
		Backend: g.Backend, Factory: factory, Version: cli.Version(),
		MaxLine: int(g.MaxLine), MaxConcurrentRuns: g.MaxConcurrentRuns,
		DrainTimeout: g.DrainTimeout, InterruptGrace: g.InterruptGrace, LogLevel: g.LogLevel,
		Policy: pol, Stopper: stopper,
	}
	if g.Config != "" && !g.ACP {
		return cli.Usagef("--config is for --acp; a daemon gives the configuration in hello")
	}
	if g.ACP {
		var config json.RawMessage
		if g.Config != "" {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal([]byte(g.Config), &obj); err != nil {
				return cli.Usagef("--config is not a JSON object: %v", err)
			}
			config = json.RawMessage(g.Config)
		}
		// An editor that dies takes the read end of stdout with it: the
		// write fails (EPIPE, not SIGPIPE's death) and the face ends every
		// session's processes before it exits.
		signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
		voice := cli.Voice{Prog: "agent-host", W: env.Stderr}
		err := acp.Serve(ctx, acp.Options{Host: opts, Config: config, Warn: func(msg string) { voice.Warnf("%s", msg) }, StateDir: acpStateDir(env.Getenv), IdleStop: g.IdleStop},
			env.Stdin, env.Stdout)
		if errors.Is(err, acp.ErrBackend) {
			return cli.Usagef("%v", err) // a configuration error: nothing was started
		}
		return err
	}
	return host.Serve(ctx, opts, env.Stdin, env.Stdout)
}

// policyError words a --policy file that could not be loaded: the
// policy's own place and reason when it does not parse, else why the
// file could not be read; both with where to read what a policy holds.
func policyError(path string, err error) error {
	var pe *policy.Error
	if !errors.As(err, &pe) {
		err = cli.FileFlagError("--policy", path, "policy", err)
	} else {
		err = cli.Usagef("--policy: %v", err)
	}
	return cli.WithHint(err, "agentry-policy(5) says what a policy file holds")
}
