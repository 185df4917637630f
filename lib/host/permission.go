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
	// Extra are fields of the backend's own, sent with the request as
	// they are (an ACP agent's tool call, for a face that is ACP).
	Extra protocol.Extra
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

// permissionKind is the permission request's kind: an answer nobody
// gave is a deny.
func permissionKind() requestKind[Answer] {
	return requestKind[Answer]{
		what: "permission requests",
		resolved: func(runID, reqID string, a Answer) protocol.Msg {
			return &protocol.PermissionResolved{RunID: runID, RequestID: reqID, Decision: a.Decision, By: a.By}
		},
		nobody: func(by string) Answer {
			a := Answer{Decision: protocol.DecisionDeny, By: by}
			switch by {
			case protocol.ResolvedByInterrupt:
				a.Message = "The run was interrupted."
			case protocol.ResolvedByShutdown:
				a.Message = "The host is stopping."
			case protocol.ResolvedByInputEnd:
				a.Message = "Nobody can answer: the host's input has ended."
			}
			return a
		},
	}
}

// ask sends a permission request of the run and waits for it to be
// resolved (await): one the daemon does not answer in time is denied.
func (r *run) ask(ctx context.Context, timeout time.Duration, q Ask) Answer {
	reqID := r.h.newID("p", &r.h.asks)
	input := q.Input
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	req := &protocol.PermissionRequest{RunID: r.id, RequestID: reqID, Tool: q.Tool, Input: input,
		Description: q.Description, ToolCallID: q.ToolCallID, Choices: q.Choices, TimeoutMs: timeout.Milliseconds(), Extra: q.Extra}
	return await(ctx, r, &r.asks, permissionKind(), reqID, struct{}{}, req, timeout, func() Answer {
		r.h.Log("warn", "run "+r.id, fmt.Sprintf("permission request %s (%s) had no answer within %v; denied", reqID, q.Tool, timeout))
		return Answer{Decision: protocol.DecisionDeny, By: protocol.ResolvedByTimeout,
			Message: fmt.Sprintf("No answer to the permission request within %v: denied.", timeout)}
	})
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

// resolve ends the pending permission request reqID with a, and reports
// whether it was pending.
func (r *run) resolve(reqID string, a Answer) bool {
	return settle(r, &r.asks, permissionKind(), reqID, a)
}

// resolveAll denies every permission request of the run still pending,
// and gives every question request pending no answer; the run has ended.
func (r *run) resolveAll() { r.resolveAllBy(protocol.ResolvedByRunEnded) }

// resolveAllBy resolves every request of the run still pending as nobody
// answered, resolved by by.
func (r *run) resolveAllBy(by string) {
	r.mu.Lock()
	ids := slices.Collect(maps.Keys(r.asks))
	qids := slices.Collect(maps.Keys(r.questions))
	r.mu.Unlock()
	for _, id := range ids {
		r.resolve(id, permissionKind().nobody(by))
	}
	for _, id := range qids {
		r.resolveQuestion(id, noAnswer(by))
	}
}

// newID is the next request id of a kind: prefix and the kind's count
// (n), which it steps.
func (h *Host) newID(prefix string, n *int64) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	*n++
	return prefix + strconv.FormatInt(*n, 10)
}

// answered is the run an answer_permission or answer_question (request
// id) names, or nil once it has replied that no such run is in flight.
func (h *Host) answered(id, runID string) *run {
	h.mu.Lock()
	r := h.runs[runID]
	h.mu.Unlock()
	if r == nil {
		h.reply(id, errReply(id, protocol.CodeUnknownRequest, "no run "+runID+" is in flight", false))
	}
	return r
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
	r := h.answered(m.ID, m.RunID)
	if r == nil {
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
