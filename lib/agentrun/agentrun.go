// Package agentrun runs one headless agent under a grant: the prompt on
// its stdin, its stream read as it comes, its answer or the reason there is
// none, and nothing left behind — not the scratch directory of a level 1
// run, not a codex run's CODEX_HOME, not a process in its group, not a
// service it started with the svc tools a run with services gives it
// (unless they are kept).
//
// Nothing stops an agent but its own exit, a signal from the user (which
// is forwarded to the agent's process group), or a limit the user set:
// the idle timeout, and the turns, tool calls and budget counted here.
//
// A run says how it ended in typed fields (Result.Limit, Stalled,
// StoppedBy) and in sentences that name no flag; the face gives its own
// names for the limits (Words) and decides its exit status.
package agentrun

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/agenthome"
	"github.com/agentry/agentry/lib/atomicfile"
	"github.com/agentry/agentry/lib/grant"
	"github.com/agentry/agentry/lib/policy"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/protocol"
	"github.com/agentry/agentry/lib/sockdiag"
	"golang.org/x/sys/unix"
)

// scratchPrefix names a level 1 run's scratch directories among the
// user's run directories ($TMPDIR/agentry-UID, agenthome.Runs);
// filesPrefix a run's own files (its grant's Files).
const (
	scratchPrefix = agenthome.RunagentScratch
	filesPrefix   = agenthome.RunagentFiles
)

// regrant is req with its grant made again from its options, now that they
// name the run's files directory and its services' URL; later attempts'
// grants are made from the same options. A request whose grant was not
// made from its options keeps it.
func regrant(req Request) Request {
	if g, err := grant.For(req.Options); err == nil {
		req.Grant = g
	}
	return req
}

// Request is one run.
type Request struct {
	Grant *grant.Grant
	// Options are what Grant was made from: a later attempt of the run (a
	// retry, a wrap-up, another try for Until) is a grant made from them
	// that resumes the session.
	Options grant.Options
	Prompt  string
	WorkDir string // the working copy, for levels 2 and 3
	PidFile string // written the moment the agent starts
	// MaxOutput caps the answer in characters (default 1,000,000).
	MaxOutput int
	// Env is the job's environment (default: this process's); the agent
	// gets it whole, or what Clean passes of it.
	Env []string
	// Clean, when set, passes the agent only grant.EnvAllowed of Env, and
	// the values of what it drops are redacted from what the run says.
	Clean *CleanEnv
	// Redact names variables whose values are redacted from what the run
	// says (the answer, the events, the result) though they are passed.
	Redact []string
	// Codex says where the user's codex configuration lives.
	Codex agenthome.CodexSource
	// StopSignal names the signal that cancelled ctx, to forward it; nil
	// means SIGTERM.
	StopSignal func() syscall.Signal
	// Schema, when set, is what the answer must conform to; the answer is
	// then its compact JSON.
	Schema *Schema
	// MaxTurns caps the model's turns over the whole run, counted here
	// from the stream (claude: its responses, a turn beyond the cap
	// stopped as it starts; codex: its tool calls, stopped as the cap-th
	// completes). The grant passes claude's own flag too.
	MaxTurns int
	// MaxToolCalls stops the agent as its cap-th tool call completes.
	MaxToolCalls int
	// MaxBudgetUSD is kept over the whole run: claude is given what is
	// left at each attempt; codex, with a Price, is checked as each
	// attempt ends (it reports tokens only then).
	MaxBudgetUSD float64
	// Price computes codex's cost from its tokens.
	Price *Price
	// IdleTimeout, when set, stops an agent that has written nothing for
	// this long: a stall, not a slow answer.
	IdleTimeout time.Duration
	// Retry is how many times a transient failure (an API's 429 or 5xx, a
	// cut stream, a signal nobody sent) is resumed; RetryStalls counts a
	// stall as one. RetryBase is the first backoff (default 2 s).
	Retry       int
	RetryStalls bool
	RetryBase   time.Duration
	// WrapUp: at a limit, resume the session once, without tools, for a
	// report of what is done and what remains.
	WrapUp bool
	// Until is a shell command run in the working copy after each answer;
	// the run ends when it succeeds, else the session is resumed with its
	// output, up to Attempts answers in all (default 3).
	Until    string
	Attempts int
	// Preflight proves before the first model call that the run can do
	// its work: a writable working copy at level 2 and 3, an agent that
	// starts, a credential.
	Preflight bool
	// Events, when set, receives the run's progress as agent-host protocol
	// messages, one a line.
	Events io.Writer
	// Services, when set, gives the agent svc's tools (runagent
	// --services): svc mcp is started for the run before the agent, its
	// URL put in the grant in place of ServicesPending, and after the
	// agent has ended every service of the run is stopped (unless kept)
	// and its end reported in Result.Services.
	Services *ServicesOptions
	// Words are the face's names for the run's limits.
	Words Words
	// Host, when set, runs the agent through an agent-host backend in
	// this process (Grant.Argv its command) instead of as a CLI.
	Host *HostAgent
	// Reaper, when the process is a child subreaper (runagent), starts
	// every command of the run (a process with a reaper must start all
	// its children through it), and once the run's attempts and checks
	// are over, before the services are finished, what they orphaned to
	// it is ended.
	Reaper *proc.Reaper
	// Policy, when set, is checked by the host on every tool call of a
	// host agent (its backend puts every call to agentry): a call it
	// denies never runs, and Result.Denials lists it.
	Policy *policy.Policy
	// Answers answer a host agent's questions; a question they do not
	// answer ends the run (Result.Questions). Nil: none is answered.
	Answers Answers

	runs agenthome.Runs // where the run's directories go, found once by Run
}

// Limit is a limit the run was given that stopped it.
type Limit int

const (
	NoLimit        Limit = iota
	LimitTurns           // MaxTurns: counted here, or claude kept its own
	LimitToolCalls       // MaxToolCalls
	LimitBudget          // MaxBudgetUSD
	LimitNoTools         // a tool call in a turn without tools (a wrap-up's)
)

// Words are what a face calls the limits of a run: in Result.LimitName,
// in the reason of a run stopped at one, and in the summary.
type Words struct {
	// Limit names l, with n, its value, when n > 0 (runagent:
	// "--max-turns 3"; "--max-budget-usd"); "", or a nil Limit, leaves
	// it to the run's own words ("the limit of 3 turns").
	Limit func(l Limit, n int) string
}

// limit names l, with n when n > 0, in the face's words or else the
// run's own.
func (w Words) limit(l Limit, n int) string {
	if w.Limit != nil {
		if s := w.Limit(l, n); s != "" {
			return s
		}
	}
	var unit string
	switch l {
	case LimitTurns:
		unit = "turns"
	case LimitToolCalls:
		unit = "tool calls"
	case LimitBudget:
		return "the budget"
	case LimitNoTools:
		return "no tools"
	default:
		return ""
	}
	if n > 0 {
		return fmt.Sprintf("the limit of %d %s", n, unit)
	}
	return "the limit of " + unit
}

// CleanEnv is a clean environment: the agent's needs and Allow (names or
// globs).
type CleanEnv struct{ Allow []string }

// StartError is a run that could not start: nothing ran (exit 2).
type StartError struct {
	Reason string
	Err    error // what it was, where a caller may ask (ErrNoSvc, agenthome.ErrNotSignedIn, *grant.NotInstalledError), else nil
}

func (e *StartError) Error() string { return e.Reason }
func (e *StartError) Unwrap() error { return e.Err }

// Result is how a run ended.
type Result struct {
	OK         bool    `json:"ok"`
	Text       string  `json:"text,omitempty"`
	Reason     string  `json:"reason,omitempty"`
	Agent      string  `json:"agent"`
	Level      int     `json:"level"`
	PID        int     `json:"pid"`
	Session    string  `json:"session,omitempty"`
	ExitCode   *int    `json:"exitCode"`
	Signal     string  `json:"signal,omitempty"`
	Truncated  bool    `json:"truncated"`
	DurationMs float64 `json:"durationMs"`
	// StoppedBy is the signal runagent received and forwarded, if any.
	StoppedBy string `json:"stoppedBy,omitempty"`
	// Services are the services the agent started (--services): how each
	// ended, or where it runs on when kept.
	Services []ServiceEnd `json:"services,omitempty"`
	// Usage is what the run cost, as far as the agent said, over every
	// attempt.
	Usage *Usage `json:"usage,omitempty"`
	// Limit is the limit that stopped the run, LimitName the face's name
	// for it (Words); Text then holds what the agent had said, or its
	// wrap-up.
	Limit     Limit  `json:"-"`
	LimitName string `json:"limit,omitempty"`
	// Stalled: the idle timeout stopped the run.
	Stalled bool `json:"stalled,omitempty"`
	// Partial: Text is the agent's wrap-up at a limit, not an answer.
	Partial bool `json:"partial,omitempty"`
	// Attempts are the run's starts of the agent, when there was more
	// than one or a check ran: why each ended, what it cost.
	Attempts []Attempt `json:"attempts,omitempty"`
	// Violation: the agent ran what its level or policy forbids without asking, and
	// the backend's tripwire ended it (a host agent's); Reason says what.
	Violation bool `json:"violation,omitempty"`
	// Questions: the agent asked these (a host agent's) and the run had
	// no answer to one of them, so it ended there (Reason "question"):
	// the agent was told nobody answered, and SessionID is the session to
	// resume with the answers.
	Questions []protocol.Question `json:"questions,omitempty"`
	SessionID string              `json:"sessionId,omitempty"`
	// Denials are the tool calls a policy denied (a host agent's).
	Denials []Denial `json:"denials,omitempty"`
	// UnusedAnswers are the answers given that no question asked for
	// (a run that resumes no session; its face decides what that is).
	UnusedAnswers []string `json:"unusedAnswers,omitempty"`

	tr      *grant.Transcript // the attempt's
	work    work              // what the agent did, for Summary
	secrets *secrets          // what is redacted from what the run says
	fault   string            // the attempt's transient failure, or ""
	retry   time.Duration     // the wait its API asked for
	code    string            // a host agent's error code, when it failed with one
}

// Denial is a tool call a policy denied: the tool, the rule that matched
// (as the policy file wrote it, with where), what it matched, and the
// verdict ("deny", or "ask" when the rule asked and nobody could answer).
type Denial struct {
	Tool    string `json:"tool"`
	Rule    string `json:"rule"`
	Match   string `json:"match"`
	Verdict string `json:"verdict"`
}

// procOptions is how the run starts its commands: through the reaper, if any.
func (req Request) procOptions() proc.Options { return proc.Options{Reaper: req.Reaper} }

// endOrphanGrace is how long a run waits for what the agent's tree
// orphaned to go, after SIGKILL.
const endOrphanGrace = 2 * time.Second

// endOrphans ends what the agent's tree left to the reaper, if there is
// one: a process that escaped every group and tree the run knew (a
// sandbox's wrapper whose agent died as it started it).
func (req Request) endOrphans() {
	if req.Reaper != nil {
		req.Reaper.EndOrphans(time.Now().Add(endOrphanGrace))
	}
}

// Run runs the agent to its end, with its services when it has them.
func Run(ctx context.Context, req Request) (*Result, error) {
	if strings.TrimSpace(req.Prompt) == "" {
		return nil, &StartError{Reason: "the prompt is empty"}
	}
	// An agent that is not there is said so before anything else is
	// prepared or checked (codex's credential, svc's tools).
	if err := grant.Installed(req.Grant.Harness, req.Grant.Argv[0]); err != nil {
		return nil, &StartError{Reason: err.Error(), Err: err}
	}
	// What the agent's argv would otherwise carry (its MCP servers, a
	// system prompt) goes in files of a directory of the run's own, made
	// when the grant has any (a codex grant has none: its configuration
	// is in its CODEX_HOME).
	req.runs = agenthome.NewRuns()
	if len(req.Grant.Files) > 0 {
		files, err := req.runs.Dir(filesPrefix)
		if err != nil {
			return nil, &StartError{Reason: "could not make the run's directory: " + proc.ErrnoName(err)}
		}
		defer os.RemoveAll(files)
		req.Options.FilesDir = files
	}
	if req.Services == nil {
		defer req.endOrphans()
		return run(ctx, regrant(req))
	}
	// svc mcp, and every service and command it runs for the agent, get
	// the agent's environment, not ours: what a clean environment keeps
	// from the agent, its tools do not hand it; and git's guard, as the
	// agent's own commands have it.
	job := req.Env
	if job == nil {
		job = os.Environ()
	}
	env, _ := agentEnv(req, job)
	env = grant.GitGuard(env)
	s, err := startServices(*req.Services, env, req.procOptions()) // a *StartError
	if err != nil {
		return nil, err
	}
	if req.Options.ServicesURL != "" {
		req.Options.ServicesURL = s.URL
	}
	res, err := run(ctx, regrant(req))
	// svc mcp, a child of the reaper's, runs on, and so do its services'
	// monitors, its own children; but a svc mcp that died in the run has
	// handed them to this process, and kept services are not ended with
	// the agent's orphans.
	if !s.keep || s.child.Running() {
		req.endOrphans()
	}
	ends := s.finish() // however the run ended
	if res != nil {
		for i := range ends {
			for j, l := range ends[i].Tail {
				ends[i].Tail[j] = res.secrets.apply(l)
			}
			ends[i].Command = slices.Clone(ends[i].Command)
			for j, a := range ends[i].Command {
				ends[i].Command[j] = res.secrets.apply(a)
			}
		}
		res.Services = ends
	}
	return res, err
}

// wait waits for the agent to end: by itself, by a signal to runagent
// (forwarded, with no clock), by codex reaching --max-turns, or by
// --idle-timeout. The last two stop its group: SIGTERM, then SIGKILL.
func (res *Result) wait(ctx context.Context, req Request, a *agent, st *stream) {
	var idle, look <-chan time.Time
	var timer *time.Timer
	var read uint64
	if req.IdleTimeout > 0 {
		timer = time.NewTimer(req.IdleTimeout)
		defer timer.Stop()
		idle = timer.C
		// Output is not the only sign of life: codex prints nothing while
		// a model's answer streams in, but its sockets receive it.
		t := time.NewTicker(min(req.IdleTimeout/4, 500*time.Millisecond))
		defer t.Stop()
		look = t.C
		read, _ = sockdiag.BytesReceived(a.tree())
	}
	for {
		select {
		case <-a.child.Exited():
			return
		case <-st.activity:
			if timer != nil {
				timer.Reset(req.IdleTimeout)
			}
		case <-look:
			if n, ok := sockdiag.BytesReceived(a.tree()); ok && n != read {
				read = n
				timer.Reset(req.IdleTimeout)
			}
		case <-ctx.Done():
			sig := syscall.SIGTERM
			if req.StopSignal != nil {
				sig = req.StopSignal()
			}
			res.StoppedBy = unix.SignalName(sig)
			_ = a.child.Signal(sig)
			<-a.child.Exited() // no clock: the agent ends when it ends
			return
		case <-st.limit:
			res.Limit = st.hit
			a.child.Stop(syscall.SIGTERM, 5*time.Second)
			return
		case <-idle:
			res.Stalled = true
			a.child.Stop(syscall.SIGTERM, 5*time.Second)
			return
		}
	}
}

// stopped says how a run that did not end by itself ended: by a signal,
// a stall, or at a limit (with the partial answer).
func (res *Result) stopped(req Request, tr *grant.Transcript) {
	if res.Limit == NoLimit {
		switch tr.Limit() { // claude stopped itself at one
		case grant.TurnLimit:
			res.Limit = LimitTurns
		case grant.BudgetLimit:
			res.Limit = LimitBudget
		}
	}
	if res.Limit != NoLimit {
		res.LimitName = req.Words.limit(res.Limit, 0)
	}
	switch {
	case res.StoppedBy != "":
		res.OK = false
		// What the CLI said as it went is no reason: the signal was
		// (claude answers SIGTERM with exit 143 and its stream's tail).
		res.Reason = "stopped by " + res.StoppedBy + "; " + res.Agent + " was ended with everything it started"
	case res.Stalled:
		res.OK, res.Text = false, ""
		res.Reason = fmt.Sprintf("stalled: no output for %v", req.IdleTimeout)
	case res.Limit != NoLimit:
		res.OK = false
		res.Text = tr.Partial()
		res.Reason = fmt.Sprintf("stopped at %s: the answer is what %s had said so far", limitDesc(res.Limit, req), res.Agent)
	}
}

// limitDesc is the limit a run stopped at, with its value when it has one.
func limitDesc(l Limit, req Request) string {
	n := 0
	switch l {
	case LimitNoTools:
		return "a tool call in a turn without tools"
	case LimitTurns:
		n = req.MaxTurns
	case LimitToolCalls:
		n = req.MaxToolCalls
	}
	return req.Words.limit(l, n)
}

// conform turns an answer into the schema's: its compact JSON, or a
// failure naming the first violation.
func (res *Result) conform(s *Schema, tr *grant.Transcript) {
	raw, ok := tr.Structured()
	if !ok {
		res.OK, res.Text = false, ""
		res.Reason = res.Agent + " ended without a structured answer"
		return
	}
	res.check(s, raw)
}

// check makes a structured answer the schema's: its compact JSON, or a
// failure naming the first violation.
func (res *Result) check(s *Schema, raw string) {
	compact, violation := s.Check(raw)
	if violation != "" {
		res.OK, res.Text = false, ""
		res.Reason = violation
		return
	}
	res.Text = compact
}

// workspace is where the agent runs and with what environment; cleanup
// removes what was made for the run (the scratch directory, CODEX_HOME).
type workspace struct {
	dir     string
	env     []string
	redact  *redactor
	secrets *secrets // values redacted from what the run says
	runID   string   // the run's id in --events
	hosted  *hosted  // a host agent's host, once its first attempt opened it
	answers *answering
	sweep   *sweep // begun when the agent has started
	cleanup func()
}

// prepare makes the run's workspace: the scratch directory for level 1,
// a CODEX_HOME holding the grant's configuration for codex.
func prepare(req Request) (*workspace, error) {
	g := req.Grant
	w := &workspace{dir: req.WorkDir, env: req.Env, redact: &redactor{}, runID: "runagent-" + strconv.Itoa(os.Getpid()),
		answers: &answering{answers: req.Answers, used: map[string]bool{}}}
	var made []string
	w.cleanup = func() {
		w.hosted.close() // a host agent's processes end before its directories go
		w.hosted = nil
		for _, d := range made {
			os.RemoveAll(d)
		}
	}
	if w.env == nil {
		w.env = os.Environ()
	}
	job := w.env
	w.env, w.secrets = agentEnv(req, job)
	w.env = grant.GitGuard(w.env)
	if home, err := os.UserHomeDir(); err == nil {
		w.redact.add(home, "~")
	}
	if g.Scratch {
		// An agent that can write nowhere (level 1) runs in the user's
		// empty directory; where that cannot be used, in a fresh one.
		scratch, err := req.runs.Empty()
		if err != nil {
			if scratch, err = req.runs.Dir(scratchPrefix); err != nil {
				return nil, &StartError{Reason: "could not make a scratch directory: " + proc.ErrnoName(err)}
			}
			made = append(made, scratch)
		}
		w.dir = scratch
		w.redact.add(scratch, "<scratch>")
	} else if w.dir != "" {
		w.redact.add(w.dir, "<working copy>")
	}
	if g.Harness == grant.Codex && req.Host == nil { // a hosted codex makes its own
		src := req.Codex
		src.Runs = req.runs
		home, err := agenthome.PrepareCodex(g, src, job)
		if err != nil {
			w.cleanup()
			return nil, &StartError{Reason: err.Error(), Err: err}
		}
		if !home.Kept {
			made = append(made, home.Dir)
		}
		w.redact.add(home.Dir, "<CODEX_HOME>")
		w.env = append(withoutKey(w.env, "CODEX_HOME"), "CODEX_HOME="+home.Dir)
	}
	return w, nil
}

// agent is a started agent: its child, with its stdout to read and the
// tail of its stderr.
type agent struct {
	child *proc.Piped
	start time.Time
}

// tree is the agent and every process it started, for the idle watchdog.
func (a *agent) tree() []int {
	return append([]int{a.child.PID()}, proc.Descendants(a.child.PID())...)
}

// startAgent starts the grant's argv in the workspace with the prompt on
// its stdin (never on its argv), and writes the pid file.
func startAgent(req Request, w *workspace, g *grant.Grant, prompt string) (*agent, error) {
	for _, f := range g.Files {
		if !filepath.IsAbs(f.Path) { // the first attempt's grant had none, so no directory was made for them
			return nil, &StartError{Reason: "could not write " + filepath.Base(f.Path) + " for the agent: the run has no directory for its files"}
		}
		if err := writeRunFile(f.Path, f.Content); err != nil {
			return nil, &StartError{Reason: "could not write " + filepath.Base(f.Path) + " for the agent: " + proc.ErrnoName(err)}
		}
	}
	cmd := exec.Command(g.Argv[0], g.Argv[1:]...)
	cmd.Dir, cmd.Env = w.dir, w.env
	a := &agent{start: time.Now()}
	var err error
	stdin, closeStdin := promptInput(prompt)
	a.child, err = proc.StartPiped(cmd, proc.Pipes{Stdin: stdin, Options: req.procOptions()})
	closeStdin()
	if err != nil {
		return nil, &StartError{Reason: fmt.Sprintf("could not start %s on this machine: %s", g.Harness, proc.ErrnoName(err))}
	}
	w.sweep.start()
	if req.PidFile != "" {
		if err := atomicfile.Write(req.PidFile, fmt.Appendf(nil, "%d\n", a.child.PID()), 0o644); err != nil {
			_ = a.child.Signal(syscall.SIGKILL)
			a.child.End()
			a.child.Stdout.Close()
			return nil, &StartError{Reason: "could not write the pid file: " + proc.ErrnoName(err)}
		}
	}
	return a, nil
}

// writeRunFile writes a file of the grant, 0600, into the run's own
// directory (0700, removed when the run ends): the agent starts after it
// is written, and it need not outlive a crash, so it is neither renamed
// into place nor synced (two fsyncs, ~0.7 ms here, as atomicfile does for
// a file that must survive one).
func writeRunFile(path, content string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	err = f.Chmod(0o600) // whatever the umask
	if err == nil {
		_, err = io.WriteString(f, content)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

// promptInput is the agent's stdin, the prompt: a pipe that already holds
// it, its write end closed, when it fits in one, so the agent has it, and
// its end, the moment it starts, without a goroutine of ours to copy it
// (which has first to be scheduled); else a reader os/exec copies from.
// The func closes our copy once the agent has started.
func promptInput(prompt string) (io.Reader, func()) {
	fallback := func() (io.Reader, func()) { return strings.NewReader(prompt), func() {} }
	var p [2]int
	// Both ends non-blocking for the writes here: a prompt the pipe
	// cannot hold is EAGAIN, not a wait for a reader that is not there.
	if unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK) != nil {
		return fallback()
	}
	if len(prompt) > pipeHolds {
		_, _ = unix.FcntlInt(uintptr(p[1]), unix.F_SETPIPE_SZ, len(prompt))
	}
	for b := []byte(prompt); len(b) > 0; {
		n, err := unix.Write(p[1], b)
		if err != nil {
			unix.Close(p[0])
			unix.Close(p[1])
			return fallback()
		}
		b = b[n:]
	}
	unix.Close(p[1])
	// The agent's end blocks, as a stdin does.
	if unix.SetNonblock(p[0], false) != nil {
		unix.Close(p[0])
		return fallback()
	}
	r := os.NewFile(uintptr(p[0]), "prompt")
	return r, func() { r.Close() }
}

// pipeHolds is what a new pipe holds on Linux; a larger one is asked for
// (up to /proc/sys/fs/pipe-max-size, 1 MiB by default).
const pipeHolds = 64 << 10

// outcome decides the answer, or the reason there is none, from how the
// agent exited and what it said.
//
// What is cut is redacted before the cut (s), so that a cut never leaves
// part of a secret: the answer at maxOutput, the ends of stdout and
// stderr (which have lost their beginnings) at 500 characters.
func (res *Result) outcome(harness string, exit proc.Exit, tr *grant.Transcript, maxOutput int, tailErr, tailOut *proc.Tail, s *secrets) {
	switch {
	case exit.OK():
		text, reason := tr.Answer()
		if reason != "" {
			res.Reason = reason
			return
		}
		text = s.apply(text)
		if n := len([]rune(text)); n > maxOutput {
			text = string([]rune(text)[:maxOutput]) + fmt.Sprintf("\n[cut off at %d characters]", maxOutput)
			res.Truncated = true
		}
		res.OK, res.Text = true, text
		return
	case exit.Signal != 0:
		res.Reason = fmt.Sprintf("%s was ended by %s", harness, exit.SignalName())
	default:
		why := tr.Failure()
		if why == "" {
			why = lastChars(s.tail(tailErr.String()), 500)
		}
		if why == "" {
			why = lastChars(s.tail(tailOut.String()), 500)
		}
		res.Reason = harness + " " + exit.String()
		if why != "" {
			res.Reason += ": " + why
		}
	}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func lastChars(s string, n int) string {
	s = strings.TrimSpace(s)
	r := []rune(s)
	if len(r) > n {
		return "…" + string(r[len(r)-n:])
	}
	return s
}

func withoutKey(env []string, key string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// redactor removes absolute paths from reasons.
type redactor struct{ pairs [][2]string }

func (r *redactor) add(path, name string) {
	if abs, err := filepath.Abs(path); err == nil && abs != "/" {
		r.pairs = append(r.pairs, [2]string{abs, name})
	}
}

func (r *redactor) apply(s string) string {
	// Longest first, so a scratch directory under the home is not half
	// replaced.
	for i := range r.pairs {
		for j := i + 1; j < len(r.pairs); j++ {
			if len(r.pairs[j][0]) > len(r.pairs[i][0]) {
				r.pairs[i], r.pairs[j] = r.pairs[j], r.pairs[i]
			}
		}
	}
	for _, p := range r.pairs {
		s = strings.ReplaceAll(s, p[0], p[1])
	}
	return s
}
