package main

import (
	"bytes"
	"testing"

	"github.com/agentry/agentry/lib/cli"
)

// TestGrammar builds the kong grammar and parses samples of every flag.
func TestGrammar(t *testing.T) {
	var out, errb bytes.Buffer
	env := &cli.Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	for _, args := range [][]string{
		{},
		{"--backend", "echo", "--max-line", "1MiB", "--max-concurrent-runs", "8", "--drain-timeout", "1s", "--interrupt-grace", "100ms", "--log-level", "debug"},
		{"--backend", "exec", "--", "runagent", "-l", "2"},
		{"--acp", "--backend", "echo"},
	} {
		p, err := cli.NewParser(app(), env)
		if err != nil {
			t.Fatalf("grammar does not build: %v", err)
		}
		if _, err := p.Parse(args); err != nil {
			t.Errorf("%q: %v", args, err)
		}
	}
}

// TestVersion holds agent-host --version, answered without kong, to kong's.
func TestVersion(t *testing.T) {
	if d := cli.VersionDiff(app()); d != "" {
		t.Error(d)
	}
}
