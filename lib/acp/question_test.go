package acp

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/protocol"
)

// askPrompt has echo put one question, of three choices, to the person.
const askPrompt = "!ask=Letter\nWhich letter?\nA\nB\nC"

// A client that takes forms gets the question as elicitation/create (valid
// against the schema), an enum of the choices; its answer is the agent's.
func TestQuestionByForm(t *testing.T) {
	c := start(t, loadDefs(t), "")
	var got json.RawMessage
	c.elicit = func(params json.RawMessage) any {
		got = params
		return map[string]any{"action": "accept", "content": map[string]any{"Letter": "B"}}
	}
	c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}})
	r := c.call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})
	var s struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(r["result"], &s)
	ms := c.until(c.send("session/prompt", prompt(s.SessionID, askPrompt)))
	ups, _ := updates(t, ms)
	if text := chunks(ups); text != "answered Letter: B" {
		t.Errorf("the agent was told %q", text)
	}
	var form elicitationParams
	if err := json.Unmarshal(got, &form); err != nil || form.Mode != "form" || form.SessionID != s.SessionID ||
		strings.Join(form.RequestedSchema.Properties["Letter"].Enum, ",") != "A,B,C" || form.Message != "Which letter?" {
		t.Errorf("the form: %s", got)
	}

	c.elicit = func(json.RawMessage) any { return map[string]any{"action": "decline"} }
	ms = c.until(c.send("session/prompt", prompt(s.SessionID, askPrompt)))
	ups, _ = updates(t, ms)
	if text := chunks(ups); !strings.HasPrefix(text, "no answer: ") {
		t.Errorf("declined, the agent was told %q", text)
	}
}

// A client that does not is asked by session/request_permission, an
// option a choice and one not to answer.
func TestQuestionByPermission(t *testing.T) {
	c := start(t, loadDefs(t), "")
	var names []string
	c.answer = func(params json.RawMessage) any {
		var p permissionParams
		_ = json.Unmarshal(params, &p)
		names = nil
		pick := ""
		for _, o := range p.Options {
			names = append(names, o.Name+"/"+o.Kind)
			if o.Name == "C" {
				pick = o.OptionID
			}
		}
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": pick}}
	}
	s := c.newSession()
	ms := c.until(c.send("session/prompt", prompt(s, askPrompt)))
	ups, _ := updates(t, ms)
	if text := chunks(ups); text != "answered Letter: C" {
		t.Errorf("the agent was told %q", text)
	}
	if strings.Join(names, ",") != "A/allow_once,B/allow_once,C/allow_once,Don't answer/reject_once" {
		t.Errorf("the options: %v", names)
	}
}

// Several questions make one form: a property each, a multi-select one an
// array of its labels, a free one a string; the content read back.
func TestFormOfSeveral(t *testing.T) {
	qs := []protocol.Question{
		{ID: "db", Header: "Database", Question: "Which database?", Options: []protocol.QuestionOption{{Label: "Postgres", Description: "one server"}, {Label: "SQLite"}}},
		{ID: "checks", Header: "Checks", Question: "Which checks?", Options: []protocol.QuestionOption{{Label: "lint"}, {Label: "unit"}}, MultiSelect: true},
		{ID: "name", Question: "Its name?"},
	}
	f := formOf("s1", "tc1", qs)
	db, checks, name := f.RequestedSchema.Properties["db"], f.RequestedSchema.Properties["checks"], f.RequestedSchema.Properties["name"]
	if db.Type != "string" || strings.Join(db.Enum, ",") != "Postgres,SQLite" || db.Description != "Which database?\n- Postgres: one server" ||
		checks.Type != "array" || checks.Items == nil || strings.Join(checks.Items.Enum, ",") != "lint,unit" ||
		name.Type != "string" || name.Enum != nil || strings.Join(f.RequestedSchema.Required, ",") != "db,checks,name" ||
		f.Message != "The agent asks 3 questions." || f.ToolCallID != "tc1" {
		t.Errorf("%+v", f)
	}
	got := answersOf(qs, map[string]json.RawMessage{"db": json.RawMessage(`"SQLite"`), "checks": json.RawMessage(`["lint","unit"]`), "name": json.RawMessage(`"x"`)})
	if strings.Join(got["db"], ",") != "SQLite" || strings.Join(got["checks"], ",") != "lint,unit" || strings.Join(got["name"], ",") != "x" {
		t.Errorf("answers %v", got)
	}
}

// twoQuestions asks two questions at once and says the answers.
type twoQuestions struct{}

func (twoQuestions) Name() string    { return "echo" }
func (twoQuestions) Version() string { return "0" }
func (twoQuestions) RunTurn(ctx context.Context, t *host.Turn) error {
	a := t.Question(host.QuestionAsk{Questions: []protocol.Question{
		{ID: "a", Question: "First?", Options: []protocol.QuestionOption{{Label: "X"}, {Label: "Y"}}},
		{ID: "b", Question: "Second?", Options: []protocol.QuestionOption{{Label: "P"}, {Label: "Q"}}},
	}})
	text := "no answer"
	if a.Answered {
		text = "a=" + strings.Join(a.Answers["a"], ",") + " b=" + strings.Join(a.Answers["b"], ",")
	}
	t.Emit(protocol.AgentEvent{Type: protocol.EvCompleted, Text: text})
	return nil
}

// Several questions to a client without forms: a permission request each,
// in turn; rejecting one answers none.
func TestSeveralQuestionsByPermission(t *testing.T) {
	c := startWith(t, loadDefs(t), func(string, json.RawMessage) (host.Backend, error) { return twoQuestions{}, nil }, "")
	var mu sync.Mutex
	var titles []string
	reject := false
	c.answer = func(params json.RawMessage) any {
		var p permissionParams
		_ = json.Unmarshal(params, &p)
		mu.Lock()
		defer mu.Unlock()
		titles = append(titles, p.ToolCall.Title)
		if reject {
			return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": optDecline}}
		}
		pick := p.Options[1].OptionID // Y, then Q
		if len(titles) == 2 {
			pick = p.Options[0].OptionID // P
		}
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": pick}}
	}
	s := c.newSession()
	ups, _ := updates(t, c.until(c.send("session/prompt", prompt(s, "go"))))
	if text := chunks(ups); text != "a=Y b=P" {
		t.Errorf("the agent was told %q", text)
	}
	mu.Lock()
	if strings.Join(titles, "|") != "Question 1 of 2: First?|Question 2 of 2: Second?" {
		t.Errorf("asked %q", titles)
	}
	reject, titles = true, nil
	mu.Unlock()
	ups, _ = updates(t, c.until(c.send("session/prompt", prompt(s, "go"))))
	if text := chunks(ups); text != "no answer" {
		t.Errorf("rejected, the agent was told %q", text)
	}
}
