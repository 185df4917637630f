package main

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/agentrun"
	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/grant"
)

// samples are command lines of every command, each valid.
var samples = [][]string{
	{"-l", "2", "--agent", "codex", "-C", ".", "--tools-url", "http://x", "--model", "m", "--resume", "r", "--pid-file", "p",
		"--max-output", "10", "--json", "--codex-config", "c.toml", "fix", "the", "bug"},
	{"--level", "1", "--session-id", "11111111-2222-4333-8444-555555555555", "-f", "task.md"},
	{"-l", "3", "--new-session", "--print-args"},
	{"grants", "--json"},
	{"--agent", "acp", "-l", "1", "--max-budget-usd", "0.3", "--", "npx", "some-acp-agent", "--flag"},
}

// TestGrammar builds the kong grammar and parses samples of every flag.
func TestGrammar(t *testing.T) {
	var out, errb bytes.Buffer
	env := &cli.Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	for _, args := range samples {
		p, err := cli.NewParser(app(), env)
		if err != nil {
			t.Fatalf("grammar does not build: %v", err)
		}
		if _, err := p.Parse(args); err != nil {
			t.Errorf("%q: %v", args, err)
		}
	}
}

// TestPrunedGrammar holds the grammar Run builds for a line that names a
// command first to the whole one.
func TestPrunedGrammar(t *testing.T) {
	env := &cli.Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	for _, d := range cli.PrunedDiffs(app(), env, samples) {
		t.Error(d)
	}
}

// TestDirectParse holds the lines Run reads without kong to kong's values,
// and the usual ones to being read so: the flags of a run, with the
// prompt as words, on stdin, after "--".
func TestDirectParse(t *testing.T) {
	env := &cli.Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	lines := append(samples[:3:3],
		[]string{"-l", "1"},
		[]string{"run", "--agent", "codex", "-l", "2", "--json", "--schema", "s.json", "--max-turns", "5", "--max-budget-usd", "0.5",
			"--idle-timeout", "2m", "--events", "-", "--append-system-prompt", "/etc/sys.md", "--effort", "high", "--services", "--keep-services"},
		[]string{"-l", "2", "--retry", "2", "--retry-stalls", "--wrap-up", "--until", "make test", "--attempts", "4", "--preflight", "--clean-env",
			"--env-allow", "GO*,CI", "--redact", "A,B", "--summary", "s.md", "--price", "1,2,0.1", "--max-tool-calls", "9", "fix"},
		[]string{"run", "-l", "3", "--", "-v", "fix", "it"},
		[]string{"--level=2", "--max-output=10", "say", "hi"},
	)
	for _, d := range cli.DirectDiffs(app(), env, lines, true) {
		t.Error(d)
	}
	kong := [][]string{{"grants", "--json"}, {"--version"}, {"-l", "1", "--help"}, {"-l", "x"}, {"--bogus"}, {"-l", "1", "--", "hi"}}
	for _, d := range cli.DirectDiffs(app(), env, kong, false) {
		t.Error(d)
	}
}

// TestVersion holds runagent --version, answered without kong, to kong's.
func TestVersion(t *testing.T) {
	if d := cli.VersionDiff(app()); d != "" {
		t.Error(d)
	}
}

// TestJSONHelp holds --json's help to the result: it names every field
// --json can print.
func TestJSONHelp(t *testing.T) {
	f, _ := reflect.TypeOf(runCmd{}).FieldByName("JSON")
	help := f.Tag.Get("help")
	rt := reflect.TypeOf(agentrun.Result{})
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" && !strings.Contains(help, name) {
			t.Errorf("--json's help does not name %q: %s", name, help)
		}
	}
}

// A grant's refusal is said in runagent's flags, as it always was.
func TestWordGrant(t *testing.T) {
	uuid := "11111111-2222-4333-8444-555555555555"
	for _, c := range []struct {
		o    grant.Options
		want string
	}{
		{grant.Options{Level: 5}, "level 5: the levels are 1, 2 and 3"},
		{grant.Options{Level: 1, Harness: "gemini"}, `unknown agent "gemini": runagent runs claude, codex or acp (any ACP agent, its command after --)`},
		{grant.Options{Level: 1, SessionID: uuid, Resume: "x"}, "--session-id and --resume cannot be used together"},
		{grant.Options{Level: 1, Harness: grant.Codex, SessionID: uuid}, "--session-id is for claude; codex names its own threads (resume one with --resume)"},
		{grant.Options{Level: 1, SessionID: "x"}, `--session-id "x" is not a UUID, which claude requires`},
		{grant.Options{Level: 1, MaxTurns: -1}, "--max-turns cannot be negative"},
		{grant.Options{Level: 1, MaxBudgetUSD: -1}, "--max-budget-usd cannot be negative"},
		{grant.Options{Level: 1, Harness: grant.Codex, MaxBudgetUSD: 1}, "--max-budget-usd needs --price for codex: codex reports no cost, so no budget can be kept without one"},
		{grant.Options{Level: 1, Harness: grant.Claude, Effort: "minimal"}, `--effort "minimal": claude takes low, medium, high, xhigh, max`},
		{grant.Options{Level: 1, Harness: grant.Codex, Effort: "max"}, `--effort "max": codex takes minimal, low, medium, high, xhigh`},
		{grant.Options{Level: 1, ServicesURL: "http://x"}, "--services needs level 2 or 3: level 1 has no code tools, and so no servers to start"},
	} {
		_, err := grant.For(c.o)
		h := c.o.Harness
		if h == "" {
			h = grant.Claude
		}
		got := wordGrant(err, h)
		var ce *cli.Error
		if !errors.As(got, &ce) || ce.Code != cli.ExitUsage || got.Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.o, got, c.want)
		}
		if strings.Contains(err.Error(), "--") {
			t.Errorf("%+v: grant's own words name a flag: %v", c.o, err)
		}
	}
}

// The exit status is runagent's: 0, 128+N, 124 for a stall, 3 at a
// limit, else 1.
func TestExitStatus(t *testing.T) {
	for _, c := range []struct {
		res  agentrun.Result
		want int
	}{
		{agentrun.Result{OK: true}, 0},
		{agentrun.Result{StoppedBy: "SIGINT", Limit: agentrun.LimitTurns}, 130},
		{agentrun.Result{Stalled: true, Limit: agentrun.LimitTurns}, 124},
		{agentrun.Result{Limit: agentrun.LimitBudget, Partial: true}, 3},
		{agentrun.Result{}, 1},
	} {
		if got := exitStatus(&c.res); got != c.want {
			t.Errorf("%+v: exit %d, want %d", c.res, got, c.want)
		}
	}
	if limitFlag(agentrun.LimitToolCalls, 2) != "--max-tool-calls 2" || limitFlag(agentrun.LimitBudget, 0) != "--max-budget-usd" || limitFlag(agentrun.LimitNoTools, 0) != "" {
		t.Error("limitFlag")
	}
}
