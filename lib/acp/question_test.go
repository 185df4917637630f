package acp

import (
	"encoding/json"
	"strings"
	"testing"
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
