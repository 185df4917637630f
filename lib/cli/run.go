// Package cli is how every agentry binary runs: one kong parser built through
// kong.New, one error voice ("prog: error: …", then "prog: hint: …"), one
// mapping from errors to the exit codes of DESIGN.md, a signal-aware context
// bound into every command, --version from the build info and shell
// completions generated from the grammar.
//
// A main is three lines:
//
//	func main() { os.Exit(cli.Main(app())) }
//
// where app returns an App whose Grammar embeds Globals. Commands are kong
// commands with a Run method; Run may take a context.Context and an *Env,
// both bound here, and returns an error that ExitCode maps to a status.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/alecthomas/kong"
	posener "github.com/posener/complete"
	"github.com/willabides/kongplete"
)

// App describes one binary.
type App struct {
	Name        string
	Description string
	// Grammar is a pointer to the kong grammar; it should embed Globals.
	Grammar any
	// Options are extra kong options, applied after the shared ones.
	Options []kong.Option
	// Direct lets Run read the plainest lines of a command without kong
	// (see direct.go): for a binary whose every run is a few milliseconds,
	// where building kong's model of the command is a large part of them.
	// Such a command starts before the signal handlers are known to be in
	// place, and calls SignalsArmed before it starts a child.
	Direct bool
	// Operands, when set, ends the command line at its first "--": the
	// arguments after it are the command's operands (ndjson's files), which
	// kong never parses, bound as Operands for Run to take. Without it,
	// "--" is kong's: the end of flags.
	Operands bool
	// Completers complete the arguments tagged predictor:"NAME" in the
	// grammar: each returns the candidates, which the shell's word then
	// narrows by prefix. They run only for a completion request.
	Completers map[string]func() []string
	// ParseError, when set, may say a command line kong could not parse
	// in the program's own terms (a file where its own arguments go, a
	// verb of another tool): given the environment, the whole line and
	// kong's error, it returns the error to report, nil to report kong's.
	ParseError func(env *Env, args []string, err error) error
}

// Operands are the arguments after a command line's first "--", for an App
// with Operands set; nil when there is no "--".
type Operands []string

// splitOperands cuts args at the first "--".
func splitOperands(args []string) ([]string, Operands) {
	for i, a := range args {
		if a == "--" {
			return args[:i:i], Operands(append([]string{}, args[i+1:]...))
		}
	}
	return args, nil
}

// Env is the outside world a command sees. Commands take it as a Run
// argument instead of touching os.Stdin, os.Getenv and friends, so tests can
// drive them.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// Prog is the program's name, set by Run.
	Prog string
}

// Voice is the program's voice on the environment's stderr.
func (e *Env) Voice() Voice { return Voice{Prog: e.Prog, W: e.Stderr} }

// OSEnv is the process's real environment.
func OSEnv() *Env {
	return &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
}

// Globals are the flags every binary has. Embed it in the grammar.
type Globals struct {
	Version    versionFlag    `help:"Print the version and exit."`
	Completion completionFlag `help:"Print a shell completion script for bash, zsh or fish and exit." placeholder:"SHELL"`
}

// exitRequest is how kong's Exit reaches Run without os.Exit in a library.
type exitRequest struct{ code int }

// recoverExit, deferred, turns kong's exit (an exitRequest panic) into
// *code; any other panic goes on.
func recoverExit(code *int) {
	if r := recover(); r != nil {
		req, ok := r.(exitRequest)
		if !ok {
			panic(r)
		}
		*code = req.code
	}
}

// Main runs app against the real process: os.Args, stdio, the environment and
// SIGINT/SIGTERM/SIGHUP. The first such signal cancels the context bound into
// the command; a second one of any kind ends the process at once by the
// default action, or, when the command asked (OnSecondSignal), once its
// last words are done. It answers shell completion requests (COMP_LINE) too.
// The handlers stay until the process exits, which is what the caller does
// with the code Main returns: removing them first would cost a wait for
// the runtime's signal loop to go idle (~0.2 ms) and change nothing.
func Main(app App) int {
	if os.Getenv("COMP_LINE") == "" && asksVersion(app, os.Args[1:]) {
		// Before the signal handlers too: a line kong's hook would end
		// at once needs neither them nor the threads they start.
		printVersion(os.Stdout, app.Name)
		return ExitOK
	}
	ctx := notifyContext(context.Background())
	env := OSEnv()
	if os.Getenv("COMP_LINE") != "" {
		return complete(app, env)
	}
	return Run(ctx, app, env, os.Args[1:])
}

// Run parses args with app's grammar and runs the selected command, printing
// any error in the suite's voice on env.Stderr. It returns the exit code.
func Run(ctx context.Context, app App, env *Env, args []string) (code int) {
	env.Prog = app.Name
	line := args
	if app.Operands {
		var ops Operands
		args, ops = splitOperands(args)
		app.Options = append(app.Options[:len(app.Options):len(app.Options)], kong.Bind(ops))
	}
	if asksVersion(app, args) {
		printVersion(env.Stdout, app.Name)
		return ExitOK
	}
	if cmd, ok := direct(app, args); ok {
		return finish(ctx, app, env, cmd.Run(ctx, env))
	}
	var err error
	parser := prunedParser(app, env, args)
	if parser == nil {
		parser, err = newParser(app, env)
	}
	if err != nil {
		// A grammar that does not build is a bug in the binary, and the
		// grammar test catches it; report it like any other error.
		return Report(app.Name, env.Stderr, fmt.Errorf("internal: %w", err))
	}
	defer recoverExit(&code)
	kctx, err := parser.Parse(args)
	if err != nil {
		if app.ParseError != nil {
			if own := app.ParseError(env, line, err); own != nil {
				return Report(app.Name, env.Stderr, own)
			}
		}
		return Report(app.Name, env.Stderr, usageError(app.Name, err))
	}
	kctx.BindTo(ctx, (*context.Context)(nil))
	SignalsArmed(ctx)
	return finish(ctx, app, env, kctx.Run())
}

// finish reports what the command returned; a command that failed because
// a signal ended it reports the signal.
func finish(ctx context.Context, app App, env *Env, err error) int {
	if err != nil && ctx.Err() != nil {
		var sig *SignalError
		if errors.As(context.Cause(ctx), &sig) && ExitCode(err) != ExitUsage && !errors.Is(err, errReported) {
			err = sig
		}
	}
	return Report(app.Name, env.Stderr, err)
}

// NewParser builds app's kong parser the way Run does. It exists for the
// grammar tests of each binary.
func NewParser(app App, env *Env) (*kong.Kong, error) { return newParser(app, env) }

func newParser(app App, env *Env) (*kong.Kong, error) {
	opts := []kong.Option{
		kong.Name(app.Name),
		kong.Description(app.Description),
		kong.Writers(env.Stdout, env.Stderr),
		kong.Exit(func(code int) { panic(exitRequest{code}) }),
		kong.Bind(env),
		kong.BindTo(context.Background(), (*context.Context)(nil)),
		kong.Vars{"version": Version()},
		kong.ConfigureHelp(kong.HelpOptions{Compact: true, NoExpandSubcommands: true}),
	}
	if app.Operands {
		opts = append(opts, kong.Bind(Operands(nil))) // none, unless Run binds the line's
	}
	opts = append(opts, app.Options...)
	return kong.New(app.Grammar, opts...)
}

// usageError turns a kong parse error into a usage error with a hint.
func usageError(name string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	msg := err.Error()
	return &Error{Code: ExitUsage, Err: errors.New(msg), Hint: "run '" + name + " --help' for usage"}
}

// Report prints err in the suite's voice and returns its exit code: what a
// main that does not go through Main (svc's monitor) ends with.
func Report(name string, stderr io.Writer, err error) int {
	code := ExitCode(err)
	if err == nil {
		return code
	}
	if errors.Is(err, errReported) {
		return code
	}
	Voice{Prog: name, W: stderr}.Error(err)
	return code
}

// Quiet wraps an error the command has already reported itself: Run prints
// nothing more and exits with its code.
func Quiet(code int) error { return &Error{Code: code, Err: errReported} }

var errReported = errors.New("already reported")

func oneLine(s string) string {
	return strings.TrimSpace(strings.ReplaceAll(s, "\n", " "))
}

// notifyContext returns a context cancelled, with a *SignalError cause, by the
// first SIGINT, SIGTERM or SIGHUP. After that the handlers are removed, so a
// second signal has its default effect, unless the program gave last words
// (OnSecondSignal): then the second is taken, the words said, and the
// process exits as the signal would have ended it. Until a signal comes
// the handlers stay, for the life of the process.
//
// The handlers are installed on a goroutine of their own: the runtime's
// first signal.Notify starts a signal thread and hands it each signal in
// turn (~0.2 ms here), and parsing the command line need not wait for
// that. SignalsArmed waits for it.
func notifyContext(parent context.Context) context.Context {
	ctx, cancel := context.WithCancelCause(parent)
	armed := make(chan struct{})
	sec := &secondSignal{}
	go func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
		close(armed)
		s := <-ch
		last := sec.take()
		if last == nil {
			signal.Stop(ch)
		}
		cancel(&SignalError{Signal: s.(syscall.Signal)})
		if last != nil {
			again := (<-ch).(syscall.Signal)
			signal.Stop(ch) // a third while last runs ends the process at once
			last()
			os.Exit(128 + int(again))
		}
	}()
	ctx = context.WithValue(ctx, armedKey{}, armed)
	return context.WithValue(ctx, secondKey{}, sec)
}

type armedKey struct{}

type secondKey struct{}

// secondSignal is what a second signal does besides ending the process
// (OnSecondSignal); taken once the first has come.
type secondSignal struct {
	mu    sync.Mutex
	last  func()
	taken bool
}

func (s *secondSignal) take() func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.taken = true
	return s.last
}

// OnSecondSignal makes a second SIGINT, SIGTERM or SIGHUP to a program
// run by Main, which would end it at once, call last first, and then end
// it as the signal would have (exit 128+N): a program whose first signal
// drains its children ends them when told twice, rather than leave them
// to init. Given after the first signal came, it does nothing.
func OnSecondSignal(ctx context.Context, last func()) {
	if sec, ok := ctx.Value(secondKey{}).(*secondSignal); ok {
		sec.mu.Lock()
		if !sec.taken {
			sec.last = last
		}
		sec.mu.Unlock()
	}
}

// SignalsArmed returns once the signal handlers of Main's context are in
// place: from then on SIGINT, SIGTERM and SIGHUP cancel ctx instead of
// ending the process. Run waits for them before it runs a command parsed
// by kong; a Direct command calls it itself before it starts anything a
// signal must reach. For a context not made by Main it returns at once.
func SignalsArmed(ctx context.Context) {
	if armed, ok := ctx.Value(armedKey{}).(chan struct{}); ok {
		<-armed
	}
}

func complete(app App, env *Env) (code int) {
	parser, err := newParser(app, env)
	if err != nil {
		return ExitFailure
	}
	defer func() {
		if r := recover(); r != nil {
			req, ok := r.(exitRequest)
			if !ok {
				panic(r)
			}
			code = req.code
		}
	}()
	if def := parser.Model.Node.DefaultCmd; def != nil {
		// kongplete reads the line from the process environment; this is
		// the completion run of the process, which ends right after.
		line := os.Getenv("COMP_LINE")
		if with, ok := withDefaultCmd(line, def.Name); ok {
			point, err := strconv.Atoi(os.Getenv("COMP_POINT"))
			if err != nil || point > len(line) {
				point = len(line)
			}
			os.Setenv("COMP_LINE", with)
			os.Setenv("COMP_POINT", strconv.Itoa(point+len(with)-len(line)))
		}
	}
	predictors := map[string]posener.Predictor{}
	for name, f := range app.Completers {
		predictors[name] = posener.PredictFunc(func(posener.Args) []string { return f() })
	}
	kongplete.Complete(parser, kongplete.WithExitFunc(func(c int) { panic(exitRequest{c}) }), kongplete.WithPredictors(predictors))
	return ExitOK
}

// withDefaultCmd puts the default command's name into a completion line
// whose first word is a flag, so that `runagent --le<TAB>` completes the
// flags of the command that will run. Flags every command has complete
// either way.
func withDefaultCmd(line, cmd string) (string, bool) {
	prog, rest, ok := strings.Cut(line, " ")
	if !ok || !strings.HasPrefix(rest, "-") {
		return line, false
	}
	return prog + " " + cmd + " " + rest, true
}
