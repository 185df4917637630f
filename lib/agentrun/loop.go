package agentrun

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/agenthome"
	"github.com/agentry/agentry/lib/grant"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/protocol"
	"golang.org/x/sys/unix"
)

// The prompts of a run's later attempts. None names a tool or a flag: the
// agent reads them as a user's next message in the same session.
const (
	// ContinuePrompt resumes a session that a transient failure cut.
	ContinuePrompt = "Your previous turn was cut off by a transient failure (%s). Continue the task from where you stopped."
	// WrapUpPrompt is the one turn a run gets at a limit, with --wrap-up.
	WrapUpPrompt = "Stop now: you have reached the limit of this run, and you have no tools left. Report, briefly: what is done, what remains to be done, and where (files, commands, branches) the work is."
	// UntilPrompt resumes a session whose answer the check did not pass.
	UntilPrompt = "The check `%s` did not pass (%s). The end of its output:\n\n%s\n\nFix what it reports, then answer again."
)

// DefaultAttempts is how many answers --until gets by default.
const DefaultAttempts = 3

// Attempt is one start of the agent within a run.
type Attempt struct {
	// Kind is why it started: "first", "retry" (after a transient
	// failure), "until" (the check failed), "wrap-up" (at a limit).
	Kind string `json:"kind"`
	// Ended is how: "answer", "failed", "transient" (retryable),
	// "limit", "stalled", "signal".
	Ended  string `json:"ended"`
	Reason string `json:"reason,omitempty"`
	// Fault is the transient failure: "HTTP 529", "a cut stream",
	// "SIGKILL".
	Fault string `json:"fault,omitempty"`
	// WaitedMs is the backoff before this attempt.
	WaitedMs float64 `json:"waitedMs,omitempty"`
	Session  string  `json:"session,omitempty"`
	ExitCode *int    `json:"exitCode"`
	Signal   string  `json:"signal,omitempty"`
	Usage    *Usage  `json:"usage,omitempty"`
	// Check is what --until's command made of this attempt's answer.
	Check *Check `json:"check,omitempty"`
}

func (a *Attempt) end(res *Result) {
	a.Session, a.ExitCode, a.Signal, a.Usage, a.Fault = res.Session, res.ExitCode, res.Signal, res.Usage, res.fault
	switch {
	case res.StoppedBy != "":
		a.Ended = "signal"
	case res.Limit != NoLimit:
		a.Ended = "limit"
	case res.Stalled:
		a.Ended = "stalled"
	case res.Questions != nil:
		a.Ended = "question"
	case res.OK:
		a.Ended = "answer"
	case res.fault != "":
		a.Ended = "transient"
	default:
		a.Ended = "failed"
	}
	if !res.OK {
		a.Reason = res.Reason
	}
}

// tally is what the run's attempts have used so far.
type tally struct {
	total Usage
	turns int // runagent's own count: claude's responses, codex's tool calls
	calls int // completed tool calls
	// costs and tokens are each session's running totals as last
	// reported: claude's total_cost_usd and codex's token counts are the
	// session's so far, not the attempt's.
	costs  map[string]float64
	tokens map[string][3]int64
}

// add takes an attempt's usage as reported and makes it the attempt's
// own (less what the session had reported before), priced when codex
// reports no cost; it returns the attempt's usage.
func (t *tally) add(harness, session string, u Usage, done, turns int, price *Price) *Usage {
	if t.costs == nil {
		t.costs, t.tokens = map[string]float64{}, map[string][3]int64{}
	}
	if harness == grant.Claude && u.CostUSD != nil && session != "" {
		own := max(*u.CostUSD-t.costs[session], 0)
		t.costs[session] = *u.CostUSD
		u.CostUSD = &own
	}
	if harness == grant.Codex && u.InputTokens != nil && session != "" {
		was := t.tokens[session]
		now := [3]int64{*u.InputTokens, *u.OutputTokens, *u.CacheReadTokens}
		t.tokens[session] = now
		in, out, cached := max(now[0]-was[0], 0), max(now[1]-was[1], 0), max(now[2]-was[2], 0)
		u.InputTokens, u.OutputTokens, u.CacheReadTokens = &in, &out, &cached
	}
	if price != nil && u.CostUSD == nil && u.InputTokens != nil {
		c := price.Cost(*u.InputTokens, *u.OutputTokens, deref(u.CacheReadTokens))
		u.CostUSD = &c
	}
	if harness == grant.Claude {
		u.Turns = &turns
	}
	t.turns += turns
	t.calls += done
	t.total.addUp(u)
	return &u
}

// totals is the harness whose usage is its session's running totals, as
// tally.add takes it: a CLI's stream; a host agent's backend reports each
// turn's own ("").
func (req Request) totals(harness string) string {
	if req.Host != nil {
		return ""
	}
	return harness
}

// before is what session had reported so far: claude's running cost,
// codex's running tokens.
func (t *tally) before(session string) (float64, [3]int64) {
	if session == "" {
		return 0, [3]int64{}
	}
	return t.costs[session], t.tokens[session]
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// run runs the agent to its end: an attempt, and the next while a
// transient failure is to be retried, the check fails, or a limit asks
// for a wrap-up.
func run(ctx context.Context, req Request) (*Result, error) {
	if req.MaxOutput <= 0 {
		req.MaxOutput = 1_000_000
	}
	if req.Attempts <= 0 {
		req.Attempts = DefaultAttempts
	}
	if req.RetryBase <= 0 {
		req.RetryBase = 2 * time.Second
	}
	w, err := prepare(req)
	if err != nil {
		return nil, err
	}
	defer w.cleanup()
	if req.Preflight {
		if err := preflight(ctx, req, w); errors.Is(err, errStopped) {
			res := &Result{Agent: req.Grant.Harness, Level: req.Grant.Level, Usage: &Usage{}, Reason: "nothing was sent to the model", secrets: w.secrets}
			(&loop{req: req}).stop(res, "during the preflight")
			return res, nil
		} else if err != nil {
			return nil, err
		}
	}
	// While the agent runs, not before: what runs killed outright left.
	// It begins once the agent has started, so as not to slow its start;
	// a run whose agent never starts sweeps as it ends.
	w.sweep = &sweep{runs: req.runs}
	defer w.sweep.wait()
	events := newEventLog(w.secrets.writer(req.Events), w.runID, w.secrets)
	events.emit(protocol.AgentEvent{Type: protocol.EvRunStarted})
	start := time.Now()
	l := &loop{req: req, w: w, events: events}
	res, err := l.run(ctx)
	if err != nil {
		return nil, err
	}
	res.DurationMs = proc.Ms(time.Since(start))
	u := l.tally.total
	u.DurationMs = res.DurationMs
	if req.Grant.Harness == grant.Claude {
		u.Turns = &l.tally.turns
	}
	res.Usage = &u
	if len(l.attempts) > 1 || req.Until != "" {
		res.Attempts = l.attempts
	}
	res.work = work{}
	for _, a := range l.works {
		res.work.Commands = append(res.work.Commands, a.Commands...)
		res.work.Denials = append(res.work.Denials, a.Denials...)
	}
	if res.Session == "" {
		res.Session = l.session()
	}
	res.Denials = l.denials
	if req.Answers != nil && req.Options.Resume == "" && res.Questions == nil {
		res.UnusedAnswers = w.answers.unused()
	}
	res.secrets = w.secrets
	res.redact(w)
	events.done(res)
	return res, nil
}

// loop is a run's attempts.
type loop struct {
	req      Request
	w        *workspace
	events   *eventLog
	tally    tally
	attempts []Attempt
	works    []work
	denials  []Denial
	retries  int // --retry's, so far
	answers  int // checked by --until, so far
}

// next is what the loop does after an attempt: end the run with res, or
// start the agent again with grant g and prompt.
type next struct {
	g       *grant.Grant
	prompt  string
	kind    string
	waited  time.Duration
	session string // the session it resumes, if any
}

func (l *loop) run(ctx context.Context) (*Result, error) {
	n := &next{g: l.req.Grant, prompt: l.req.Prompt, kind: "first"}
	var prev *Result
	for n != nil {
		if ctx.Err() != nil { // a signal came before, or as the last one ended
			when := "before the next attempt"
			if prev == nil {
				when = "before the agent started"
				prev = &Result{Agent: n.g.Harness, Level: n.g.Level, Usage: &Usage{}, Reason: "nothing was sent to the model", tr: &grant.Transcript{Harness: n.g.Harness}}
			}
			l.stop(prev, when)
			return prev, nil
		}
		c, stop := l.caps()
		if stop != NoLimit && prev != nil {
			return l.spent(ctx, prev, stop), nil
		}
		c.costBefore, c.tokensBefore = l.tally.before(n.session)
		res, err := once(ctx, l.req, l.w, n.g, n.prompt, l.events, c)
		if err != nil {
			if prev == nil {
				return nil, err
			}
			res = &Result{Agent: n.g.Harness, Level: n.g.Level, Reason: err.Error(), Usage: &Usage{}, tr: &grant.Transcript{Harness: n.g.Harness}}
		}
		l.record(res, n)
		prev = res
		n = l.after(ctx, res, n.kind)
	}
	return prev, nil
}

// record adds an attempt's figures to the run's.
func (l *loop) record(res *Result, n *next) {
	l.works = append(l.works, res.work)
	l.denials = append(l.denials, res.Denials...)
	a := Attempt{Kind: n.kind, WaitedMs: proc.Ms(n.waited)}
	a.end(res)
	a.Usage = l.tally.add(l.req.totals(n.g.Harness), res.Session, *res.Usage, res.Usage.done, res.Usage.turns, l.req.Price)
	l.attempts = append(l.attempts, a)
}

// spent ends a run whose caps were reached before its next attempt: the
// last attempt's words are what there is, or the wrap-up's.
func (l *loop) spent(ctx context.Context, res *Result, limit Limit) *Result {
	res.OK, res.fault, res.Limit = false, "", limit
	res.stopped(l.req, res.tr)
	if l.req.WrapUp && res.Session != "" {
		return l.wrapUp(ctx, res, res.Session)
	}
	return res
}

// after decides what follows an attempt that ended as res: nil to end the
// run with it (res then says how), else the next attempt.
func (l *loop) after(ctx context.Context, res *Result, kind string) *next {
	req := l.req
	session := orDefault(res.Session, l.session())
	switch {
	case res.StoppedBy != "":
		return nil
	case res.OK && req.Until != "":
		return l.check(ctx, res, session)
	case res.OK:
		return nil
	case (res.fault != "" || res.Stalled && req.RetryStalls) && l.retries < req.Retry:
		l.retries++
		n := &next{g: req.Grant, prompt: req.Prompt, kind: "retry", waited: backoff(req.RetryBase, l.retries, res.retry)}
		if !l.sleep(ctx, n.waited, res) {
			return nil
		}
		if session != "" { // else nothing to resume: start again
			n.g, n.prompt, n.session = l.resumed(session, false), fmt.Sprintf(ContinuePrompt, orDefault(res.fault, "a stall")), session
		}
		return n
	case (res.Limit != NoLimit || res.Stalled) && req.WrapUp && session != "" && kind != "wrap-up":
		l.wrapUp(ctx, res, session)
	}
	return nil
}

// check runs --until's command on an answer: nil when it passes, or when
// the attempts are spent (res then says so); else the attempt that tries
// again with its output.
func (l *loop) check(ctx context.Context, res *Result, session string) *next {
	req := l.req
	if ctx.Err() != nil { // a signal came as the agent answered
		l.stop(res, "before the check")
		return nil
	}
	l.answers++
	check := runCheck(ctx, req.Until, orDefault(req.WorkDir, l.w.dir), req.Env, l.signal, req.procOptions())
	check.Tail = l.w.secrets.tail(check.Tail) // its beginning may be gone
	l.attempts[len(l.attempts)-1].Check = check
	switch {
	case check.OK:
		return nil
	case ctx.Err() != nil:
		l.stop(res, "while the check ran")
		return nil
	case l.answers >= req.Attempts || session == "":
		res.OK = false
		res.Reason = fmt.Sprintf("the check still fails after %d %s: %s", l.answers, plural(l.answers, "answer"), check.Status)
		return nil
	}
	prompt := fmt.Sprintf(UntilPrompt, req.Until, check.Status, l.w.secrets.apply(check.Tail))
	return &next{g: l.resumed(session, false), prompt: prompt, kind: "until", session: session}
}

// session is the last session an attempt reported.
func (l *loop) session() string {
	for i := len(l.attempts) - 1; i >= 0; i-- {
		if l.attempts[i].Session != "" {
			return l.attempts[i].Session
		}
	}
	return ""
}

// caps are the next attempt's limits: what is left of the run's; stop
// is a limit already reached.
func (l *loop) caps() (c caps, stop Limit) {
	req := l.req
	if req.MaxTurns > 0 {
		if c.turns = req.MaxTurns - l.tally.turns; c.turns <= 0 {
			return c, LimitTurns
		}
	}
	if req.MaxToolCalls > 0 {
		if c.toolCalls = req.MaxToolCalls - l.tally.calls; c.toolCalls <= 0 {
			return c, LimitToolCalls
		}
	}
	if req.MaxBudgetUSD > 0 && l.tally.total.CostUSD != nil && *l.tally.total.CostUSD >= req.MaxBudgetUSD {
		return c, LimitBudget
	}
	if req.MaxBudgetUSD > 0 && req.Host != nil {
		spent := 0.0
		if l.tally.total.CostUSD != nil {
			spent = *l.tally.total.CostUSD
		}
		c.budget = req.MaxBudgetUSD - spent
	}
	return c, NoLimit
}

// resumed is the grant of a later attempt: the run's, resuming session,
// with what is left of its turns and budget; wrapUp takes its tools away
// and gives it one turn and its own budget.
func (l *loop) resumed(session string, wrapUp bool) *grant.Grant {
	g, err := grant.For(ResumeOptions(l.req.Options, session, l.tally.turns, l.tally.total.CostUSD, wrapUp))
	if err != nil {
		return l.req.Grant // cannot be: the options made the first
	}
	return g
}

// ResumeOptions are the options of a later attempt of a run made with o:
// resuming session, with what is left of the turns (used so far) and of
// claude's budget (spent so far, when known); wrapUp takes every tool
// away and gives it one turn (two with a schema, whose answer is a tool
// call claude may be asked again for) and no budget.
func ResumeOptions(o grant.Options, session string, used int, spent *float64, wrapUp bool) grant.Options {
	o.SessionID, o.Resume = "", session
	if o.MaxTurns > 0 {
		o.MaxTurns = max(o.MaxTurns-used, 1)
	}
	if o.MaxBudgetUSD > 0 && spent != nil && o.Harness == grant.Claude {
		o.MaxBudgetUSD = max(o.MaxBudgetUSD-*spent, 0.000001)
	}
	if wrapUp {
		o.NoTools, o.MaxTurns = true, 1
		if o.Schema != "" {
			o.MaxTurns = 2
		}
		// No budget: claude checks one only after a turn, and a turn
		// over it ends without the answer it paid for. One turn without
		// tools is what bounds its cost.
		o.MaxBudgetUSD = 0
	}
	return o
}

// wrapUp resumes a session stopped at a limit for one turn without tools,
// and makes its answer the run's, partial (res, changed).
func (l *loop) wrapUp(ctx context.Context, res *Result, session string) *Result {
	req := l.req
	if ctx.Err() != nil { // a signal came while the limit stopped the agent
		l.stop(res, "before the wrap-up")
		return res
	}
	g := l.resumed(session, true)
	c := caps{noTools: true, turns: 1}
	c.costBefore, c.tokensBefore = l.tally.before(session)
	if req.Schema != nil {
		c.turns = 2
	}
	w, err := once(ctx, req, l.w, g, WrapUpPrompt, l.events, c)
	a := Attempt{Kind: "wrap-up"}
	if err != nil {
		a.Ended, a.Reason = "failed", err.Error()
		l.attempts = append(l.attempts, a)
		return res
	}
	l.works = append(l.works, w.work)
	a.end(w)
	a.Usage = l.tally.add(req.totals(g.Harness), w.Session, *w.Usage, w.Usage.done, w.Usage.turns, req.Price)
	l.attempts = append(l.attempts, a)
	switch {
	case w.StoppedBy != "":
		res.StoppedBy, res.Reason = w.StoppedBy, w.Reason
	case w.OK:
		res.Text, res.Partial, res.Truncated = w.Text, true, w.Truncated
		said, report := "the answer is what "+res.Agent+" had said so far", "the answer is "+res.Agent+"'s report of what is done and what remains"
		if strings.Contains(res.Reason, said) {
			res.Reason = strings.Replace(res.Reason, said, report, 1)
		} else {
			res.Reason += "; " + report
		}
	default:
		res.Reason += " (the wrap-up failed: " + w.Reason + ")"
	}
	return res
}

// backoff is the wait before the n-th retry: base doubled each time, at
// most a minute, with full jitter over its upper half; a wait the API
// asked for, up to five minutes, when it is longer.
func backoff(base time.Duration, n int, asked time.Duration) time.Duration {
	d := base
	for i := 1; i < n && d < time.Minute; i++ { // no shift past 63 bits
		d *= 2
	}
	d = min(d, time.Minute)
	d = d/2 + rand.N(d/2+1)
	return max(d, min(asked, 5*time.Minute))
}

// sleep waits d, or until ctx is cancelled (then res is stopped by the
// signal, and false).
func (l *loop) sleep(ctx context.Context, d time.Duration, res *Result) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		l.stop(res, "while waiting to retry")
		return false
	}
}

// stop makes res a run stopped by the signal that cancelled the run's
// context between attempts.
func (l *loop) stop(res *Result, when string) {
	sig := unix.SignalName(l.signal())
	res.StoppedBy, res.OK = sig, false
	res.Reason = "stopped by " + sig + " " + when + "; " + orDefault(res.Reason, res.Agent+" had answered")
}

// signal is the signal that cancelled the run's context: the one to
// forward.
func (l *loop) signal() syscall.Signal {
	if l.req.StopSignal != nil {
		return l.req.StopSignal()
	}
	return syscall.SIGTERM
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// sweep removes, once, on a goroutine, what runs killed outright left
// where the run's own directories are (agenthome.Runs.Sweep).
type sweep struct {
	runs agenthome.Runs
	once sync.Once
	done chan struct{}
}

// start begins the sweep, if it has not begun; a nil sweep does nothing.
func (s *sweep) start() {
	if s == nil {
		return
	}
	s.once.Do(func() {
		s.done = make(chan struct{})
		go func() {
			defer close(s.done)
			s.runs.Sweep(scratchPrefix, filesPrefix, agenthome.CodexPrefix)
		}()
	})
}

// wait begins the sweep, if it has not begun, and waits for its end.
func (s *sweep) wait() {
	s.start()
	<-s.done
}
