package agentrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/grant"
	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/hostclient"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/protocol"
	"golang.org/x/sys/unix"
)

// ACP is the harness of an agent that speaks the Agent Client Protocol,
// run through Request.Host (runagent --agent acp).
const ACP = "acp"

// HostAgent is an agent run through an agent-host backend in this process
// (lib/hostclient's InProcess, lib/host's rules) rather than a CLI whose
// stream is read: runagent --agent acp, and claude or codex when agentry
// must sit in their permission path or see their usage as it grows. The
// backend enforces the level; the run sends each attempt as a turn of one
// chat, reads its events, and keeps the caps, the idle timeout and the
// signals as for a CLI. The face supplies the backend, so that this
// package imports none.
type HostAgent struct {
	// Backend names the backend (acp, claude, codex), for the host.
	Backend string
	// Open makes the backend: the agent's command (the grant's Argv; a
	// CLI's program is its first word) at level in dir, its processes
	// run with env.
	Open func(argv []string, level int, dir string, env host.Env) (host.Backend, error)
	// Violations are the error codes of a turn the backend ended because
	// the agent ran what its level or its policy forbids without asking
	// (the tripwire).
	Violations []string
}

// ErrCannotResume is a host agent that could not take up the session a
// run was to continue.
var ErrCannotResume = errors.New("agentrun: the agent could not take up the session")

// chatID is the one chat of a run's host: its attempts are its turns.
const chatID = "runagent"

// hosted is a run's in-process host, made at its first attempt and closed
// (its backend's processes ended) when the run ends.
type hosted struct {
	client hostclient.Client
	stderr *proc.Tail
	turns  int
	tree   *agentTree

	mu  sync.Mutex
	log *eventLog // where the host's warnings go: the run's --events, once it has one
}

// notice passes the host's warnings (an agent that could not take up its
// session, say) to the run's event log.
func (h *hosted) notice(m protocol.Msg) {
	l, ok := m.(*protocol.Log)
	if !ok || l.Level != "warn" && l.Level != "error" {
		return
	}
	h.mu.Lock()
	log := h.log
	h.mu.Unlock()
	log.message(l)
}

// hostFor is the workspace's host, opened if it has none.
func (w *workspace) hostFor(ctx context.Context, req Request, g *grant.Grant) (*hosted, error) {
	if w.hosted != nil {
		return w.hosted, nil
	}
	tail := proc.NewTail(4096)
	tree := newAgentTree(req.Reaper)
	env := host.Env{Environ: w.env, Stderr: tail, Reaper: req.Reaper}
	var openErr error
	var backend host.Backend
	factory := func(string, json.RawMessage) (host.Backend, error) {
		b, err := req.Host.Open(g.Argv, g.Level, w.dir, env)
		openErr, backend = err, b
		return b, err
	}
	h := &hosted{stderr: tail, tree: tree}
	c := hostclient.InProcess(host.Options{Backend: orDefault(req.Host.Backend, ACP), Factory: factory, InterruptGrace: time.Second, DrainTimeout: time.Second,
		Policy: req.Policy}, h.notice)
	h.client = c
	if _, err := c.Hello(ctx, "runagent", nil); err != nil {
		c.Close()
		if openErr != nil {
			err = openErr
		}
		return nil, &StartError{Reason: "could not start " + g.Harness + ": " + err.Error(), Err: err}
	}
	w.hosted = h
	// The run's MCP server and svc's (--services), given to the chat as
	// agent-host's daemon gives them, before its first turn.
	servers := map[string]json.RawMessage{}
	if url := req.Options.ToolsURL; url != "" {
		servers[grant.MCPName], _ = json.Marshal(map[string]string{"type": "http", "url": url})
	}
	if url := req.Options.ServicesURL; url != "" && url != ServicesPending {
		servers[grant.ServicesName], _ = json.Marshal(map[string]string{"type": "http", "url": url})
	}
	if len(servers) > 0 {
		r, err := c.SetMCPServers(ctx, chatID, servers)
		if err == nil && r != nil && len(r.Errors) > 0 {
			for _, name := range slices.Sorted(maps.Keys(r.Errors)) {
				err = fmt.Errorf("%s: %s", name, r.Errors[name])
				break
			}
		}
		if err != nil {
			return nil, &StartError{Reason: g.Harness + " could not be given the run's MCP servers: " + err.Error(), Err: err}
		}
	}
	if id := req.Options.Resume; id != "" {
		// The session to continue, taken up before the first turn: the
		// backend's own request, which protocol v1 has none for.
		loader, ok := backend.(host.SessionLoader)
		if !ok {
			return nil, &StartError{Reason: g.Harness + " cannot take up a session", Err: ErrCannotResume}
		}
		if _, err := loader.LoadSession(ctx, chatID, id, w.dir); err != nil {
			return nil, &StartError{Reason: "could not take up session " + id + ": " + err.Error(), Err: ErrCannotResume}
		}
	}
	return w.hosted, nil
}

// close ends the host and every process of its backend: what the
// backend ends itself, and then whatever of the agent's tree survived it
// (a grandchild left in the agent's group when the agent exited).
func (h *hosted) close() {
	if h == nil {
		return
	}
	h.tree.look()
	h.client.Close()
	h.tree.end()
}

// agentTree is every process a host agent's backend started, as far as
// runagent has seen them: its children that were not there before the
// host, their descendants, and their process groups.
type agentTree struct {
	self   int
	reaper *proc.Reaper // runagent's, if it is a subreaper: an orphan it was handed is never the agent
	before map[int]bool // runagent's children before the host
	mu     sync.Mutex
	seen   map[int]proc.Info
	last   time.Time
	leader proc.Info // the agent: the oldest of runagent's new children when last looked
}

func newAgentTree(r *proc.Reaper) *agentTree {
	t := &agentTree{self: os.Getpid(), reaper: r, before: map[int]bool{}, seen: map[int]proc.Info{}}
	for _, pid := range proc.Children(t.self) {
		t.before[pid] = true
	}
	return t
}

// look records the tree as it is now.
func (t *agentTree) look() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.last = time.Now()
	var leader proc.Info
	defer func() {
		if leader.PID != 0 { // else the agent seen last, which has ended
			t.leader = leader
		}
	}()
	for _, c := range proc.Children(t.self) {
		if t.before[c] {
			continue
		}
		started := t.reaper == nil || t.reaper.Started(c)
		if in, err := proc.Stat(c); err == nil && started && (leader.PID == 0 || in.Start < leader.Start) {
			leader = in
		}
		for _, pid := range append([]int{c}, proc.Descendants(c)...) {
			if in, err := proc.Stat(pid); err == nil {
				t.seen[pid] = in
			}
		}
	}
}

// agent is the agent's pid as last seen, or 0.
func (t *agentTree) agent() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.leader.PID
}

// glance is look, at most every 100 ms once the agent has been seen:
// until then, every time. The host tells of a turn (its first event)
// before its backend has started the agent, and a run over within 100
// ms of that look would have ended with the agent never seen (its pid
// said as 0).
func (t *agentTree) glance() {
	t.mu.Lock()
	stale := t.leader.PID == 0 || time.Since(t.last) > 100*time.Millisecond
	t.mu.Unlock()
	if stale {
		t.look()
	}
}

// end kills what is left of the tree: each process seen that is still
// that process, and every member of the process groups they led or
// were in (runagent's own group aside), then waits for them to go.
func (t *agentTree) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	own := syscall.Getpgrp()
	groups := map[int]bool{}
	var left []proc.Info
	for _, in := range t.seen {
		if in.PGID != own {
			groups[in.PGID] = true
		}
		if proc.Alive(in) {
			left = append(left, in)
		}
	}
	if len(groups) > 0 {
		for _, in := range proc.All() {
			if groups[in.PGID] && in.State != 'Z' {
				left = append(left, in)
			}
		}
	}
	for _, in := range left {
		proc.Signal(in, syscall.SIGKILL)
	}
	proc.WaitGone(left, time.Now().Add(2*time.Second), nil)
}

// warm is a host agent's preflight: the agent started, initialized, and
// its session made, before the prompt is sent.
func warm(ctx context.Context, req Request, w *workspace) error {
	h, err := w.hostFor(ctx, req, req.Grant)
	if err == nil {
		err = h.client.WarmSession(ctx, chatID)
	}
	switch {
	case ctx.Err() != nil:
		return errStopped
	case err != nil:
		return &PreflightError{"starts", req.Grant.Harness + " did not start its session: " + err.Error()}
	}
	return nil
}

// ReasonQuestion is the reason of a run that ended at a question it had
// no answer to (Result.Questions).
const ReasonQuestion = "question"

// SchemaPrompt is what a prompt to an agent without a schema of its own
// (ACP) ends with, when the answer must conform to one.
const SchemaPrompt = "\n\nAnswer with one JSON value, and nothing else (no prose, no code fence), that conforms to this JSON Schema:\n%s\n"

// onceHosted is once for a HostAgent: one turn of the run's chat.
func onceHosted(ctx context.Context, req Request, w *workspace, g *grant.Grant, prompt string, events *eventLog, c caps) (*Result, error) {
	h, err := w.hostFor(ctx, req, g)
	if err != nil {
		return nil, err
	}
	h.turns++
	h.mu.Lock()
	h.log = events
	h.mu.Unlock()
	res := &Result{Agent: g.Harness, Level: g.Level}
	level := g.Level
	if c.noTools {
		level = 1 // a wrap-up changes nothing
	}
	if req.Schema != nil {
		prompt += fmt.Sprintf(SchemaPrompt, req.Schema.Compact)
	}
	start := time.Now()
	params := protocol.ChatRunParams{ChatID: chatID, Prompt: prompt, Level: level, Workspace: w.dir,
		Model: req.Options.Model, ReasoningEffort: req.Options.Effort, SystemPrompt: req.Options.AppendSystemPrompt,
		Questions: protocol.QuestionsAsk} // answered from req.Answers, or the run ends at one
	run, err := h.client.RunTurn(ctx, "turn-"+strconv.Itoa(h.turns), params)
	if err != nil {
		return nil, &StartError{Reason: "could not start " + g.Harness + ": " + err.Error(), Err: err}
	}
	w.sweep.start()
	st := &hostStream{caps: c, events: events, price: req.Price}
	res.waitHosted(ctx, req, w, h, run, st)
	if _, err := run.Wait(context.Background()); err != nil && st.failure == nil && res.StoppedBy == "" {
		// The host refused the turn (a request it could not serve): its
		// reply is the reason.
		var re *hostclient.RemoteError
		switch {
		case errors.As(err, &re) && (re.Code == protocol.CodeUnsupported || re.Code == protocol.CodeBadRequest):
			// Refused before anything ran (a backend that cannot enforce
			// the policy, say): the run did not start.
			return nil, &StartError{Reason: "could not start " + g.Harness + ": " + re.Message, Err: err}
		case errors.As(err, &re):
			info := re.ErrorInfo
			st.failure = &info
		default:
			st.failure = &protocol.ErrorInfo{Code: protocol.CodeBackendFailed, Message: err.Error()}
		}
	}
	if w.hosted != nil {
		h.tree.glance()
	}
	res.PID = h.tree.agent()
	res.DurationMs = proc.Ms(time.Since(start))
	usage := st.result()
	usage.DurationMs = res.DurationMs
	res.Usage = &usage
	res.work = st.work
	res.Denials = st.denials
	if w.hosted != nil {
		if s := h.session(); s != "" {
			res.Session = s
		}
	}
	res.hostedOutcome(req, st, h, w.secrets)
	res.tr = &grant.Transcript{Harness: g.Harness}
	return res, nil
}

// session is the chat's session as the backend has it now, or "": asked
// of a host about to be closed, for a moment at most.
func (h *hosted) session() string {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if info, err := h.client.SessionInfo(ctx, chatID); err == nil && info != nil {
		return info.SessionID
	}
	return ""
}

// waitHosted reads the turn's events to its end: by itself, by a signal
// to runagent (the host closed: the agent's whole tree ended), or by a cap
// or the idle timeout (the turn interrupted: session/cancel, then the
// host ends it after its grace).
func (res *Result) waitHosted(ctx context.Context, req Request, w *workspace, h *hosted, run *hostclient.Run, st *hostStream) {
	var idle <-chan time.Time
	var timer *time.Timer
	if req.IdleTimeout > 0 {
		timer = time.NewTimer(req.IdleTimeout)
		defer timer.Stop()
		idle = timer.C
	}
	evs, done, qs := run.Events(), ctx.Done(), run.Questions()
	interrupt := func() {
		idle = nil
		_, _ = h.client.Interrupt(context.Background(), chatID, run.ID)
	}
	for {
		select {
		case q, ok := <-qs:
			if !ok {
				qs = nil
				continue
			}
			st.events.message(q)
			if res.Questions != nil || res.Limit != NoLimit || res.StoppedBy != "" || res.Stalled {
				continue // being stopped: the interrupt tells the agent nobody answered
			}
			if answers, ok := w.answers.answer(q); ok {
				if h.client.AnswerQuestion(context.Background(), run.ID, q.RequestID, hostclient.QuestionAnswer{Answers: answers}) == nil {
					continue
				}
			}
			// No answer here: the run ends at the question, which the
			// interrupt resolves as not answered; nothing is chosen.
			res.Questions = q.Questions
			interrupt()
		case e, ok := <-evs:
			if !ok {
				return
			}
			if timer != nil && idle != nil {
				timer.Reset(req.IdleTimeout)
			}
			if done != nil && res.StoppedBy == "" {
				h.tree.glance()
			}
			if hit := st.event(e); hit != NoLimit && res.Limit == NoLimit && res.StoppedBy == "" && !res.Stalled && res.Questions == nil {
				res.Limit = hit
				interrupt()
			}
		case <-done:
			done = nil
			sig := "SIGTERM"
			if req.StopSignal != nil {
				sig = unix.SignalName(req.StopSignal())
			}
			res.StoppedBy = sig
			res.Session = h.session() // for --resume: asked before the host goes
			h.close()                 // the agent, its terminals and all they started
			w.hosted = nil
		case <-idle:
			if res.Questions == nil {
				res.Stalled = true
			}
			interrupt()
		}
	}
}

// hostedOutcome decides the turn's outcome from how it ended.
func (res *Result) hostedOutcome(req Request, st *hostStream, h *hosted, s *secrets) {
	st.mu.Lock()
	defer st.mu.Unlock()
	switch {
	case res.StoppedBy != "":
		res.Reason = "stopped by " + res.StoppedBy + "; " + res.Agent + " was ended with everything it started"
	case res.Stalled:
		res.Reason = fmt.Sprintf("stalled: no output for %v", req.IdleTimeout)
	case res.Questions != nil:
		res.Reason, res.code = ReasonQuestion, ReasonQuestion
		res.SessionID = res.Session
	case res.Limit != NoLimit:
		res.LimitName = req.Words.limit(res.Limit, 0)
		res.Text = res.cut(s.apply(st.answer()), req)
		res.Reason = fmt.Sprintf("stopped at %s: the answer is what %s had said so far", limitDesc(res.Limit, req), res.Agent)
	case st.failure != nil && slices.Contains(req.Host.Violations, st.failure.Code):
		res.Violation, res.code = true, st.failure.Code
		res.Reason = st.failure.Message
	case st.failure != nil:
		res.Reason = st.failure.Message
		if !strings.HasPrefix(res.Reason, res.Agent+":") {
			res.Reason = res.Agent + ": " + res.Reason
		}
		if st.failure.Retryable {
			res.fault = "a failed turn"
		}
	case !st.completed:
		res.Reason = res.Agent + " ended its turn without an answer"
		if last := strings.TrimSpace(h.stderr.String()); last != "" {
			res.Reason += ": " + lastChars(last, 500)
		}
	default:
		text := st.answer()
		if strings.TrimSpace(text) == "" {
			res.Reason = res.Agent + " ended its turn without saying anything"
			return
		}
		res.OK = true
		res.Text = res.cut(s.apply(text), req)
		if req.Schema != nil {
			res.conformText(req.Schema, text)
		}
	}
}

// cut is text, redacted, cut at the run's MaxOutput: redacted before the
// cut, so that no cut leaves part of a secret.
func (res *Result) cut(text string, req Request) string {
	if n := len([]rune(text)); req.MaxOutput > 0 && n > req.MaxOutput {
		res.Truncated = true
		return string([]rune(text)[:req.MaxOutput]) + fmt.Sprintf("\n[cut off at %d characters]", req.MaxOutput)
	}
	return text
}

// conformText is conform for an agent that answers a schema in its text:
// the one JSON value it said (a code fence around it is taken off).
func (res *Result) conformText(s *Schema, text string) {
	raw := strings.TrimSpace(text)
	if strings.HasPrefix(raw, "```") {
		raw = strings.TrimPrefix(raw, "```json")
		raw = strings.TrimPrefix(raw, "```")
		raw = strings.TrimSuffix(strings.TrimSpace(raw), "```")
	}
	if !json.Valid([]byte(raw)) {
		res.OK, res.Text = false, ""
		res.Reason = res.Agent + " ended without a structured answer (its answer is not one JSON value)"
		return
	}
	res.check(s, raw)
}

// hostStream is a turn's events as they come: passed on to --events,
// counted against the attempt's caps, and what decides its outcome.
type hostStream struct {
	caps   caps
	events *eventLog
	price  *Price // a backend that reports tokens and no cost (codex): its cost

	mu        sync.Mutex
	usage     Usage
	work      work
	deltas    strings.Builder
	text      string // the whole text, when the backend says it
	completed bool
	failure   *protocol.ErrorInfo
	capped    bool
	denials   []Denial
}

// event takes one event of the turn and names the cap it reaches, if any.
func (st *hostStream) event(e protocol.AgentEvent) (hit Limit) {
	switch e.Type {
	case protocol.EvRunStarted: // the run's own is said once, by the log
	case protocol.EvCompleted, protocol.EvError: // said by the log at the run's end
	default:
		st.events.emit(e)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	u, c := &st.usage, st.caps
	switch e.Type {
	case protocol.EvTextDelta:
		st.deltas.WriteString(e.Text)
	case protocol.EvText:
		st.text = e.Text
	case protocol.EvCompleted:
		st.completed = true
		if e.Text != "" {
			st.text = e.Text
		}
		st.takeUsage(e.Usage)
	case protocol.EvError:
		st.failure = e.Error
	case protocol.EvUsage:
		st.takeUsage(e.Usage)
	case protocol.EvDenied:
		if d := e.Denial; d != nil {
			st.denials = append(st.denials, Denial{Tool: e.Name, Rule: d.Rule, Match: d.Match, Verdict: d.Verdict})
			st.work.Denials = append(st.work.Denials, strings.TrimSpace(e.Name+" "+d.Match)+" ("+d.Rule+")")
		}
	}
	if st.capped {
		return NoLimit // being stopped: what follows is not counted
	}
	defer func() { st.capped = hit != NoLimit }()
	switch e.Type {
	case protocol.EvToolCall:
		u.ToolCalls++
		var call struct{ Kind string }
		if json.Unmarshal(e.Input, &call) == nil && call.Kind == "execute" { // ACP's kind of a command
			st.work.Commands = append(st.work.Commands, CommandRun{Command: e.Name})
		}
		if c.noTools {
			return LimitNoTools
		}
	case protocol.EvToolResult:
		u.done++
		u.turns = u.done
		if c.turns > 0 && u.done >= c.turns {
			return LimitTurns
		}
		if c.toolCalls > 0 && u.done >= c.toolCalls {
			return LimitToolCalls
		}
	case protocol.EvUsage, protocol.EvCompleted:
		if c.budget > 0 && u.CostUSD != nil && *u.CostUSD >= c.budget {
			return LimitBudget
		}
	}
	return NoLimit
}

// takeUsage takes the turn's usage as the backend reports it (the turn's
// own, not the session's); a figure it does not report stays absent.
func (st *hostStream) takeUsage(p *protocol.Usage) {
	if p == nil {
		return
	}
	u := &st.usage
	set := func(to **int64, v int64) {
		if v > 0 {
			*to = &v
		}
	}
	set(&u.InputTokens, p.InputTokens)
	set(&u.OutputTokens, p.OutputTokens)
	set(&u.CacheReadTokens, p.CacheReadTokens)
	set(&u.CacheWriteTokens, p.CacheWriteTokens)
	if p.CostUSD > 0 {
		c := p.CostUSD
		u.CostUSD = &c
	} else if st.price != nil && u.InputTokens != nil {
		c := st.price.Cost(*u.InputTokens, deref(u.OutputTokens), deref(u.CacheReadTokens))
		u.CostUSD = &c
	}
}

// answer is the turn's text: the whole, else its deltas.
func (st *hostStream) answer() string {
	if st.text != "" {
		return st.text
	}
	return st.deltas.String()
}

func (st *hostStream) result() Usage {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.usage
}
