package cli

import (
	"io"
	"testing"
)

type pruneGrammar struct {
	Globals
	Start   startTestCmd `cmd:"" aliases:"go,begin" help:"Start."`
	ShowAll showTestCmd  `cmd:"" help:"Show all."`
	Named   showTestCmd  `cmd:"" name:"ls" help:"List."`
	Run     runTestCmd   `cmd:"" default:"withargs" help:"Run."`
}

type startTestCmd struct {
	Name  string   `arg:"" help:"The name."`
	Env   []string `short:"e" help:"KEY=VALUE." placeholder:"KV"`
	Level int      `env:"PRUNE_TEST_LEVEL" default:"1" help:"The level."`
	Rest  []string `arg:"" optional:"" passthrough:"" help:"The command."`
}

type showTestCmd struct {
	JSON bool `name:"json" help:"JSON."`
}

type runTestCmd struct {
	Prompt []string `arg:"" optional:"" help:"The prompt."`
}

func (*startTestCmd) Run() error { return nil }
func (*showTestCmd) Run() error  { return nil }
func (*runTestCmd) Run() error   { return nil }

func pruneApp() App { return App{Name: "prog", Grammar: &pruneGrammar{}} }

func TestPrunedPicksTheNamedCommand(t *testing.T) {
	cases := []struct {
		args []string
		name string // "" when the whole grammar is built
	}{
		{[]string{"start", "web"}, "start"},
		{[]string{"go", "web"}, "go"},
		{[]string{"show-all"}, "show-all"},
		{[]string{"ls", "--json"}, "ls"},
		{[]string{"named"}, "(default)"}, // its name is ls: a word for run
		{[]string{"run", "hi"}, "run"},
		{[]string{"hi"}, "(default)"},
		{[]string{"--flag", "hi"}, "(default)"},
		{[]string{"hi", "ls"}, ""}, // a command named after the first word
		{[]string{"hi", "--", "ls"}, "(default)"},
		{[]string{}, ""},
		{[]string{"", "ls"}, ""},
		{[]string{"--version"}, "(default)"},
		{[]string{"ls", "--help"}, ""},
		{[]string{"ls", "-h"}, ""},
		{[]string{"ls", "--completion", "bash"}, ""},
		{[]string{"ls", "--completion=fish"}, ""},
		{[]string{"start", "web", "--", "cmd", "--help"}, "start"},
	}
	env := &Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	for _, c := range cases {
		p := prunedParser(pruneApp(), env, c.args)
		switch {
		case c.name == "" && p != nil:
			t.Errorf("%q: pruned, want the whole grammar", c.args)
		case c.name != "" && p == nil:
			t.Errorf("%q: the whole grammar, want it pruned to %s", c.args, c.name)
		case p != nil && len(p.Model.Node.Children) != 1:
			t.Errorf("%q: %d commands in the pruned grammar", c.args, len(p.Model.Node.Children))
		}
	}
}

func TestPrunedParsesAsTheWholeGrammar(t *testing.T) {
	env := &Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(k string) string { return "" }}
	for _, args := range [][]string{
		{"start", "web", "-e", "A=1", "--level", "3", "--", "npm", "run", "dev", "--help"},
		{"go", "web"},
		{"begin"},
		{"start", "web", "--levle", "3"},
		{"start", "web", "--level", "x"},
		{"show-all", "--json"},
		{"show-all", "extra"},
		{"ls", "--jsn"},
		{"run", "say", "hi"},
		{"run", "--nope"},
	} {
		pruned, diff := comparePruned(pruneApp(), env, args)
		if !pruned {
			t.Errorf("%q: not pruned", args)
		}
		if diff != "" {
			t.Errorf("%q: %s", args, diff)
		}
	}
}

func TestNotPruned(t *testing.T) {
	// A grammar whose pruned form would lose a field the command reads
	// is never pruned: it has methods, which a copy would not have.
	env := &Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	if pruned, _ := comparePruned(App{Name: "prog", Grammar: &methodGrammar{}}, env, []string{"do"}); pruned {
		t.Error("a grammar with methods was pruned")
	}
	if pruned, _ := comparePruned(App{Name: "prog", Grammar: &testGrammar{Do: doCmd{Fail: "x"}}}, env, []string{"do"}); pruned {
		t.Error("a grammar with values set was pruned")
	}
}

type methodGrammar struct {
	Globals
	Do doCmd `cmd:""`
}

func (*methodGrammar) AfterApply() error { return nil }
