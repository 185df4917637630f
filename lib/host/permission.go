package host

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/agentry/agentry/lib/policy"
	"github.com/agentry/agentry/lib/protocol"
)

// DefaultPermissionTimeout is how long a permission request waits for the
// daemon when the run does not say (params.permissionTimeoutMs).
const DefaultPermissionTimeout = 60 * time.Second

// DefaultMaxPendingPermissions is how many permission requests a run may
// have pending at once when Options.MaxPendingPermissions does not say.
// A CLI asks one at a time per tool call it is about to make; one asking
// past this is runaway or hostile (each request held costs memory
// until it is answered), and its run is ended.
const DefaultMaxPendingPermissions = 64

// PermissionAsker is a backend that can put the agent's tool calls to the
// daemon (Turn.Ask); a run with params.permissions "ask" on a backend
// without it is refused as unsupported.
type PermissionAsker interface {
	AsksPermissions() bool
}

// Ask is one tool call the agent wants and the grant does not allow.
type Ask struct {
	Tool        string
	Input       json.RawMessage
	Description string
	// ToolCallID is the id of the tool_call event of this call, when the
	// backend knows it.
	ToolCallID string
	// Choices are the decisions the backend can carry out, of allow,
	// allow_session and deny.
	Choices []string
	// Call is the call in a policy's terms: the commands it runs, the
	// paths it reads and writes, the hosts it fetches, as far as the
	// backend can tell.
	Call policy.Call
	// Granted says the level allows the call outright: it is asked only
	// because a policy applies (Turn.AskAll).
	Granted bool
}

// Answer is how a permission request was resolved; Decision is never
// empty. Input and Message are the daemon's, when it gave them.
type Answer struct {
	Decision string
	Input    json.RawMessage
	Message  string
	By       string
}

// Allowed reports whether the call may go ahead.
func (a Answer) Allowed() bool {
	return a.Decision == protocol.DecisionAllow || a.Decision == protocol.DecisionAllowSession
}

// pendingAsk is a permission request awaiting its resolution; answer gets
// exactly one value, from whichever resolve came first.
type pendingAsk struct {
	answer chan Answer
}

// ask sends a permission request of the run and waits for it to be
// resolved: by the daemon, by its deadline, by an interrupt of the run, or
// by the host stopping. Whatever resolves it, permission_resolved says so
// once, and the answer is final.
func (r *run) ask(ctx context.Context, timeout time.Duration, q Ask) Answer {
	reqID := r.h.newAskID()
	p := &pendingAsk{answer: make(chan Answer, 1)}
	r.mu.Lock()
	if r.done || r.asksEnded {
		r.mu.Unlock()
		return Answer{Decision: protocol.DecisionDeny, By: protocol.ResolvedByRunEnded}
	}
	if max := r.h.opts.MaxPendingPermissions; len(r.asks) >= max {
		r.asksEnded = true
		r.mu.Unlock()
		r.tooMany(max, "permission requests")
		return Answer{Decision: protocol.DecisionDeny, By: protocol.ResolvedByRunEnded}
	}
	if r.asks == nil {
		r.asks = map[string]*pendingAsk{}
	}
	r.asks[reqID] = p
	input := q.Input
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	r.h.send(&protocol.PermissionRequest{RunID: r.id, RequestID: reqID, Tool: q.Tool, Input: input,
		Description: q.Description, ToolCallID: q.ToolCallID, Choices: q.Choices, TimeoutMs: timeout.Milliseconds()})
	r.mu.Unlock()

	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case a := <-p.answer:
		return a
	case <-t.C:
		r.h.Log("warn", "run "+r.id, fmt.Sprintf("permission request %s (%s) had no answer within %v; denied", reqID, q.Tool, timeout))
		r.resolve(reqID, Answer{Decision: protocol.DecisionDeny, By: protocol.ResolvedByTimeout,
			Message: fmt.Sprintf("No answer to the permission request within %v: denied.", timeout)})
	case <-r.interrupt:
		r.resolve(reqID, Answer{Decision: protocol.DecisionDeny, By: protocol.ResolvedByInterrupt, Message: "The run was interrupted."})
	case <-ctx.Done():
		r.resolve(reqID, Answer{Decision: protocol.DecisionDeny, By: protocol.ResolvedByShutdown, Message: "The host is stopping."})
	}
	return <-p.answer
}

// tooMany ends a run whose agent asked past the cap (what: permission
// requests, question requests): its error event, every request pending
// resolved, then the backend's context cancelled, so that it kills what
// it started; run_done follows as for any run.
func (r *run) tooMany(max int, what string) {
	msg := fmt.Sprintf("the agent had %d %s pending at once, the most a run may have: the run was ended", max, what)
	r.h.Log("warn", "run "+r.id, msg)
	r.emit(protocol.AgentEvent{Type: protocol.EvError, Error: &protocol.ErrorInfo{Code: protocol.CodeBackendFailed, Message: msg}})
	r.resolveAll()
	r.cancel()
}

// resolve ends the pending request reqID with a, and reports whether it
// was pending: only the first resolve of a request does anything.
func (r *run) resolve(reqID string, a Answer) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.asks[reqID]
	if p == nil {
		return false
	}
	delete(r.asks, reqID)
	r.h.send(&protocol.PermissionResolved{RunID: r.id, RequestID: reqID, Decision: a.Decision, By: a.By})
	p.answer <- a
	return true
}

// resolveAll denies every permission request of the run still pending,
// and gives every question request pending no answer; the run has ended.
func (r *run) resolveAll() {
	r.mu.Lock()
	ids := slices.Collect(maps.Keys(r.asks))
	qids := slices.Collect(maps.Keys(r.questions))
	r.mu.Unlock()
	for _, id := range ids {
		r.resolve(id, Answer{Decision: protocol.DecisionDeny, By: protocol.ResolvedByRunEnded})
	}
	for _, id := range qids {
		r.resolveQuestion(id, noAnswer(protocol.ResolvedByRunEnded))
	}
}

func (h *Host) newAskID() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.asks++
	return "p" + strconv.FormatInt(h.asks, 10)
}

// answerPermission serves answer_permission: an answer to a request that
// is not pending (an unknown run or request, or one already resolved) is
// an unknown_request error, and changes nothing.
func (h *Host) answerPermission(m *protocol.AnswerPermission) {
	switch m.Decision {
	case protocol.DecisionAllow, protocol.DecisionAllowSession, protocol.DecisionDeny:
	default:
		h.reply(m.ID, errReply(m.ID, protocol.CodeBadRequest,
			fmt.Sprintf("decision %q: it is allow, allow_session or deny", m.Decision), false))
		return
	}
	if len(m.Input) > 0 && (m.Decision == protocol.DecisionDeny || !json.Valid(m.Input) || m.Input[0] != '{') {
		h.reply(m.ID, errReply(m.ID, protocol.CodeBadRequest, "input replaces the tool's input: an object, with allow", false))
		return
	}
	h.mu.Lock()
	r := h.runs[m.RunID]
	h.mu.Unlock()
	if r == nil {
		h.reply(m.ID, errReply(m.ID, protocol.CodeUnknownRequest, "no run "+m.RunID+" is in flight", false))
		return
	}
	if !r.resolve(m.RequestID, Answer{Decision: m.Decision, Input: m.Input, Message: m.Message, By: protocol.ResolvedByDaemon}) {
		h.reply(m.ID, errReply(m.ID, protocol.CodeUnknownRequest,
			fmt.Sprintf("run %s has no pending permission request %s", m.RunID, m.RequestID), false))
		return
	}
	h.reply(m.ID, &protocol.OK{ID: m.ID})
}

// checkPermissions refuses a run whose permissions the backend cannot
// honour; it returns nil for one that may start.
func checkPermissions(id string, p protocol.ChatRunParams, b Backend) *protocol.Error {
	switch p.Permissions {
	case "", protocol.PermissionsGrant:
		return nil
	case protocol.PermissionsAsk:
	default:
		return errReply(id, protocol.CodeBadRequest, fmt.Sprintf("permissions %q: it is grant or ask", p.Permissions), false)
	}
	if p.PermissionTimeoutMs < 0 {
		return errReply(id, protocol.CodeBadRequest, "permissionTimeoutMs cannot be negative", false)
	}
	if pa, ok := b.(PermissionAsker); !ok || !pa.AsksPermissions() {
		return errReply(id, protocol.CodeUnsupported, fmt.Sprintf("the %s backend cannot ask for permissions", b.Name()), false)
	}
	return nil
}
