package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry/agentry/tests/acpclient"
)

// agent-host --acp --backend acp: what the agent behind it does reaches
// the editor as the agent said it, and what agentry enforces reaches it
// in words the editor can read.

// The tripwire: an edit the agent ran unasked at level 1 ends the prompt
// with a JSON-RPC error whose data names level_violated and the reason,
// and the call is shown failed.
func TestACPAgentTripwireReachesEditor(t *testing.T) {
	c := startACP(t, fakeACPAgent(t)...)
	work := t.TempDir()
	s := c.NewSession(work)
	if _, r := c.Call("session/set_mode", map[string]any{"sessionId": s, "modeId": "level-1"}); r.Error != nil {
		t.Fatal(r.Error.Message)
	}
	evs, res := c.Call("session/prompt", acpclient.Prompt(s, "SNEAK sneaked.txt"))
	if res.Error == nil {
		t.Fatalf("the prompt answered %s, not an error", res.Result)
	}
	var data struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(res.Error.Data, &data)
	if data.Code != "level_violated" || !strings.Contains(data.Message, "without asking: level 1 does not allow it") ||
		!strings.Contains(res.Error.Message, "without asking") {
		t.Errorf("error %d %q data %s: want data.code level_violated and the reason", *res.Error.Code, res.Error.Message, res.Error.Data)
	}
	var failed bool
	for _, ev := range evs {
		if ev.Event == "update" && ev.Update.ToolCallID == "t1" && ev.Update.Status == "failed" {
			failed = true
		}
	}
	if !failed {
		t.Errorf("the call that tripped the wire was not shown failed: %v", acpclient.Kinds(evs))
	}
	// The next prompt starts the agent again and goes on.
	if _, res := c.Call("session/prompt", acpclient.Prompt(s, "SAY again")); acpclient.StopReason(res) != "end_turn" {
		t.Errorf("the next prompt: %s", acpclient.StopReason(res))
	}
	_ = os.Remove(filepath.Join(work, "sneaked.txt"))
}
