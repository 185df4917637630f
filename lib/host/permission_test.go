package host

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/protocol"
)

// asker is a backend whose turn asks once per word of its prompt (the
// word is the tool), and reports the answers as its text: decision/by,
// and the replaced input when there was one. An interrupt ends the turn.
type asker struct{ noAsk bool }

func (asker) Name() string            { return "asker" }
func (asker) Version() string         { return "0" }
func (a asker) AsksPermissions() bool { return !a.noAsk }
func (asker) RunTurn(ctx context.Context, t *Turn) error {
	var out []string
	for _, tool := range strings.Fields(t.Params.Prompt) {
		if t.Ask == nil {
			out = append(out, "grant")
			continue
		}
		a := t.Ask(Ask{Tool: tool, Input: json.RawMessage(`{"command":"echo hi > out.txt"}`),
			Choices: []string{protocol.DecisionAllow, protocol.DecisionDeny}})
		s := a.Decision + "/" + a.By
		if len(a.Input) > 0 {
			s += " " + string(a.Input)
		}
		out = append(out, s)
		select {
		case <-t.Interrupted:
			return ErrInterrupted
		default:
		}
	}
	t.Emit(protocol.AgentEvent{Type: protocol.EvCompleted, Text: strings.Join(out, "; ")})
	return nil
}

func newAsker(t *testing.T, b asker) (*Host, *recorder) {
	rec := &recorder{got: make(chan struct{}, 1)}
	h := New(Options{Backend: "asker", Factory: func(string, json.RawMessage) (Backend, error) { return b, nil }}, rec.out)
	h.Deliver(&protocol.Hello{ID: "h", Protocol: 1})
	rec.waitFor(t, func(m protocol.Msg) bool { _, ok := m.(*protocol.Ready); return ok })
	return h, rec
}

func askRun(h *Host, runID, prompt string, timeoutMs int64) {
	h.Deliver(&protocol.RunTurn{ID: "t-" + runID, RunID: runID, Params: protocol.ChatRunParams{
		ChatID: "c-" + runID, Prompt: prompt, Permissions: protocol.PermissionsAsk, PermissionTimeoutMs: timeoutMs}})
}

func (r *recorder) request(t *testing.T, runID, tool string) *protocol.PermissionRequest {
	t.Helper()
	return r.waitFor(t, func(m protocol.Msg) bool {
		q, ok := m.(*protocol.PermissionRequest)
		return ok && q.RunID == runID && q.Tool == tool
	}).(*protocol.PermissionRequest)
}

func (r *recorder) reply(t *testing.T, id string) protocol.Msg {
	t.Helper()
	return r.waitFor(t, func(m protocol.Msg) bool { return protocol.RequestID(m) == id })
}

func (r *recorder) done(t *testing.T, runID string) (*protocol.RunDone, string) {
	t.Helper()
	d := r.waitFor(t, func(m protocol.Msg) bool { d, ok := m.(*protocol.RunDone); return ok && d.RunID == runID }).(*protocol.RunDone)
	evs := r.events(runID)
	return d, evs[len(evs)-1].Event.Text
}

func wantCode(t *testing.T, m protocol.Msg, code string) {
	t.Helper()
	e, ok := m.(*protocol.Error)
	if !ok || e.Error.Code != code {
		t.Errorf("got %#v, want a %s error", m, code)
	}
}

// Every permission request is resolved exactly once, whoever answers,
// however late, twice or never, and for whichever run.
func TestPermissionRequestsResolveOnce(t *testing.T) {
	h, rec := newAsker(t, asker{})
	defer h.Abort()

	// Answered: the decision and the replaced input reach the backend.
	askRun(h, "r1", "Bash Write", 60000)
	q := rec.request(t, "r1", "Bash")
	if q.TimeoutMs != 60000 || string(q.Input) != `{"command":"echo hi > out.txt"}` || len(q.Choices) != 2 {
		t.Errorf("request %+v", q)
	}
	h.Deliver(&protocol.AnswerPermission{ID: "a1", RunID: "r1", RequestID: q.RequestID, Decision: "allow", Input: json.RawMessage(`{"command":"true"}`)})
	if _, ok := rec.reply(t, "a1").(*protocol.OK); !ok {
		t.Errorf("a1: %#v", rec.reply(t, "a1"))
	}
	// Twice: the second answer is refused and changes nothing.
	h.Deliver(&protocol.AnswerPermission{ID: "a2", RunID: "r1", RequestID: q.RequestID, Decision: "deny"})
	wantCode(t, rec.reply(t, "a2"), protocol.CodeUnknownRequest)

	// The wrong run: refused, and the request stays pending for its own.
	q2 := rec.request(t, "r1", "Write")
	askRun(h, "r2", "Edit", 60000)
	rec.request(t, "r2", "Edit")
	h.Deliver(&protocol.AnswerPermission{ID: "a3", RunID: "r2", RequestID: q2.RequestID, Decision: "allow"})
	wantCode(t, rec.reply(t, "a3"), protocol.CodeUnknownRequest)
	h.Deliver(&protocol.AnswerPermission{ID: "a4", RunID: "nope", RequestID: q2.RequestID, Decision: "allow"})
	wantCode(t, rec.reply(t, "a4"), protocol.CodeUnknownRequest)
	h.Deliver(&protocol.AnswerPermission{ID: "a5", RunID: "r1", RequestID: q2.RequestID, Decision: "deny", Message: "no"})
	rec.reply(t, "a5")
	if d, text := rec.done(t, "r1"); d.StopReason != protocol.StopCompleted || text != `allow/daemon {"command":"true"}; deny/daemon` {
		t.Errorf("r1 ended %s with %q", d.StopReason, text)
	}

	// Never answered: denied at the deadline, logged, and the run ends
	// normally; a late answer is refused.
	askRun(h, "r3", "Bash", 30)
	q3 := rec.request(t, "r3", "Bash")
	if d, text := rec.done(t, "r3"); d.StopReason != protocol.StopCompleted || text != "deny/timeout" {
		t.Errorf("r3 ended %s with %q", d.StopReason, text)
	}
	rec.waitFor(t, func(m protocol.Msg) bool {
		l, ok := m.(*protocol.Log)
		return ok && strings.Contains(l.Msg, "permission request "+q3.RequestID) && strings.Contains(l.Msg, "denied")
	})
	h.Deliver(&protocol.AnswerPermission{ID: "a6", RunID: "r3", RequestID: q3.RequestID, Decision: "allow"})
	wantCode(t, rec.reply(t, "a6"), protocol.CodeUnknownRequest)

	// An interrupt denies what is pending, and the run ends interrupted.
	h.Deliver(&protocol.Interrupt{ID: "i1", ChatID: "c-r2"})
	if d, _ := rec.done(t, "r2"); d.StopReason != protocol.StopInterrupted {
		t.Errorf("r2 ended %s", d.StopReason)
	}

	// Bad answers are bad requests, not resolutions.
	askRun(h, "r4", "Bash", 60000)
	q4 := rec.request(t, "r4", "Bash")
	h.Deliver(&protocol.AnswerPermission{ID: "a7", RunID: "r4", RequestID: q4.RequestID, Decision: "maybe"})
	wantCode(t, rec.reply(t, "a7"), protocol.CodeBadRequest)
	h.Deliver(&protocol.AnswerPermission{ID: "a8", RunID: "r4", RequestID: q4.RequestID, Decision: "allow", Input: json.RawMessage(`[1]`)})
	wantCode(t, rec.reply(t, "a8"), protocol.CodeBadRequest)
	// Shutdown with no time to drain: denied, then bye.
	h.Deliver(&protocol.Shutdown{ID: "z", DrainMs: new(int64)})
	rec.reply(t, "z")

	rec.mu.Lock()
	defer rec.mu.Unlock()
	resolved := map[string][]string{}
	for _, m := range rec.msgs {
		if r, ok := m.(*protocol.PermissionResolved); ok {
			resolved[r.RequestID] = append(resolved[r.RequestID], r.Decision+"/"+r.By)
		}
	}
	want := map[string]string{q.RequestID: "allow/daemon", q2.RequestID: "deny/daemon", q3.RequestID: "deny/timeout", q4.RequestID: "deny/interrupt"}
	var asked int
	for _, m := range rec.msgs {
		if q, ok := m.(*protocol.PermissionRequest); ok {
			asked++
			if got := resolved[q.RequestID]; len(got) != 1 {
				t.Errorf("request %s (%s of %s) resolved %d times: %v", q.RequestID, q.Tool, q.RunID, len(got), got)
			} else if w, ok := want[q.RequestID]; ok && got[0] != w {
				t.Errorf("request %s resolved %s, want %s", q.RequestID, got[0], w)
			}
		}
	}
	if asked != 5 {
		t.Errorf("%d requests asked, want 5", asked)
	}
}

// A daemon that does not opt in is never asked; one that asks of a backend
// that cannot, or asks wrongly, is refused before anything runs.
func TestPermissionsOptIn(t *testing.T) {
	h, rec := newAsker(t, asker{})
	defer h.Abort()
	h.Deliver(&protocol.RunTurn{ID: "t1", RunID: "r1", Params: protocol.ChatRunParams{ChatID: "c1", Prompt: "Bash"}})
	if _, text := rec.done(t, "r1"); text != "grant" {
		t.Errorf("a run that did not opt in: %q", text)
	}
	h.Deliver(&protocol.RunTurn{ID: "t2", RunID: "r2", Params: protocol.ChatRunParams{ChatID: "c2", Prompt: "Bash", Permissions: "sometimes"}})
	wantCode(t, rec.reply(t, "t2"), protocol.CodeBadRequest)

	h2, rec2 := newAsker(t, asker{noAsk: true})
	defer h2.Abort()
	askRun(h2, "r1", "Bash", 0)
	wantCode(t, rec2.reply(t, "t-r1"), protocol.CodeUnsupported)
}

// An answer_permission that does not say which request it answers is a bad
// request (agent-host-protocol(7): a known type with missing fields), not
// an answer to an unknown request.
func TestAnswerWithoutIDsIsBadRequest(t *testing.T) {
	h, rec := newAsker(t, asker{})
	for i, line := range []string{
		`{"type":"answer_permission","id":"a0","requestId":"p1","decision":"allow"}`,
		`{"type":"answer_permission","id":"a1","runId":"r1","decision":"allow"}`,
	} {
		h.Deliver(protocol.Parse([]byte(line)))
		id := "a" + string(rune('0'+i))
		e := rec.waitFor(t, func(m protocol.Msg) bool { e, ok := m.(*protocol.Error); return ok && e.ID == id }).(*protocol.Error)
		if e.Error.Code != protocol.CodeBadRequest {
			t.Errorf("%s: got %s, want %s", line, e.Error.Code, protocol.CodeBadRequest)
		}
	}
}

// flooder is a backend whose agent asks for permission n times at once,
// as a CLI writing can_use_tool requests without waiting for answers
// does, then waits for its context.
type flooder struct {
	n       int
	denied  chan string // each answer's by
	stopped chan struct{}
}

func (flooder) Name() string          { return "flooder" }
func (flooder) Version() string       { return "0" }
func (flooder) AsksPermissions() bool { return true }
func (f flooder) RunTurn(ctx context.Context, t *Turn) error {
	for range f.n {
		go func() {
			a := t.Ask(Ask{Tool: "Bash", Input: json.RawMessage(`{}`), Choices: []string{protocol.DecisionAllow, protocol.DecisionDeny}})
			f.denied <- a.Decision + "/" + a.By
		}()
	}
	<-ctx.Done()
	close(f.stopped)
	return ErrInterrupted
}

// A run may have only so many permission requests pending: its agent
// asking past the cap ends it with an error event that says so, every
// request pending is denied, the one past the cap is never sent, and the
// backend's context is cancelled so that it kills its CLI.
func TestPendingPermissionsAreCapped(t *testing.T) {
	const max, n = 4, 50
	f := flooder{n: n, denied: make(chan string, n), stopped: make(chan struct{})}
	rec := &recorder{got: make(chan struct{}, 1)}
	h := New(Options{Backend: "flooder", MaxPendingPermissions: max,
		Factory: func(string, json.RawMessage) (Backend, error) { return f, nil }}, rec.out)
	h.Deliver(&protocol.Hello{ID: "h", Protocol: 1})
	rec.waitFor(t, func(m protocol.Msg) bool { _, ok := m.(*protocol.Ready); return ok })
	askRun(h, "r1", "go", 60000)
	d, _ := rec.done(t, "r1")
	if d.StopReason != protocol.StopError {
		t.Errorf("stop reason %q", d.StopReason)
	}
	evs := rec.events("r1")
	last := evs[len(evs)-1].Event
	if last.Type != protocol.EvError || last.Error == nil ||
		last.Error.Message != "the agent had 4 permission requests pending at once, the most a run may have: the run was ended" {
		t.Errorf("the last event: %+v %+v", last, last.Error)
	}
	select {
	case <-f.stopped:
	default:
		t.Error("run_done came before the backend's context was cancelled")
	}
	for range n {
		if got := <-f.denied; got != "deny/run_ended" {
			t.Errorf("an answer: %s", got)
		}
	}
	rec.mu.Lock()
	asked, resolved := 0, 0
	for _, m := range rec.msgs {
		switch m.(type) {
		case *protocol.PermissionRequest:
			asked++
		case *protocol.PermissionResolved:
			resolved++
		}
	}
	rec.mu.Unlock()
	if asked != max || resolved != max {
		t.Errorf("%d requests sent and %d resolved, want %d of each", asked, resolved, max)
	}
}
