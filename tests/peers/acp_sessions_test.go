package peers

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentry/agentry/tests/acpclient"
)

// agent-host --acp --backend acp in front of claude-agent-acp: session/list
// is the adapter's own (its titles, from claude's session files), a
// session opened here listed under the editor's id; a later agent-host,
// which kept nothing, lists the adapter's id, and session/resume takes it
// up (no replay), the next turn remembering.
func TestACPProxyClaudeSessions(t *testing.T) {
	need(t)
	sdk := acpclient.SDK()
	if sdk == "" {
		t.Skip("no ACP SDK in $AGENTRY_PEERS/acp")
	}
	api := fakeAnthropic(t)
	env := append(withoutEnv(claudeEnv(t, api), "IS_SANDBOX"), "CLAUDE_CODE_EXECUTABLE="+claudeBin)
	argv := []string{hostBin(), "--acp", "--backend", "acp", "--", "node", acpAdapter(t, "@zed-industries/claude-agent-acp/dist/index.js")}
	type listed struct {
		SessionID string `json:"sessionId"`
		Title     string `json:"title"`
		Cwd       string `json:"cwd"`
	}
	list := func(c *acpclient.Client, cwd string) []listed {
		t.Helper()
		_, res := c.Call("session/list", map[string]any{"cwd": cwd})
		var r struct {
			Sessions []listed `json:"sessions"`
		}
		if res.Error != nil || json.Unmarshal(res.Result, &r) != nil {
			t.Fatalf("session/list: %+v %s", res.Error, res.Result)
		}
		return r.Sessions
	}
	initialize := func(c *acpclient.Client) {
		t.Helper()
		_, res := c.Call("initialize", map[string]any{"protocolVersion": 1})
		var r struct {
			AgentCapabilities struct {
				SessionCapabilities struct {
					List   *struct{} `json:"list"`
					Resume *struct{} `json:"resume"`
				} `json:"sessionCapabilities"`
			} `json:"agentCapabilities"`
		}
		if res.Error != nil || json.Unmarshal(res.Result, &r) != nil {
			t.Fatalf("initialize: %+v", res.Error)
		}
		if sc := r.AgentCapabilities.SessionCapabilities; sc.List == nil || sc.Resume == nil {
			t.Errorf("agent-host does not say it lists and resumes, as claude-agent-acp does: %s", res.Result)
		}
	}

	c := acpclient.Start(t, sdk, append(env, "XDG_STATE_HOME="+t.TempDir()), t.TempDir(), argv...)
	initialize(c)
	work := t.TempDir()
	_, res := c.Call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})
	var ns struct {
		SessionID string `json:"sessionId"`
	}
	if res.Error != nil || json.Unmarshal(res.Result, &ns) != nil {
		t.Fatalf("session/new: %+v", res.Error)
	}
	if evs, res := c.Call("session/prompt", acpclient.Prompt(ns.SessionID, "SAY ACP-LISTED-ANSWER")); acpclient.StopReason(res) != "end_turn" {
		t.Fatalf("prompt: %s %v", acpclient.StopReason(res), acpclient.Kinds(evs))
	}
	got := list(c, work)
	if len(got) != 1 || got[0].SessionID != ns.SessionID || !strings.Contains(got[0].Title, "ACP-LISTED-ANSWER") {
		t.Fatalf("session/list: %+v; want claude-agent-acp's one session, under %s", got, ns.SessionID)
	}
	c.End()

	c = acpclient.Start(t, sdk, append(env, "XDG_STATE_HOME="+t.TempDir()), t.TempDir(), argv...)
	initialize(c)
	got = list(c, work)
	if len(got) != 1 || got[0].SessionID == ns.SessionID {
		t.Fatalf("session/list from an agent-host that kept nothing: %+v; want the adapter's id", got)
	}
	id := got[0].SessionID
	evs, res := c.Call("session/resume", map[string]any{"sessionId": id, "cwd": work, "mcpServers": []any{}})
	if res.Error != nil || acpclient.Text(evs) != "" {
		t.Fatalf("session/resume %s: %+v, replayed %q", id, res.Error, acpclient.Text(evs))
	}
	evs, res = c.Call("session/prompt", acpclient.Prompt(id, "RECALL"))
	if got := acpclient.Text(evs); !strings.HasSuffix(got, "SAY ACP-LISTED-ANSWER") {
		t.Errorf("the resumed session's next turn: %q, %s", got, acpclient.StopReason(res))
	}
	c.End()
}
