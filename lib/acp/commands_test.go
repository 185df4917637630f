package acp

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentry/agentry/lib/backend/echo"
	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/protocol"
)

// commander is the echo backend offering slash commands at each turn, as
// the claude backend does each time its CLI starts.
type commander struct{ *echo.Backend }

func (b commander) RunTurn(ctx context.Context, t *host.Turn) error {
	t.Emit(protocol.AgentEvent{Type: protocol.EvCommands, Commands: []protocol.Command{
		{Name: "compact", Description: "Free up context", Hint: "<instructions>"}, {Name: "init", Description: "Write CLAUDE.md"}}})
	return b.Backend.RunTurn(ctx, t)
}

// A backend's commands are an available_commands_update (checked against
// the schema by the client), sent again only when they change.
func TestCommandsEvent(t *testing.T) {
	c := startWith(t, loadDefs(t), func(string, json.RawMessage) (host.Backend, error) {
		b, err := echo.New(nil)
		return commander{b}, err
	}, "")
	s := c.newSession()
	sent := func() []json.RawMessage {
		var out []json.RawMessage
		for _, m := range c.until(c.send("session/prompt", prompt(s, "go"))) {
			var p struct {
				Update struct {
					SessionUpdate     string          `json:"sessionUpdate"`
					AvailableCommands json.RawMessage `json:"availableCommands"`
				} `json:"update"`
			}
			if json.Unmarshal(m["params"], &p) == nil && p.Update.SessionUpdate == "available_commands_update" {
				out = append(out, p.Update.AvailableCommands)
			}
		}
		return out
	}
	first := sent()
	want := `[{"name":"compact","description":"Free up context","input":{"hint":"\u003cinstructions\u003e"}},{"name":"init","description":"Write CLAUDE.md"}]`
	if len(first) != 1 || string(first[0]) != want {
		t.Errorf("first turn: %s", first)
	}
	if again := sent(); len(again) != 0 {
		t.Errorf("the same commands sent again: %s", again)
	}
}
