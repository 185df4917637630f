package main

import (
	"bytes"
	"io"
	"testing"

	"github.com/agentry/agentry/lib/cli"
)

// samples are command lines of every command, each valid.
var samples = [][]string{
	{"start", "--name", "web", "--cwd", ".", "--env", "A=1", "--env", "B=2", "--ready-url", "http://x", "--ready-timeout", "5s",
		"--settle", "1s", "--stop-grace", "2s", "--log-max", "1MiB", "--log-keep", "3", "--json", "--", "npm", "run", "dev"},
	{"start", "--", "npm run dev"},
	{"ls", "--json"}, {"status", "web"}, {"tail", "-n", "5", "-f", "--since", "10", "--json", "web"},
	{"stop", "--grace", "1s", "--json", "a", "b"}, {"stop", "--all"}, {"restart", "web"}, {"rm", "--force", "a"},
	{"wait", "--timeout", "3s", "web"},
	{"mcp", "--http", "127.0.0.1:0", "--scope", "agent", "--until-exit", "1"}, {"mcp"},
}

// TestGrammar builds the kong grammar and parses samples of every command.
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

// TestVersion holds svc --version, answered without kong, to kong's.
func TestVersion(t *testing.T) {
	if d := cli.VersionDiff(app()); d != "" {
		t.Error(d)
	}
}
