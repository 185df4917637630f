package acp

import (
	"encoding/json"
	"fmt"
	"testing"
)

// Prompts sent together on one session run one after the other in the
// order they were sent: each answer's chunks are its own prompt's, and the
// answers come in order.
func TestPromptsRunInInputOrder(t *testing.T) {
	c := start(t, loadDefs(t), "")
	s := c.newSession()
	const n = 8
	ids := make([]string, n)
	for i := range ids {
		text := fmt.Sprintf("turn-%d", i)
		if i == 0 {
			text = "!slow=5ms\nturn-0 a b c"
		}
		ids[i] = c.send("session/prompt", prompt(s, text))
	}
	ms := c.until(ids[n-1])
	var order []string
	var turn []map[string]json.RawMessage
	for _, m := range ms {
		turn = append(turn, m)
		if m["method"] != nil {
			continue
		}
		order = append(order, string(m["id"]))
		ups, _ := updates(t, turn)
		want := fmt.Sprintf("turn-%d", len(order)-1)
		if len(order) == 1 {
			want = "turn-0 a b c"
		}
		if got := chunks(ups); got != want {
			t.Errorf("answer %d (id %s) follows the chunks %q; want %q", len(order), m["id"], got, want)
		}
		turn = nil
	}
	for i, id := range ids {
		if i >= len(order) || order[i] != id {
			t.Fatalf("answers came in the order %v; prompts were sent as %v", order, ids)
		}
	}
}
