package main

import (
	"fmt"
	"strings"

	"github.com/agentry/agentry/lib/agentrun"
	acpbackend "github.com/agentry/agentry/lib/backend/acp"
	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/grant"
	"github.com/agentry/agentry/lib/host"
)

// exitViolation is runagent's status when an ACP agent ran what its
// level or its policy forbids without asking, and the tripwire ended it.
const exitViolation = 4

// acpAgent is how runagent runs an ACP agent: lib/backend/acp, in this
// process, behind lib/host's rules.
func acpAgent() *agentrun.HostAgent {
	return &agentrun.HostAgent{
		Backend: agentrun.ACP,
		Open: func(argv []string, level int, dir string, env host.Env) (host.Backend, error) {
			return acpbackend.Open(acpbackend.Config{Command: argv, Level: level, Workspace: dir}, env)
		},
		Violations: []string{acpbackend.CodeLevelViolated, acpbackend.CodePolicyViolated},
	}
}

// acpOptions checks the flags of an ACP run: its command is the words
// after --, its prompt comes from -f or standard input, and the flags
// that set what an ACP agent has no way to be told are refused.
func (c *runCmd) acpOptions() (grant.Options, *grant.Grant, error) {
	o := grant.Options{Level: c.Level, Harness: agentrun.ACP, Resume: c.Resume}
	if len(c.Prompt) == 0 {
		return o, nil, cli.WithHint(cli.Usagef("--agent acp needs the agent's command after --"),
			"runagent --agent acp -l N -- CMD [ARG...]; the prompt comes from -f FILE or standard input")
	}
	if c.Level < 1 || c.Level > 3 {
		return o, nil, cli.Usagef("level %d: the levels are 1, 2 and 3", c.Level)
	}
	refused := []struct {
		set  bool
		flag string
	}{
		{c.Model != "", "--model"}, {c.SessionID != "", "--session-id"},
		{c.NewSession, "--new-session"}, {c.CodexConfig != "", "--codex-config"},
		{c.Price != "", "--price"}, {c.Effort != "", "--effort"}, {c.AppendSystemPrompt != "", "--append-system-prompt"},
		{c.PidFile != "", "--pid-file"},
	}
	for _, r := range refused {
		if r.set {
			return o, nil, cli.Usagef("%s is not for --agent acp: runagent has no way to give it to an ACP agent", r.flag)
		}
	}
	if c.Services {
		if c.Level == 1 {
			return o, nil, cli.Usagef("--services needs level 2 or 3: level 1 has no code tools, and so no servers to start")
		}
		// svc mcp is the session's MCP server; what the agent is told of
		// it opens the session's first prompt (ACP has no system prompt).
		o.ServicesURL = agentrun.ServicesPending
		o.AppendSystemPrompt = agentrun.ServicesPrompt(c.KeepServices)
	}
	o.ToolsURL = c.ToolsURL // given to the session as svc's is
	g := &grant.Grant{Harness: agentrun.ACP, Level: c.Level, Argv: c.Prompt}
	// The prompt is -f's or standard input's: the words are the agent's
	// command (see prompt).
	return o, g, nil
}

// acpLevel says what a level lets an ACP agent do (lib/backend/acp's
// Policy), for --print-args.
func acpLevel(level int) (allows, refuses []string, text string) {
	if level == 1 {
		return []string{"read", "search", "fetch", "think"}, []string{"edit", "delete", "move", "execute", "other"},
			"allows read, search, fetch and think; refuses edit, delete, move, execute and other, fs/write_text_file and terminals"
	}
	same := ""
	if level == 3 {
		same = " (today the same as level 2)"
	}
	return []string{"read", "search", "fetch", "think", "edit", "delete", "move", "execute", "other"}, []string{"a change outside the working copy"},
		"allows every kind of call, edits, files and terminals within the working copy; refuses a change outside it" + same
}

// printACPArgs is --print-args for an ACP agent: its command and what
// its level lets it do.
func (c *runCmd) printACPArgs(env *cli.Env, g *grant.Grant) error {
	allows, refuses, text := acpLevel(g.Level)
	out := struct {
		Agent   string   `json:"agent"`
		Level   int      `json:"level"`
		Argv    []string `json:"argv"`
		Scratch bool     `json:"scratch"`
		Allows  []string `json:"allows"`
		Refuses []string `json:"refuses"`
		Env     []string `json:"env,omitempty"`
	}{Agent: g.Harness, Level: g.Level, Argv: g.Argv, Allows: allows, Refuses: refuses}
	if c.CleanEnv || c.EnvAllow != "" || g.Level == 1 {
		out.Env = grant.EnvAllowed(g.Harness, splitList(c.EnvAllow))
	}
	if c.JSON {
		cli.PrintJSON(env.Stdout, out)
		return nil
	}
	fmt.Fprintln(env.Stdout, shellLine(g.Argv))
	fmt.Fprintf(env.Stdout, "# level %d, acp: runs in the working copy; agentry answers its permission requests and %s; "+
		"a change it makes without asking that the level or the policy forbids ends the run (exit %d); the mode that asks the most; the prompt goes in session/prompt\n",
		g.Level, text, exitViolation)
	if out.Env != nil {
		fmt.Fprintf(env.Stdout, "# environment: only %s; the values of the rest are redacted from what the run says\n", strings.Join(out.Env, " "))
	}
	return nil
}
