package ndjsoncmd

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

// checkSamples are command lines of check, each valid, for ndjson and
// ndjson-schema alike.
var checkSamples = [][]string{
	{"check", "--protocol", "agent-host", "--json"},
	{"check", "--schema", "s.json", "--strict", "--max-line", "1KiB"},
	{"check"},
}

// TestGrammar builds both kong grammars (kong.New fails on a bad one) and
// parses a sample of every verb each has.
func TestGrammar(t *testing.T) {
	var out, errb bytes.Buffer
	env := &cli.Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	for _, c := range []struct {
		app     cli.App
		samples [][]string
	}{
		{App(nil), append(samples, checkSamples...)},
		{CheckApp("ndjson-schema", nil), checkSamples},
	} {
		for _, args := range c.samples {
			p, err := cli.NewParser(c.app, env)
			if err != nil {
				t.Fatalf("%s: grammar does not build: %v", c.app.Name, err)
			}
			if _, err := p.Parse(args); err != nil {
				t.Errorf("%s %q: %v", c.app.Name, args, err)
			}
		}
	}
}

// TestPrunedGrammar holds the grammar Run builds for a line that names a
// command first to the whole one.
func TestPrunedGrammar(t *testing.T) {
	env := &cli.Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	for _, d := range cli.PrunedDiffs(App(nil), env, append(samples, checkSamples...)) {
		t.Error(d)
	}
	for _, d := range cli.PrunedDiffs(CheckApp("ndjson-schema", nil), env, checkSamples) {
		t.Error(d)
	}
}

// TestVersion holds ndjson --version, answered without kong, to kong's.
func TestVersion(t *testing.T) {
	if d := cli.VersionDiff(App(nil)); d != "" {
		t.Error(d)
	}
}
