package main

import (
	"bytes"
	"io"
	"testing"

	"github.com/agentry/agentry/lib/cli"
)

// samples are command lines of every command, each valid.
var samples = [][]string{
	{"get", "-r", "--missing", "x", "--skip-missing", "--max-line", "1MiB", "a", "b"},
	{"where", "--any", "--strict", "a==1", "!b"},
	{"make", "a=1", "b:=2"},
	{"make"},
	{"check", "--protocol", "agent-host", "--json"},
	{"fmt", "-c", "--indent", "4", "--sort-keys", "--color", "never"},
	{"count", "--json", "type"},
	{"count"},
}

// TestGrammar builds the kong grammar (kong.New fails on a bad one) and
// parses a sample of every verb.
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
