package main

import (
	"bytes"
	"testing"

	"github.com/agentry/agentry/lib/cli"
)

// TestGrammar builds the kong grammar and parses samples of every command.
func TestGrammar(t *testing.T) {
	var out, errb bytes.Buffer
	env := &cli.Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	for _, args := range [][]string{
		{"start", "--name", "web", "--cwd", ".", "--env", "A=1", "--env", "B=2", "--ready-url", "http://x", "--ready-timeout", "5s",
			"--settle", "1s", "--stop-grace", "2s", "--log-max", "1MiB", "--log-keep", "3", "--json", "--", "npm", "run", "dev"},
		{"start", "--", "npm run dev"},
		{"ls", "--json"}, {"status", "web"}, {"tail", "-n", "5", "-f", "--since", "10", "--json", "web"},
		{"stop", "--grace", "1s", "--json", "a", "b"}, {"stop", "--all"}, {"restart", "web"}, {"rm", "--force", "a"},
		{"wait", "--timeout", "3s", "web"},
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
