package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/protocol"
)

// rogue is a backend that breaks the rules in the ways a buggy one would.
type rogue struct{}

func (rogue) Name() string    { return "rogue" }
func (rogue) Version() string { return "0" }
func (rogue) RunTurn(ctx context.Context, t *Turn) error {
	switch t.Params.Prompt {
	case "no-terminal":
		t.Emit(protocol.AgentEvent{Type: protocol.EvTextDelta, Text: "a"})
		return nil
	case "two-terminals":
		t.Emit(protocol.AgentEvent{Type: protocol.EvCompleted, Text: "first"})
		t.Emit(protocol.AgentEvent{Type: protocol.EvError, Error: &protocol.ErrorInfo{Code: "x"}})
		t.Emit(protocol.AgentEvent{Type: protocol.EvTextDelta, Text: "late"})
		return errors.New("and an error too")
	case "started-twice":
		t.Emit(protocol.AgentEvent{Type: protocol.EvRunStarted})
		t.Emit(protocol.AgentEvent{Type: protocol.EvRunStarted})
		return nil
	case "plain-error":
		return errors.New("it broke")
	case "error-without-info":
		t.Emit(protocol.AgentEvent{Type: protocol.EvError})
		return nil
	}
	return nil
}

type recorder struct {
	mu   sync.Mutex
	msgs []protocol.Msg
	got  chan struct{}
}

func (r *recorder) out(m protocol.Msg) {
	r.mu.Lock()
	r.msgs = append(r.msgs, m)
	r.mu.Unlock()
	select {
	case r.got <- struct{}{}:
	default:
	}
}

// waitFor waits until a message matches, failing after 5s.
func (r *recorder) waitFor(t *testing.T, match func(protocol.Msg) bool) protocol.Msg {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		r.mu.Lock()
		for _, m := range r.msgs {
			if match(m) {
				r.mu.Unlock()
				return m
			}
		}
		r.mu.Unlock()
		select {
		case <-r.got:
		case <-deadline:
			t.Fatal("no matching message within 5s")
		}
	}
}

func (r *recorder) events(runID string) []protocol.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var evs []protocol.Event
	for _, m := range r.msgs {
		if e, ok := m.(*protocol.Event); ok && e.RunID == runID {
			evs = append(evs, *e)
		}
	}
	return evs
}

func newRogue() (*Host, *recorder) {
	rec := &recorder{got: make(chan struct{}, 1)}
	h := New(Options{Backend: "rogue", Factory: func(string, json.RawMessage) (Backend, error) { return rogue{}, nil }}, rec.out)
	h.Deliver(&protocol.Hello{ID: "h", Protocol: 1})
	return h, rec
}

// Whatever the backend does, a run is run_started, one terminal event,
// run_done, with seq 1, 2, 3 ….
func TestRunRulesHoldForARogueBackend(t *testing.T) {
	cases := map[string]string{
		"no-terminal":        "run_started text_delta completed|completed",
		"two-terminals":      "run_started completed|completed",
		"started-twice":      "run_started completed|completed",
		"plain-error":        "run_started error|error",
		"error-without-info": "run_started error|error",
	}
	h, rec := newRogue()
	i := 0
	for prompt, want := range cases {
		i++
		runID := fmt.Sprint("r", i)
		h.Deliver(&protocol.RunTurn{ID: "t" + runID, RunID: runID, Params: protocol.ChatRunParams{ChatID: runID, Prompt: prompt}})
		done := rec.waitFor(t, func(m protocol.Msg) bool { d, ok := m.(*protocol.RunDone); return ok && d.RunID == runID }).(*protocol.RunDone)
		var types []string
		for j, e := range rec.events(runID) {
			if e.Seq != j+1 {
				t.Errorf("%s: event %d has seq %d", prompt, j+1, e.Seq)
			}
			if e.Event.Type == protocol.EvError && (e.Event.Error == nil || e.Event.Error.Code == "") {
				t.Errorf("%s: an error event without a code", prompt)
			}
			types = append(types, e.Event.Type)
		}
		if got := strings.Join(types, " ") + "|" + done.StopReason; got != want {
			t.Errorf("%s: got %s, want %s", prompt, got, want)
		}
		if done.Events != len(types) {
			t.Errorf("%s: run_done says %d events, %d were sent", prompt, done.Events, len(types))
		}
	}
}

// An event or notice sent to the host is dropped with a notice, and no
// request ever goes unanswered: one reply per id.
func TestOneReplyPerRequest(t *testing.T) {
	h, rec := newRogue()
	h.Deliver(&protocol.Event{RunID: "x"})
	h.Deliver(&protocol.Unknown{Reason: protocol.ReasonUnknownType, Type: "frob", ID: "u1"})
	h.Deliver(&protocol.BadMessage{Type: "ping", ID: "b1", Err: "bad"})
	h.Deliver(&protocol.SetMCPServers{ID: "m1", ChatID: "c1"})
	h.Deliver(&protocol.ListModels{ID: "l1"})
	h.Deliver(&protocol.Shutdown{ID: "z"})
	<-h.Done()
	count := map[string]int{}
	rec.mu.Lock()
	for _, m := range rec.msgs {
		if id := protocol.RequestID(m); id != "" {
			count[id]++
		}
	}
	rec.mu.Unlock()
	for _, id := range []string{"h", "u1", "b1", "m1", "l1", "z"} {
		if count[id] != 1 {
			t.Errorf("request %s got %d replies", id, count[id])
		}
	}
	unsupported := rec.waitFor(t, func(m protocol.Msg) bool { e, ok := m.(*protocol.Error); return ok && e.ID == "m1" }).(*protocol.Error)
	if unsupported.Error.Code != protocol.CodeUnsupported {
		t.Errorf("set_mcp_servers on a backend without it: %+v", unsupported.Error)
	}
	rec.waitFor(t, func(m protocol.Msg) bool {
		l, ok := m.(*protocol.Log)
		return ok && strings.Contains(l.Msg, "it is a stream, and a host takes only requests")
	})
}
