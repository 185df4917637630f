package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestExitCode(t *testing.T) {
	cases := []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("plain"), 1},
		{Failf("x"), 1},
		{Usagef("x"), 2},
		{Timeoutf("x"), 124},
		{&SignalError{Signal: syscall.SIGINT}, 130},
		{&SignalError{Signal: syscall.SIGTERM}, 143},
		{WithHint(Usagef("x"), "h"), 2},
		{WithHint(errors.New("x"), "h"), 1},
		{WithCode(errors.New("x"), 3), 3},
	}
	for _, c := range cases {
		if got := ExitCode(c.err); got != c.want {
			t.Errorf("ExitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

func TestParseSize(t *testing.T) {
	good := map[string]Size{"0": 0, "100": 100, "64KiB": 64 << 10, "64MiB": 64 << 20, "1GiB": 1 << 30,
		"2k": 2048, "3M": 3 << 20, "1kB": 1000, "5MB": 5e6, "1 GB": 1e9, "7b": 7}
	for in, want := range good {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
		if back, err := ParseSize(got.String()); err != nil || back != got {
			t.Errorf("%q prints as %q, which reads back as %d, %v", in, got.String(), back, err)
		}
	}
	for _, in := range []string{"", "MiB", "-1", "1XB", "1.5MiB", "99999999999GiB"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) succeeded", in)
		}
	}
}

type testGrammar struct {
	Globals
	Do doCmd `cmd:"" help:"Do it."`
}

type doCmd struct {
	Fail string `help:"Fail with this exit code kind: usage, fail, hint, signal."`
}

func (d *doCmd) Run(ctx context.Context, env *Env) error {
	switch d.Fail {
	case "usage":
		return Usagef("bad usage")
	case "fail":
		return Failf("it failed\nacross lines")
	case "hint":
		return WithHint(Failf("it failed"), "try again")
	case "signal":
		<-ctx.Done()
		return ctx.Err()
	}
	_, err := env.Stdout.Write([]byte("done\n"))
	return err
}

func run(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	code := Run(ctx, App{Name: "prog", Grammar: &testGrammar{}}, env, args)
	return code, out.String(), errb.String()
}

func TestRun(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		args       []string
		code       int
		out, errer string
	}{
		{[]string{"do"}, 0, "done\n", ""},
		{[]string{"--help"}, 0, "Usage: prog <command>", ""},
		{[]string{"--version"}, 0, "prog ", ""},
		{[]string{"--completion", "fish"}, 0, "# fish completion for prog", ""},
		{[]string{}, 2, "", "prog: error: expected \"do\"\nprog: hint: run 'prog --help' for usage\n"},
		{[]string{"nope"}, 2, "", "prog: error: unexpected argument nope\n"},
		{[]string{"do", "--fail", "usage"}, 2, "", "prog: error: bad usage\n"},
		{[]string{"do", "--fail", "fail"}, 1, "", "prog: error: it failed across lines\n"},
		{[]string{"do", "--fail", "hint"}, 1, "", "prog: error: it failed\nprog: hint: try again\n"},
	}
	for _, c := range cases {
		code, out, errs := run(t, ctx, c.args...)
		if code != c.code || !strings.HasPrefix(out, c.out) || !strings.HasPrefix(errs, c.errer) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d, %q, %q", c.args, code, out, errs, c.code, c.out, c.errer)
		}
	}
}

// "--version" alone is answered without kong, in kong's words; with
// anything else on the line it is kong's, which reads the rest first.
func TestVersionWithoutKong(t *testing.T) {
	app := App{Name: "prog", Grammar: &testGrammar{}}
	if d := VersionDiff(app); d != "" {
		t.Error(d)
	}
	if !asksVersion(app, []string{"--version"}) {
		t.Error("--version alone goes to kong")
	}
	for _, args := range [][]string{{"--version", "--bogus"}, {"do", "--version"}, {"--version=true"}, {"--version", "--version"}} {
		if asksVersion(app, args) {
			t.Errorf("%q is answered without kong", args)
		}
	}
	if code, out, errs := run(t, context.Background(), "--version", "--bogus"); code != 2 || out != "" || !strings.HasPrefix(errs, "prog: error: unknown flag --bogus") {
		t.Errorf("--version --bogus: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	type noGlobals struct {
		Do doCmd `cmd:""`
	}
	if asksVersion(App{Name: "prog", Grammar: &noGlobals{}}, []string{"--version"}) {
		t.Error("a grammar without Globals answers --version")
	}
}

// An App's ParseError words what kong could not parse, given the whole
// line; nil leaves kong's words.
func TestRunParseError(t *testing.T) {
	var got []string
	app := App{Name: "prog", Grammar: &testGrammar{}, Operands: true, ParseError: func(_ *Env, args []string, err error) error {
		got = args
		if args[0] == "filter" {
			return Usagef("no verb filter: did you mean do?")
		}
		return nil
	}}
	for _, c := range []struct {
		args []string
		errs string
	}{
		{[]string{"filter", "--", "f"}, "prog: error: no verb filter: did you mean do?\n"},
		{[]string{"nope"}, "prog: error: unexpected argument nope\nprog: hint: run 'prog --help' for usage\n"},
	} {
		var out, errb bytes.Buffer
		env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
		if code := Run(context.Background(), app, env, c.args); code != 2 || errb.String() != c.errs {
			t.Errorf("%q: exit %d, stderr %q; want 2, %q", c.args, code, errb.String(), c.errs)
		}
		if !slices.Equal(got, c.args) {
			t.Errorf("%q: ParseError was given %q", c.args, got)
		}
	}
}

func TestRunSignal(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(&SignalError{Signal: syscall.SIGTERM})
	code, _, errs := run(t, ctx, "do", "--fail", "signal")
	if code != 143 || errs != "prog: error: interrupted by SIGTERM\n" {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// Main's context: once SignalsArmed has returned, a SIGTERM to the process
// cancels the context, with the signal as its cause, instead of ending the
// process.
func TestSignalsArmed(t *testing.T) {
	SignalsArmed(context.Background()) // not Main's: returns at once
	ctx := notifyContext(context.Background())
	SignalsArmed(ctx)
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SIGTERM did not cancel the context")
	}
	var sig *SignalError
	if !errors.As(context.Cause(ctx), &sig) || sig.Signal != syscall.SIGTERM {
		t.Fatalf("cause %v", context.Cause(ctx))
	}
}
