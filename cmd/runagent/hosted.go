package main

import (
	"encoding/json"
	"errors"
	"os"

	"github.com/agentry/agentry/lib/agentrun"
	"github.com/agentry/agentry/lib/backend/claude"
	"github.com/agentry/agentry/lib/backend/codex"
	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/grant"
	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/policy"
)

// hosted says whether a claude or codex run goes through agentry's host
// (lib/backend/claude or codex, in this process) rather than the CLI's
// own stream: when a policy must sit in its permission path, when its
// questions must be answered, and for codex when a budget or a tool-call
// cap must stop a turn where it is crossed (codex app-server reports
// usage as it grows; codex exec only at the turn's end). Every other run
// keeps the CLI's stream, which starts nothing more.
func (c *runCmd) hosted(harness string) bool {
	return c.Policy != "" || c.Answers != "" || harness == grant.Codex && (c.MaxBudgetUSD > 0 || c.MaxToolCalls > 0)
}

// policy loads --policy, if given: a file that cannot be read, does not
// parse or names an unknown key is a usage error (its file and line),
// and nothing starts.
func (c *runCmd) policy() (*policy.Policy, error) {
	if c.Policy == "" {
		return nil, nil
	}
	p, err := policy.Load(c.Policy)
	var pe *policy.Error
	switch {
	case errors.As(err, &pe):
		return nil, cli.WithHint(cli.Usagef("%v", pe), "agentry-policy(5) says what a policy holds; nothing was started")
	case err != nil:
		return nil, cli.WithHint(cli.FileFlagError("--policy", c.Policy, "policy", err), "agentry-policy(5) says what a policy holds; nothing was started")
	}
	return p, nil
}

// answers reads --answers, if given: a file that is no answers document
// is a usage error, before anything starts.
func (c *runCmd) answers() (agentrun.Answers, error) {
	if c.Answers == "" {
		return nil, nil
	}
	b, err := os.ReadFile(c.Answers)
	if err != nil {
		return nil, cli.Usagef("--answers %s: %v", c.Answers, errors.Unwrap(err))
	}
	a, err := agentrun.ParseAnswers(b)
	if err != nil {
		return nil, cli.Usagef("--answers %s: %v", c.Answers, err)
	}
	return a, nil
}

// hostedRefused is the first flag a hosted claude or codex run cannot
// carry out, or "".
func (c *runCmd) hostedRefused(harness string) string {
	refused := []struct {
		set  bool
		flag string
	}{
		{c.SessionID != "", "--session-id"}, {c.NewSession, "--new-session"},
		{c.Services, "--services"}, {c.PidFile != "", "--pid-file"},
		{c.AppendSystemPrompt != "" && harness == grant.Claude, "--append-system-prompt"},
	}
	for _, r := range refused {
		if r.set {
			return r.flag
		}
	}
	return ""
}

// hostedWhy names what put a run on agentry's host, for a refusal.
func (c *runCmd) hostedWhy() string {
	switch {
	case c.Policy != "":
		return "--policy"
	case c.Answers != "":
		return "--answers"
	case c.MaxBudgetUSD > 0:
		return "--max-budget-usd"
	}
	return "--max-tool-calls"
}

// hostAgent is how runagent runs claude or codex through agentry's host:
// the backend agent-host would run, in this process.
func (c *runCmd) hostAgent(harness string) (*agentrun.HostAgent, error) {
	if f := c.hostedRefused(harness); f != "" {
		return nil, cli.Usagef("%s cannot go with %s for %s: the run goes through agentry's host, which has no way to give it to %s", f, c.hostedWhy(), harness, harness)
	}
	open := func(argv []string, level int, dir string, env host.Env) (host.Backend, error) {
		type conf struct {
			Program    string `json:"program"`
			Level      int    `json:"level"`
			Workspace  string `json:"workspace"`
			ConfigFile string `json:"configFile,omitempty"`
		}
		cf := conf{Program: argv[0], Level: level, Workspace: dir}
		if harness == grant.Claude {
			b, _ := json.Marshal(map[string]conf{"claude": cf})
			return claude.New(b, env)
		}
		cf.ConfigFile = c.CodexConfig
		b, _ := json.Marshal(map[string]conf{"codex": cf})
		return codex.New(b, env)
	}
	return &agentrun.HostAgent{Backend: harness, Open: open}, nil
}
