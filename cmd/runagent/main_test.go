package main

import (
	"bytes"
	"io"
	"testing"

	"github.com/agentry/agentry/lib/cli"
)

// samples are command lines of every command, each valid.
var samples = [][]string{
	{"-l", "2", "--agent", "codex", "-C", ".", "--tools-url", "http://x", "--model", "m", "--resume", "r", "--pid-file", "p",
		"--max-output", "10", "--json", "--codex-config", "c.toml", "fix", "the", "bug"},
	{"--level", "1", "--session-id", "11111111-2222-4333-8444-555555555555", "-f", "task.md"},
	{"-l", "3", "--new-session", "--print-args"},
	{"grants", "--json"},
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
