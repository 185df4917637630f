package hostclient

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/protocol"
)

// questioningBackend asks one question twice and says what it was told.
type questioningBackend struct{}

func (questioningBackend) Name() string    { return "questioning" }
func (questioningBackend) Version() string { return "0" }
func (questioningBackend) RunTurn(ctx context.Context, t *host.Turn) error {
	text := ""
	for range 2 {
		a := t.Question(host.QuestionAsk{Questions: []protocol.Question{{Header: "DB", Question: "Which database?",
			Options: []protocol.QuestionOption{{Label: "Postgres"}, {Label: "SQLite"}}}}})
		text += strings.Join(a.Answers["DB"], ",") + ":" + a.By + ";"
	}
	t.Emit(protocol.AgentEvent{Type: protocol.EvCompleted, Text: text})
	return nil
}

// A run's question requests come on Run.Questions; answers go back with
// AnswerQuestion, and QuestionResolution tells how each ended.
func TestAnswerQuestion(t *testing.T) {
	c := InProcess(host.Options{Backend: "questioning", Factory: func(string, json.RawMessage) (host.Backend, error) { return questioningBackend{}, nil }}, nil)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Hello(ctx, "test", nil); err != nil {
		t.Fatal(err)
	}
	r, err := c.RunTurn(ctx, "r1", protocol.ChatRunParams{ChatID: "c1", Prompt: "go", Questions: protocol.QuestionsAsk})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	var re *RemoteError
	for i, a := range []QuestionAnswer{{Answers: map[string][]string{"DB": {"SQLite"}}}, {Decline: true}} {
		q := <-r.Questions()
		if q == nil || len(q.Questions) != 1 || q.Questions[0].ID != "DB" || q.Questions[0].Question != "Which database?" {
			t.Fatalf("request %+v", q)
		}
		ids = append(ids, q.RequestID)
		if i == 0 {
			err := c.AnswerQuestion(ctx, "r1", q.RequestID, QuestionAnswer{Answers: map[string][]string{"Color": {"red"}}})
			if !errors.As(err, &re) || re.Code != protocol.CodeBadRequest {
				t.Errorf("an answer to a question not asked: %v", err)
			}
		}
		if err := c.AnswerQuestion(ctx, "r1", q.RequestID, a); err != nil {
			t.Fatal(err)
		}
	}
	evs, done, err := r.Collect(ctx)
	if err != nil || done.StopReason != protocol.StopCompleted || evs[len(evs)-1].Text != "SQLite:daemon;:daemon;" {
		t.Fatalf("%+v %+v %v", evs, done, err)
	}
	for i, id := range ids {
		res, ok := r.QuestionResolution(id)
		if !ok || res.By != "daemon" || res.Answered != (i == 0) {
			t.Errorf("resolution of %s: %+v", id, res)
		}
	}
	if err := c.AnswerQuestion(ctx, "r1", ids[0], QuestionAnswer{Decline: true}); !errors.As(err, &re) || re.Code != protocol.CodeUnknownRequest {
		t.Errorf("an answer after the run: %v", err)
	}
	if _, open := <-r.Questions(); open {
		t.Error("Questions still open after the run")
	}
}
