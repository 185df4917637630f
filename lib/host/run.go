package host

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/agentry/agentry/lib/policy"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/protocol"
	"github.com/tidwall/gjson"
)

// run is one run in flight.
type run struct {
	h      *Host
	id     string // run id
	reqID  string // the run_turn or one_shot it answers
	chatID string // "" for a one-shot

	interrupt     chan struct{}
	interruptOnce sync.Once
	cancel        context.CancelFunc
	finished      chan struct{} // closed after run_done

	mu      sync.Mutex
	seq     int
	ended   bool // the terminal event was sent
	done    bool // run_done was sent
	reason  string
	usage   *protocol.Usage
	started time.Time
	asks    requests[Answer, struct{}] // permission requests pending
	// questions are the question requests pending.
	questions requests[QuestionAnswer, asked]
	// asksEnded: the agent asked past the cap; it may ask no more.
	asksEnded bool
}

func backendName(config json.RawMessage) string {
	if len(config) == 0 {
		return ""
	}
	return gjson.GetBytes(config, "backend").String()
}

// startRun checks a run may start, then runs it; its reply is run_done,
// or an error when it could not start.
func (h *Host) startRun(reqID, runID, chatID string, t *Turn, policies []checker) {
	h.mu.Lock()
	var refuse *protocol.Error
	switch {
	case h.closing:
		refuse = errReply(reqID, protocol.CodeShuttingDown, "the host is shutting down", false)
	case h.runs[runID] != nil:
		refuse = errReply(reqID, protocol.CodeDuplicateID, "run "+runID+" is already in flight", false)
	case chatID != "" && h.busy[chatID] != nil:
		refuse = errReply(reqID, protocol.CodeBusy, fmt.Sprintf("chat %s already has run %s in flight", chatID, h.busy[chatID].id), true)
	case len(h.runs) >= h.opts.MaxConcurrentRuns:
		refuse = errReply(reqID, protocol.CodeBusy, fmt.Sprintf("%d runs are in flight, the most this host takes", len(h.runs)), true)
	}
	if refuse != nil {
		h.mu.Unlock()
		h.reply(reqID, refuse)
		return
	}
	ctx, cancel := context.WithCancel(h.ctx)
	r := &run{h: h, id: runID, reqID: reqID, chatID: chatID, interrupt: make(chan struct{}),
		cancel: cancel, finished: make(chan struct{}), started: time.Now()}
	h.runs[runID] = r
	if chatID != "" {
		h.busy[chatID] = r
	}
	h.runsDone.Add(1)
	b := h.backend
	h.mu.Unlock()

	t.Emit = r.emit
	t.Interrupted = r.interrupt
	if t.Params.Permissions == protocol.PermissionsAsk {
		timeout := DefaultPermissionTimeout
		if ms := t.Params.PermissionTimeoutMs; ms > 0 {
			timeout = time.Duration(ms) * time.Millisecond
		}
		t.Ask = func(q Ask) Answer { return r.ask(ctx, timeout, q) }
	}
	if len(policies) > 0 {
		forward, root := t.Ask, workspaceRoot(t.Params.Workspace)
		t.AskAll = true
		t.Ask = func(q Ask) Answer { return r.policyAsk(policies, root, forward, q) }
		t.PolicyDenies = func(c policy.Call) (string, bool) {
			if d := strictest(policies, c, root); d.Verdict == policy.Deny {
				return fmt.Sprintf("rule %s matched `%s`", d.Rule, d.Match), true
			}
			return "", false
		}
	}
	if t.Params.Questions == protocol.QuestionsAsk {
		timeout := DefaultPermissionTimeout
		if ms := t.Params.PermissionTimeoutMs; ms > 0 {
			timeout = time.Duration(ms) * time.Millisecond
		}
		t.Question = func(q QuestionAsk) QuestionAnswer { return r.question(ctx, timeout, q) }
	}
	t.Log = func(level, msg string) { h.Log(level, "run "+runID, msg) }
	go r.exec(ctx, b, t)
}

// exec runs the turn on the backend and ends the run however it went.
func (r *run) exec(ctx context.Context, b Backend, t *Turn) {
	var err error
	var usage *protocol.Usage
	func() {
		defer func() {
			if p := recover(); p != nil {
				r.h.Log("error", "run "+r.id, fmt.Sprintf("backend panicked: %v\n%s", p, debug.Stack()))
				err = Failed(protocol.CodeBackendFailed, fmt.Sprintf("backend panicked: %v", p), false)
			}
		}()
		r.emit(protocol.AgentEvent{Type: protocol.EvRunStarted, Model: t.Params.Model})
		if os, ok := b.(OneShotter); ok && t.OneShot != nil {
			usage, err = os.OneShot(ctx, t)
		} else {
			err = b.RunTurn(ctx, t)
		}
	}()
	if usage != nil {
		r.mu.Lock()
		r.usage = usage
		r.mu.Unlock()
	}
	select {
	case <-r.interrupt:
		if err != nil && ctx.Err() != nil {
			err = ErrInterrupted // killed because it was interrupted
		}
	default:
	}
	if err != nil && r.h.killed.Load() {
		err = ErrInterrupted // killed with the host (a second signal)
	}
	r.finish(err)
	r.cancel()
}

// emit sends one event of the run, keeping the rules: run_started first,
// one terminal event, nothing after it.
func (r *run) emit(ev protocol.AgentEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return
	}
	if r.seq == 0 && ev.Type != protocol.EvRunStarted {
		r.seq++
		r.h.send(&protocol.Event{RunID: r.id, Seq: r.seq, Event: protocol.AgentEvent{Type: protocol.EvRunStarted}})
	}
	if r.seq > 0 && ev.Type == protocol.EvRunStarted {
		return // the host sent it already
	}
	r.seq++
	if ev.Usage != nil && (ev.Type == protocol.EvUsage || ev.Type == protocol.EvCompleted) {
		u := *ev.Usage
		r.usage = &u
	}
	if ev.Terminal() {
		r.ended = true
		r.reason = protocol.StopCompleted
		if ev.Type == protocol.EvError {
			r.reason = protocol.StopError
			if ev.Error == nil {
				ev.Error = &protocol.ErrorInfo{Code: protocol.CodeBackendFailed, Message: "the backend reported an error"}
			}
			if ev.Error.Code == protocol.CodeInterrupted {
				r.reason = protocol.StopInterrupted
			}
		}
	}
	r.h.send(&protocol.Event{RunID: r.id, Seq: r.seq, Event: ev})
}

// finish ends the run: the terminal event if the backend sent none, then
// run_done. Only the first call does anything.
func (r *run) finish(err error) {
	r.mu.Lock()
	if r.done {
		r.mu.Unlock()
		return
	}
	ended := r.ended
	r.mu.Unlock()
	if !ended {
		if err == nil {
			r.emit(protocol.AgentEvent{Type: protocol.EvCompleted})
		} else {
			r.emit(protocol.AgentEvent{Type: protocol.EvError, Error: errorInfo(err, protocol.CodeBackendFailed)})
		}
	}
	r.mu.Lock()
	if r.done {
		r.mu.Unlock()
		return
	}
	r.done = true
	done := &protocol.RunDone{ID: r.reqID, RunID: r.id, StopReason: r.reason, Events: r.seq, Usage: r.usage}
	elapsed := time.Since(r.started)
	r.mu.Unlock()
	// No request can be asked now (done is set); one still pending is
	// denied before run_done.
	r.resolveAll()

	h := r.h
	h.mu.Lock()
	delete(h.runs, r.id)
	if r.chatID != "" && h.busy[r.chatID] == r {
		delete(h.busy, r.chatID)
	}
	h.mu.Unlock()
	h.send(&protocol.Metric{Name: "run.duration_ms", Value: proc.Ms(elapsed)})
	h.send(&protocol.Metric{Name: "run." + done.StopReason, Value: 1})
	h.reply(r.reqID, done)
	close(r.finished)
	h.runsDone.Done()
}

// stop is the interrupt ladder for one run: the soft stop now, and when
// the run has not ended after the grace, the host ends it and cancels the
// backend's context so it kills what it started.
func (r *run) stop(grace time.Duration) {
	r.interruptOnce.Do(func() {
		close(r.interrupt)
		go func() {
			t := time.NewTimer(grace)
			defer t.Stop()
			select {
			case <-r.finished:
			case <-t.C:
				r.h.Log("warn", "run "+r.id, fmt.Sprintf("did not stop within %v of its interrupt; ending it", grace))
				r.cancel()
				r.finish(ErrInterrupted)
			}
		}()
	})
}

// interrupt stops the chat's run (only runID's, when given) and reports
// whether there was one.
func (h *Host) interrupt(chatID, runID string) bool {
	h.mu.Lock()
	var r *run
	switch {
	case runID != "":
		r = h.runs[runID]
		if r != nil && chatID != "" && r.chatID != chatID {
			r = nil
		}
	default:
		r = h.busy[chatID]
	}
	h.mu.Unlock()
	if r == nil {
		return false
	}
	r.stop(h.opts.InterruptGrace)
	return true
}

// Drain stops the host: no new runs; in-flight runs may finish within the
// drain timeout and are then interrupted; then bye is the last message,
// answering the shutdown request id when there is one. It returns once bye
// is sent. Only the first call drains; later ones wait for its bye.
func (h *Host) Drain(id string) {
	if h.beginDrain(id) {
		h.drain(h.opts.DrainTimeout)
	}
	<-h.bye
}

// InputEnded tells the host that the daemon's input has ended: nobody
// can answer a request any more. Every permission request and question
// pending is resolved at once (input_ended: denied, no answer), and so is
// every one a run makes after, each still sent first so that the output
// says what the agent asked; runs in flight go on (a drain follows).
func (h *Host) InputEnded() {
	h.answering.Wait() // the answers read before the end are taken first
	h.inputEnded.Store(true)
	h.mu.Lock()
	runs := slices.Collect(maps.Values(h.runs))
	h.mu.Unlock()
	for _, r := range runs {
		r.resolveAllBy(protocol.ResolvedByInputEnd)
	}
}

// Abort stops the host at once: Drain with no time for runs in flight,
// which are interrupted, then the backend closed. It returns once bye is
// sent.
func (h *Host) Abort() {
	if h.beginDrain("") {
		h.drain(0)
	}
	<-h.bye
}

// beginDrain marks the host closing, and reports whether this call was the
// first, which must then drain. The first caller's id answers bye; a
// shutdown that comes second is answered by the same bye's moment with its
// own bye.
func (h *Host) beginDrain(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing {
		if id != "" {
			h.lateByes = append(h.lateByes, id)
		}
		return false
	}
	h.closing = true
	h.byeID = id
	return true
}

func (h *Host) drain(timeout time.Duration) {
	all := make(chan struct{})
	go func() { h.runsDone.Wait(); h.requests.Wait(); close(all) }()
	t := time.NewTimer(timeout)
	select {
	case <-all:
	case <-t.C:
		h.mu.Lock()
		var left []*run
		for _, r := range h.runs {
			left = append(left, r)
		}
		h.mu.Unlock()
		if len(left) > 0 {
			h.Log("warn", "host", fmt.Sprintf("%s still in flight after the %v drain timeout; interrupting them", plural(len(left), "run", "runs"), timeout))
		}
		for _, r := range left {
			r.stop(h.opts.InterruptGrace)
		}
		<-all
	}
	t.Stop()
	h.mu.Lock()
	b := h.backend
	h.mu.Unlock()
	if c, ok := b.(Closer); ok {
		if err := c.Close(); err != nil {
			h.Log("warn", "host", "closing the backend: "+err.Error())
		}
	}
	h.mu.Lock()
	ids := append([]string{h.byeID}, h.lateByes...)
	h.mu.Unlock()
	for _, id := range ids[1:] {
		h.send(&protocol.Bye{ID: id}) // a second shutdown gets its own answer
	}
	h.send(&protocol.Bye{ID: ids[0]})
	h.mu.Lock()
	h.byeSent = true
	for _, id := range ids {
		delete(h.inflight, id)
	}
	h.mu.Unlock()
	h.cancel()
	close(h.bye)
}

// plural is n and the word for one or for many.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
