package hostclient

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/protocol"
)

// askingBackend asks for Bash twice and says what it was told.
type askingBackend struct{}

func (askingBackend) Name() string          { return "asking" }
func (askingBackend) Version() string       { return "0" }
func (askingBackend) AsksPermissions() bool { return true }
func (askingBackend) RunTurn(ctx context.Context, t *host.Turn) error {
	text := ""
	for range 2 {
		a := t.Ask(host.Ask{Tool: "Bash", Input: json.RawMessage(`{"command":"make"}`), Choices: []string{"allow", "deny"}})
		text += a.Decision + ":" + string(a.Input) + ":" + a.Message + ";"
	}
	t.Emit(protocol.AgentEvent{Type: protocol.EvCompleted, Text: text})
	return nil
}

// A run's permission requests come on Run.Asks; answers go back with
// AnswerPermission, and Resolution tells how each ended.
func TestAnswerPermission(t *testing.T) {
	c := InProcess(host.Options{Backend: "asking", Factory: func(string, json.RawMessage) (host.Backend, error) { return askingBackend{}, nil }}, nil)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Hello(ctx, "test", nil); err != nil {
		t.Fatal(err)
	}
	r, err := c.RunTurn(ctx, "r1", protocol.ChatRunParams{ChatID: "c1", Prompt: "go", Permissions: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	answers := []Answer{{Decision: "allow", Input: json.RawMessage(`{"command":"make test"}`)}, {Decision: "deny", Message: "not now"}}
	var ids []string
	for _, a := range answers {
		q := <-r.Asks()
		if q == nil || q.Tool != "Bash" || string(q.Input) != `{"command":"make"}` {
			t.Fatalf("request %+v", q)
		}
		ids = append(ids, q.RequestID)
		if err := c.AnswerPermission(ctx, "r1", q.RequestID, a); err != nil {
			t.Fatal(err)
		}
	}
	evs, done, err := r.Collect(ctx)
	if err != nil || done.StopReason != protocol.StopCompleted || evs[len(evs)-1].Text != `allow:{"command":"make test"}:;deny::not now;` {
		t.Fatalf("%+v %+v %v", evs, done, err)
	}
	for i, id := range ids {
		res, ok := r.Resolution(id)
		if !ok || res.By != "daemon" || res.Decision != answers[i].Decision {
			t.Errorf("resolution of %s: %+v", id, res)
		}
	}
	var re *RemoteError
	if err := c.AnswerPermission(ctx, "r1", ids[0], answers[0]); !errors.As(err, &re) || re.Code != protocol.CodeUnknownRequest {
		t.Errorf("an answer after the run: %v", err)
	}
	if _, open := <-r.Asks(); open {
		t.Error("Asks still open after the run")
	}
}
