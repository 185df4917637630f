package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

type directGrammar struct {
	Globals
	Go    directGoCmd `cmd:"" default:"withargs" help:"Go, the default (${version})."`
	Other showTestCmd `cmd:"" help:"Another."`
}

type directGoCmd struct {
	Level    int           `short:"l" env:"DIRECT_TEST_LEVEL" help:"The level." placeholder:"N"`
	Agent    string        `env:"DIRECT_TEST_AGENT,DIRECT_TEST_AGENT2" default:"claude" help:"The agent."`
	Dir      string        `short:"C" help:"A directory."`
	ToolsURL string        `help:"A URL."`
	JSON     bool          `name:"json" help:"JSON."`
	Max      int           `default:"1000" help:"Most."`
	Budget   float64       `name:"max-budget-usd" help:"USD."`
	Idle     time.Duration `help:"A duration."`
	Schema   string        `type:"path" help:"A file."`
	Log      string        `type:"path" default:"log.txt" help:"A file with a default."`
	Prompt   []string      `arg:"" optional:"" help:"The words."`
}

func (c *directGoCmd) Run(ctx context.Context, env *Env) error {
	_, err := io.WriteString(env.Stdout, "level "+strings.Repeat("I", c.Level)+" words "+strings.Join(c.Prompt, "+"))
	return err
}

func directApp() App { return App{Name: "prog", Grammar: &directGrammar{}, Direct: true} }

func quietEnv() *Env {
	return &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
}

func TestDirectReadsPlainLines(t *testing.T) {
	for _, args := range [][]string{
		{"-l", "1"},
		{"go", "-l", "2", "say", "hi"},
		{"--level=3", "--agent", "codex", "-C", "/tmp", "--tools-url", "http://x/mcp", "--json"},
		{"--max", "0x10", "--max-budget-usd", "1.5", "--idle", "90s", "--schema", "s.json", "--log", ""},
		{"--schema=/abs/s.json", "fix", "the", "bug", "--json"},
		{"words", "a,b", "--json"},
		{"go", "--json", "--", "-l", "--help", "go", "--"},
		{"go"},
	} {
		read, diff := compareDirect(directApp(), quietEnv(), args)
		if !read || diff != "" {
			t.Errorf("%q: read without kong %v, %s", args, read, diff)
		}
	}
}

func TestDirectLeavesTheRestToKong(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--version"},
		{"-l", "1", "--help"},
		{"-h"},
		{"--completion", "bash"},
		{"other"},
		{"-l", "1", "other"},        // another command named later
		{"-l", "1", "go"},           // the default command named later
		{"-l1"},                     // a short flag with its value attached
		{"-l=1"},                    //
		{"--level", "-1"},           // a value like a flag
		{"--level", "x"},            // a value that does not decode
		{"--level", "1", "-l", "2"}, // twice
		{"--json=true"},             //
		{"--nope"},                  // not a flag of the command
		{"-"},                       //
		{"--schema", "~/s.json"},    // kong looks up the user
		{"--schema="},               //
		{"--level"},                 // no value
		{"--Level", "1"},            //
		{"hi", "-l", "1", "there"},  // words after a flag that followed words: kong refuses them
		{"hi", "--", "there"},       //
		{"hi", ""},                  // kong drops an empty word
		{"--", "a", ""},             //
		{"--", "other"},             // kong runs other
	} {
		if read, _ := compareDirect(directApp(), quietEnv(), args); read {
			t.Errorf("%q: read without kong, want it left to kong", args)
		}
	}
}

func TestDirectTakesTheEnvironmentAsKongDoes(t *testing.T) {
	t.Setenv("DIRECT_TEST_LEVEL", "2")
	t.Setenv("DIRECT_TEST_AGENT2", "codex")
	for _, args := range [][]string{{"hi"}, {"-l", "3", "hi"}, {"--agent", "x"}} {
		if read, diff := compareDirect(directApp(), quietEnv(), args); !read || diff != "" {
			t.Errorf("%q: read without kong %v, %s", args, read, diff)
		}
	}
	t.Setenv("DIRECT_TEST_LEVEL", "") // set, so kong decodes it, and fails
	if read, _ := compareDirect(directApp(), quietEnv(), []string{"hi"}); read {
		t.Error("an empty DIRECT_TEST_LEVEL was read without kong")
	}
}

func TestDirectRefusesWhatItDoesNotKnow(t *testing.T) {
	for _, g := range []any{
		&struct {
			Globals
			Go struct {
				Mode string `enum:"a,b" default:"a"`
			} `cmd:""`
		}{},
		&struct {
			Globals
			Go hookCmd `cmd:""`
		}{},
		&pruneGrammar{}, // commands without a Run(ctx, env)
	} {
		if _, ok := direct(App{Name: "prog", Grammar: g, Direct: true}, []string{"go"}); ok {
			t.Errorf("%T: read without kong", g)
		}
	}
	if _, ok := direct(App{Name: "prog", Grammar: &directGrammar{}}, []string{"go"}); ok {
		t.Error("an App not marked Direct was read without kong")
	}
}

type hookCmd struct {
	N int
}

func (*hookCmd) Run(context.Context, *Env) error { return nil }
func (*hookCmd) AfterApply() error               { return nil }

// Run gives what the command prints, and kong's error for a line it
// leaves to kong.
func TestDirectRuns(t *testing.T) {
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	if code := Run(context.Background(), directApp(), env, []string{"-l", "2", "a", "b"}); code != 0 || out.String() != "level II words a+b" {
		t.Errorf("exit %d, %q %q", code, out.String(), errb.String())
	}
	out.Reset()
	if code := Run(context.Background(), directApp(), env, []string{"--level", "x"}); code != ExitUsage || !strings.Contains(errb.String(), "prog: error: --level: expected a valid 64 bit int but got \"x\"") {
		t.Errorf("exit %d, %q %q", code, out.String(), errb.String())
	}
}

func TestKongName(t *testing.T) {
	for field, want := range map[string]string{"ToolsURL": "tools-url", "SessionID": "session-id", "MaxBudgetUSD": "max-budget-usd",
		"PDFLoader": "pdf-loader", "JSON": "json", "Level": "level", "URLs": "ur-ls", "V2Name": "v-2-name", "Ä": ""} {
		if got := kongName(field); got != want {
			t.Errorf("kongName(%q) = %q, want %q", field, got, want)
		}
	}
}

// FuzzDirect: whatever line is read without kong, kong reads the same.
func FuzzDirect(f *testing.F) {
	words := []string{"-l", "--level", "--level=2", "1", "0x1f", "-1", "x", "--agent", "codex", "--agent=", "-C", "/tmp", "rel/dir",
		"--tools-url", "--json", "--json=false", "--max", "--max-budget-usd", "1.5", "1e3", "--idle", "5s", "5", "--schema", "--log", "~/f",
		"--log=", "--", "-", "", "go", "other", "a,b", "hi", "--help", "-h", "--version", "--completion", "bash", "--nope", "-x", "="}
	f.Add([]byte{0, 3, 27, 34})
	f.Add([]byte{28, 1, 8, 33, 7, 29, 4})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 12 {
			b = b[:12]
		}
		args := make([]string, len(b))
		for i, c := range b {
			args[i] = words[int(c)%len(words)]
		}
		if _, diff := compareDirect(directApp(), quietEnv(), args); diff != "" {
			t.Errorf("%q: %s", args, diff)
		}
	})
}
