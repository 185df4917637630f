package acp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/backend/echo"
	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/protocol"
)

// planner is the echo backend reporting a plan first, as the codex backend
// does on codex's turn/plan/updated.
type planner struct{ *echo.Backend }

func (b planner) RunTurn(ctx context.Context, t *host.Turn) error {
	t.Emit(protocol.AgentEvent{Type: protocol.EvPlan, Text: "why", Plan: []protocol.PlanStep{
		{Step: "read", Status: protocol.PlanCompleted}, {Step: "write", Status: protocol.PlanInProgress}, {Step: "test", Status: protocol.PlanPending}}})
	return b.Backend.RunTurn(ctx, t)
}

// A backend's plan event is a plan update, whole, its steps as entries
// (the client checks it against the schema).
func TestPlanEvent(t *testing.T) {
	c := startWith(t, loadDefs(t), func(string, json.RawMessage) (host.Backend, error) {
		b, err := echo.New(nil)
		return planner{b}, err
	}, "")
	s := c.newSession()
	ms := c.until(c.send("session/prompt", prompt(s, "go")))
	var entries []planEntry
	for _, m := range ms {
		if string(m["method"]) != `"session/update"` {
			continue
		}
		var p struct {
			Update planUpdate `json:"update"`
		}
		if json.Unmarshal(m["params"], &p) == nil && p.Update.SessionUpdate == "plan" {
			entries = p.Update.Entries
		}
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Content+":"+e.Status+":"+e.Priority)
	}
	if strings.Join(got, " ") != "read:completed:medium write:in_progress:medium test:pending:medium" {
		t.Errorf("plan entries %v", got)
	}
}
