package tests

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry/agentry/tests/acpclient"
)

// fakeACPAgent is agent-host --acp's arguments for the acp backend over
// tests/testdata/acpagent.py.
func fakeACPAgent(t *testing.T, extra ...string) []string {
	abs, err := filepath.Abs(filepath.Join("testdata", "acpagent.py"))
	if err != nil {
		t.Fatal(err)
	}
	return append(append([]string{"--backend", "acp"}, extra...), "--", "python3", abs)
}

// elicitationOf is the first elicitation/create the client got.
func elicitationOf(evs []acpclient.Event) (params struct {
	SessionID       string `json:"sessionId"`
	Mode            string `json:"mode"`
	Message         string `json:"message"`
	RequestedSchema struct {
		Properties map[string]struct {
			Type  string   `json:"type"`
			Title string   `json:"title"`
			Enum  []string `json:"enum"`
		} `json:"properties"`
	} `json:"requestedSchema"`
}, ok bool) {
	for _, ev := range evs {
		if ev.Event == "elicitation" {
			return params, json.Unmarshal(ev.Params, &params) == nil
		}
	}
	return params, false
}

// An agent's question (an ACP agent's form elicitation, through agentry's
// acp backend) reaches an editor that takes forms as elicitation/create
// with the choices, and the answer gets back to the agent; declined, the
// agent is told it was declined, never given a choice.
func TestACPQuestionElicitation(t *testing.T) {
	c := startACP(t, fakeACPAgent(t)...)
	s := c.NewSessionWith(t.TempDir(), map[string]any{"elicitation": map[string]any{"form": map[string]any{}}})

	c.Elicit("B")
	evs, res := c.Call("session/prompt", acpclient.Prompt(s, "ELICIT"))
	e, ok := elicitationOf(evs)
	letter := e.RequestedSchema.Properties["letter"]
	if !ok || e.Mode != "form" || e.SessionID != s || strings.Join(letter.Enum, ",") != "A,B,C" || letter.Title != "Letter" {
		t.Errorf("the editor was not asked the question as a form with its choices: %+v; %v", e, acpclient.Kinds(evs))
	}
	if got := acpclient.Text(evs); got != "chose B" || acpclient.StopReason(res) != "end_turn" {
		t.Errorf("the agent was told %q (%s), not the editor's choice", got, acpclient.StopReason(res))
	}
	// The question is shown as a call of its own, which ends with its answer.
	if kinds := strings.Join(acpclient.Kinds(evs), " "); !strings.Contains(kinds, "tool_call:pending elicitation tool_call_update:completed") {
		t.Errorf("the question's call: %s", kinds)
	}

	c.Elicit("decline")
	evs, _ = c.Call("session/prompt", acpclient.Prompt(s, "ELICIT"))
	if got := acpclient.Text(evs); got != "declined" {
		t.Errorf("declined, the agent was told %q", got)
	}
	if kinds := strings.Join(acpclient.Kinds(evs), " "); !strings.Contains(kinds, "elicitation tool_call_update:failed") {
		t.Errorf("the declined question's call: %s", kinds)
	}
}

// An editor that does not take forms is asked by session/request_permission:
// an option a choice, and one not to answer.
func TestACPQuestionPermission(t *testing.T) {
	c := startACP(t, fakeACPAgent(t)...)
	s := c.NewSession(t.TempDir())

	c.Permission("choose:B")
	evs, res := c.Call("session/prompt", acpclient.Prompt(s, "ELICIT"))
	var names []string
	for _, ev := range evs {
		if ev.Event == "elicitation" {
			t.Error("elicitation/create to an editor that does not take it")
		}
		if ev.Event != "permission" {
			continue
		}
		var p struct {
			Options []struct {
				Name string `json:"name"`
				Kind string `json:"kind"`
			} `json:"options"`
		}
		_ = json.Unmarshal(ev.Params, &p)
		for _, o := range p.Options {
			names = append(names, o.Name+"/"+o.Kind)
		}
	}
	if strings.Join(names, ",") != "A/allow_once,B/allow_once,C/allow_once,Don't answer/reject_once" {
		t.Errorf("the permission request's options: %v; %v", names, acpclient.Kinds(evs))
	}
	if got := acpclient.Text(evs); got != "chose B" || acpclient.StopReason(res) != "end_turn" {
		t.Errorf("the agent was told %q (%s)", got, acpclient.StopReason(res))
	}

	c.Permission("reject")
	evs, _ = c.Call("session/prompt", acpclient.Prompt(s, "ELICIT"))
	if got := acpclient.Text(evs); got != "declined" {
		t.Errorf("not answered, the agent was told %q", got)
	}
}
