package host

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/protocol"
)

// questioner is a backend whose turn asks one question request per word
// of its prompt (the word is the first question's header; a second,
// multi-select question "extras" comes with it) and reports the answers
// as its text.
type questioner struct{}

func (questioner) Name() string    { return "questioner" }
func (questioner) Version() string { return "0" }
func (questioner) RunTurn(ctx context.Context, t *Turn) error {
	var out []string
	for _, header := range strings.Fields(t.Params.Prompt) {
		if t.Question == nil {
			out = append(out, "nobody")
			continue
		}
		a := t.Question(QuestionAsk{ToolCallID: "tc-" + header, Questions: []protocol.Question{
			{Header: header, Question: "Which?", Options: []protocol.QuestionOption{{Label: "A"}, {Label: "B"}}},
			{ID: "extras", Question: "Extras?", MultiSelect: true},
		}})
		s := fmt.Sprintf("%v/%s", a.Answered, a.By)
		keys := make([]string, 0, len(a.Answers))
		for k := range a.Answers {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			s += " " + k + "=" + strings.Join(a.Answers[k], "+")
		}
		out = append(out, s)
	}
	t.Emit(protocol.AgentEvent{Type: protocol.EvCompleted, Text: strings.Join(out, "; ")})
	return nil
}

func newQuestioner(t *testing.T) (*Host, *recorder) {
	rec := &recorder{got: make(chan struct{}, 1)}
	h := New(Options{Backend: "q", Factory: func(string, json.RawMessage) (Backend, error) { return questioner{}, nil }}, rec.out)
	h.Deliver(&protocol.Hello{ID: "h", Protocol: 1})
	rec.waitFor(t, func(m protocol.Msg) bool { _, ok := m.(*protocol.Ready); return ok })
	return h, rec
}

func questionRun(h *Host, runID, prompt string, timeoutMs int64) {
	h.Deliver(&protocol.RunTurn{ID: "t-" + runID, RunID: runID, Params: protocol.ChatRunParams{
		ChatID: "c-" + runID, Prompt: prompt, Questions: protocol.QuestionsAsk, PermissionTimeoutMs: timeoutMs}})
}

func (r *recorder) question(t *testing.T, runID, toolCallID string) *protocol.QuestionRequest {
	t.Helper()
	return r.waitFor(t, func(m protocol.Msg) bool {
		q, ok := m.(*protocol.QuestionRequest)
		return ok && q.RunID == runID && q.ToolCallID == toolCallID
	}).(*protocol.QuestionRequest)
}

func (r *recorder) questionResolved(t *testing.T, reqID string) *protocol.QuestionResolved {
	t.Helper()
	return r.waitFor(t, func(m protocol.Msg) bool {
		q, ok := m.(*protocol.QuestionResolved)
		return ok && q.RequestID == reqID
	}).(*protocol.QuestionResolved)
}

// Every question request is resolved exactly once: answered, declined,
// at its deadline, by an interrupt; answers are checked against what was
// asked; a run without questions "ask" has nobody to answer.
func TestQuestionsResolveOnce(t *testing.T) {
	h, rec := newQuestioner(t)
	defer h.Abort()

	questionRun(h, "r1", "Color Size", 60000)
	q := rec.question(t, "r1", "tc-Color")
	if q.TimeoutMs != 60000 || len(q.Questions) != 2 || q.Questions[0].ID != "Color" || q.Questions[1].ID != "extras" {
		t.Fatalf("question %+v", q)
	}
	// Bad answers: refused, and the request stays pending.
	for id, a := range map[string]*protocol.AnswerQuestion{
		"b1": {Answers: map[string][]string{"Size": {"A"}}},
		"b2": {Answers: map[string][]string{"Color": {"A", "B"}}},
		"b3": {},
		"b4": {Answers: map[string][]string{"Color": {"A"}}, Decline: true},
		"b5": {Answers: map[string][]string{"Color": {}}},
	} {
		a.ID, a.RunID, a.RequestID = id, "r1", q.RequestID
		h.Deliver(a)
		wantCode(t, rec.reply(t, id), protocol.CodeBadRequest)
	}
	h.Deliver(&protocol.AnswerQuestion{ID: "u1", RunID: "nope", RequestID: q.RequestID, Answers: map[string][]string{"Color": {"A"}}})
	wantCode(t, rec.reply(t, "u1"), protocol.CodeUnknownRequest)
	h.Deliver(&protocol.AnswerQuestion{ID: "u2", RunID: "r1", RequestID: "q999", Answers: map[string][]string{"Color": {"A"}}})
	wantCode(t, rec.reply(t, "u2"), protocol.CodeUnknownRequest)

	h.Deliver(&protocol.AnswerQuestion{ID: "a1", RunID: "r1", RequestID: q.RequestID,
		Answers: map[string][]string{"Color": {"B"}, "extras": {"x", "y"}}})
	if _, ok := rec.reply(t, "a1").(*protocol.OK); !ok {
		t.Errorf("a1: %#v", rec.reply(t, "a1"))
	}
	if res := rec.questionResolved(t, q.RequestID); !res.Answered || res.By != protocol.ResolvedByDaemon {
		t.Errorf("resolved %+v", res)
	}
	// Twice: refused.
	h.Deliver(&protocol.AnswerQuestion{ID: "a2", RunID: "r1", RequestID: q.RequestID, Decline: true})
	wantCode(t, rec.reply(t, "a2"), protocol.CodeUnknownRequest)
	q2 := rec.question(t, "r1", "tc-Size")
	h.Deliver(&protocol.AnswerQuestion{ID: "a3", RunID: "r1", RequestID: q2.RequestID, Decline: true})
	rec.reply(t, "a3")
	if d, text := rec.done(t, "r1"); d.StopReason != protocol.StopCompleted || text != "true/daemon Color=B extras=x+y; false/daemon" {
		t.Errorf("r1 ended %s with %q", d.StopReason, text)
	}

	// Never answered: no answer at the deadline, once.
	questionRun(h, "r2", "Color", 30)
	q3 := rec.question(t, "r2", "tc-Color")
	if d, text := rec.done(t, "r2"); d.StopReason != protocol.StopCompleted || text != "false/timeout" {
		t.Errorf("r2 ended %s with %q", d.StopReason, text)
	}
	if res := rec.questionResolved(t, q3.RequestID); res.Answered || res.By != protocol.ResolvedByTimeout {
		t.Errorf("resolved %+v", res)
	}

	// An interrupt: no answer, by interrupt.
	questionRun(h, "r3", "Color", 60000)
	q4 := rec.question(t, "r3", "tc-Color")
	h.Deliver(&protocol.Interrupt{ID: "i1", ChatID: "c-r3"})
	if res := rec.questionResolved(t, q4.RequestID); res.Answered || res.By != protocol.ResolvedByInterrupt {
		t.Errorf("resolved %+v", res)
	}
	rec.done(t, "r3")

	// Without questions "ask": nobody to answer; a bad value is refused.
	h.Deliver(&protocol.RunTurn{ID: "t-r4", RunID: "r4", Params: protocol.ChatRunParams{ChatID: "c4", Prompt: "Color"}})
	if _, text := rec.done(t, "r4"); text != "nobody" {
		t.Errorf("r4 said %q", text)
	}
	h.Deliver(&protocol.RunTurn{ID: "t-r5", RunID: "r5", Params: protocol.ChatRunParams{ChatID: "c5", Prompt: "x", Questions: "yes"}})
	wantCode(t, rec.reply(t, "t-r5"), protocol.CodeBadRequest)

	count := 0
	rec.mu.Lock()
	for _, m := range rec.msgs {
		if _, ok := m.(*protocol.QuestionResolved); ok {
			count++
		}
	}
	rec.mu.Unlock()
	if count != 4 {
		t.Errorf("%d question_resolved, want 4 (one a request)", count)
	}
}

// Ids the backend left empty are the header, else q1, q2 ….
func TestQuestionIDs(t *testing.T) {
	got := questionIDs([]protocol.Question{{Header: "DB"}, {}, {Header: "DB"}, {ID: "own"}})
	var ids []string
	for _, q := range got {
		ids = append(ids, q.ID)
	}
	if strings.Join(ids, ",") != "DB,q2,q3,own" {
		t.Errorf("ids %v", ids)
	}
}
