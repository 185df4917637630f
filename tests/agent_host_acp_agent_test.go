package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
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

// startACPEnv is startACP with more of the environment (the agent's).
func startACPEnv(t *testing.T, env []string, args ...string) *acpclient.Client {
	all := append(append(os.Environ(), "XDG_STATE_HOME="+t.TempDir()), env...)
	return acpclient.Start(t, sdk(t), all, t.TempDir(), append([]string{filepath.Join(binDir, "agent-host"), "--acp"}, args...)...)
}

// agentCaps initializes and returns what agent-host said it can do.
func agentCaps(t *testing.T, c *acpclient.Client) (caps struct {
	LoadSession         bool `json:"loadSession"`
	SessionCapabilities struct {
		List   *struct{} `json:"list"`
		Resume *struct{} `json:"resume"`
	} `json:"sessionCapabilities"`
	PromptCapabilities struct {
		Image           bool `json:"image"`
		EmbeddedContext bool `json:"embeddedContext"`
	} `json:"promptCapabilities"`
}) {
	t.Helper()
	_, res := c.Call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	var r struct {
		AgentCapabilities json.RawMessage `json:"agentCapabilities"`
	}
	if res.Error != nil || json.Unmarshal(res.Result, &r) != nil || json.Unmarshal(r.AgentCapabilities, &caps) != nil {
		t.Fatalf("initialize: %+v %s", res.Error, res.Result)
	}
	return caps
}

type listed struct {
	SessionID string          `json:"sessionId"`
	Title     string          `json:"title"`
	Cwd       string          `json:"cwd"`
	Meta      json.RawMessage `json:"_meta"`
}

func listSessions(t *testing.T, c *acpclient.Client) []listed {
	t.Helper()
	_, res := c.Call("session/list", map[string]any{})
	var r struct {
		Sessions []listed `json:"sessions"`
	}
	if res.Error != nil || json.Unmarshal(res.Result, &r) != nil {
		t.Fatalf("session/list: %+v %s", res.Error, res.Result)
	}
	return r.Sessions
}

// session/list, session/load and session/resume go to the agent, which
// says it offers them: the sessions listed are the agent's own (its
// titles, its fields), a session opened here listed under its id here,
// and one of the agent's taken up by a later agent-host under the
// agent's id, replayed by load, not by resume.
func TestACPAgentSessionsPassedThrough(t *testing.T) {
	reg := filepath.Join(t.TempDir(), "sessions.jsonl")
	work := t.TempDir()
	env := []string{"FAKEACP_SESSIONS=" + reg}
	c := startACPEnv(t, env, fakeACPAgent(t)...)
	caps := agentCaps(t, c)
	if !caps.LoadSession || caps.SessionCapabilities.List == nil || caps.SessionCapabilities.Resume == nil {
		t.Errorf("agent-host did not say it loads, lists and resumes sessions, as the agent does: %+v", caps)
	}
	_, res := c.Call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})
	var ns struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(res.Result, &ns)
	if _, res := c.Call("session/prompt", acpclient.Prompt(ns.SessionID, "SAY hi")); acpclient.StopReason(res) != "end_turn" {
		t.Fatalf("prompt: %s", acpclient.StopReason(res))
	}
	got := listSessions(t, c)
	if len(got) != 1 || got[0].SessionID != ns.SessionID || !strings.HasPrefix(got[0].Title, "fake session sess-") ||
		string(got[0].Meta) != `{"fake":true}` {
		t.Fatalf("session/list: %+v; want the agent's one session, under id %s", got, ns.SessionID)
	}
	agentID := strings.TrimPrefix(got[0].Title, "fake session ")
	c.End()

	// A later agent-host, which kept nothing: the agent's id.
	c2 := startACPEnv(t, env, fakeACPAgent(t)...)
	agentCaps(t, c2)
	if got := listSessions(t, c2); len(got) != 1 || got[0].SessionID != agentID {
		t.Fatalf("session/list from a new agent-host: %+v; want %s", got, agentID)
	}
	evs, res := c2.Call("session/load", map[string]any{"sessionId": agentID, "cwd": work, "mcpServers": []any{}})
	if res.Error != nil || !strings.Contains(acpclient.Text(evs), "earlier answer") {
		t.Fatalf("session/load: %+v, replayed %q", res.Error, acpclient.Text(evs))
	}
	if _, res := c2.Call("session/prompt", acpclient.Prompt(agentID, "SAY more")); acpclient.StopReason(res) != "end_turn" {
		t.Fatalf("prompt after load: %s", acpclient.StopReason(res))
	}
	c2.End()

	c3 := startACPEnv(t, env, fakeACPAgent(t)...)
	agentCaps(t, c3)
	evs, res = c3.Call("session/resume", map[string]any{"sessionId": agentID, "cwd": work, "mcpServers": []any{}})
	if res.Error != nil || acpclient.Text(evs) != "" {
		t.Fatalf("session/resume: %+v, replayed %q", res.Error, acpclient.Text(evs))
	}
	if _, res := c3.Call("session/prompt", acpclient.Prompt(agentID, "SAY again")); acpclient.StopReason(res) != "end_turn" {
		t.Fatalf("prompt after resume: %s", acpclient.StopReason(res))
	}
	c3.End()
	log, _ := os.ReadFile(filepath.Join(work, "turns.log"))
	for _, want := range []string{"loaded " + agentID + "\n", "resumed " + agentID + "\n", "turn 1 session " + agentID + "\n"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("turns.log has no %q:\n%s", want, log)
		}
	}
}

// An agent that offers none of them: agent-host says so at initialize,
// and refuses each, naming what the agent's initialize lacked.
func TestACPAgentSessionsRefused(t *testing.T) {
	c := startACPEnv(t, []string{"FAKEACP_NOLOAD=1", "FAKEACP_NOLIST=1"}, fakeACPAgent(t)...)
	caps := agentCaps(t, c)
	if caps.LoadSession || caps.SessionCapabilities.List != nil || caps.SessionCapabilities.Resume != nil {
		t.Errorf("agent-host says it can what the agent cannot: %+v", caps)
	}
	for method, want := range map[string]string{"session/list": "sessionCapabilities.list", "session/load": "agentCapabilities.loadSession",
		"session/resume": "sessionCapabilities.resume"} {
		_, res := c.Call(method, map[string]any{"sessionId": "sess-1", "cwd": t.TempDir(), "mcpServers": []any{}})
		if res.Error == nil || res.Error.Code == nil || *res.Error.Code != -32601 || !strings.Contains(res.Error.Message, want) {
			t.Errorf("%s: %+v %s; want -32601 naming %s", method, res.Error, res.Result, want)
		}
	}
}

// A plan, slash commands and a tool call with its diff reach the editor
// as the agent sent them: every field, _meta, priorities and hints
// included (only the notification's sessionId is agent-host's).
func TestACPAgentUpdatesUnchanged(t *testing.T) {
	sentFile := filepath.Join(t.TempDir(), "sent.jsonl")
	c := startACPEnv(t, []string{"FAKEACP_SENT=" + sentFile}, fakeACPAgent(t)...)
	work := t.TempDir()
	s := c.NewSession(work)
	evs, res := c.Call("session/prompt", acpclient.Prompt(s, "PLAN\nCOMMANDS\nDIFF new.txt"))
	if acpclient.StopReason(res) != "end_turn" {
		t.Fatalf("prompt: %s", acpclient.StopReason(res))
	}
	if b, err := os.ReadFile(filepath.Join(work, "new.txt")); err != nil || string(b) != "new\n" {
		t.Errorf("the edit was not made: %q %v", b, err)
	}
	var got []any
	for _, ev := range evs {
		if ev.Event == "update" {
			if ev.SessionID != s {
				t.Errorf("an update for session %q, not %q", ev.SessionID, s)
			}
			var v any
			_ = json.Unmarshal(ev.UpdateRaw, &v)
			got = append(got, v)
		}
	}
	b, err := os.ReadFile(sentFile)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var sent map[string]any
		if err := json.Unmarshal([]byte(line), &sent); err != nil {
			t.Fatal(err)
		}
		switch sent["sessionUpdate"] {
		case "plan", "available_commands_update", "tool_call", "tool_call_update":
		default:
			continue
		}
		n++
		found := false
		for _, g := range got {
			found = found || reflect.DeepEqual(g, any(sent))
		}
		if !found {
			t.Errorf("the editor never got, unchanged, the agent's\n%s\nit got:", line)
			for _, ev := range evs {
				t.Logf("%s", ev.UpdateRaw)
			}
		}
	}
	if n != 4 {
		t.Errorf("the agent sent %d of the updates looked for, not 4", n)
	}
}

// A tiny PNG, base64.
const tinyPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

// Images, embedded resources and resource links reach the agent as the
// editor sent them, where the agent's promptCapabilities take them.
func TestACPAgentPromptContentPassed(t *testing.T) {
	prompts := filepath.Join(t.TempDir(), "prompts.jsonl")
	c := startACPEnv(t, []string{"FAKEACP_PROMPTS=" + prompts, "FAKEACP_PROMPTCAPS=image,embeddedContext"}, fakeACPAgent(t)...)
	caps := agentCaps(t, c)
	if !caps.PromptCapabilities.Image || !caps.PromptCapabilities.EmbeddedContext {
		t.Errorf("agent-host does not say it takes what the agent takes: %+v", caps.PromptCapabilities)
	}
	_, res := c.Call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})
	var ns struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(res.Result, &ns)
	blocks := []any{
		map[string]any{"type": "text", "text": "SAY seen"},
		map[string]any{"type": "image", "mimeType": "image/png", "data": tinyPNG},
		map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///src/main.go", "mimeType": "text/x-go", "text": "package main\n"}},
		map[string]any{"type": "resource_link", "uri": "file:///src/util.go", "name": "util.go"},
	}
	if _, res := c.Call("session/prompt", map[string]any{"sessionId": ns.SessionID, "prompt": blocks}); acpclient.StopReason(res) != "end_turn" {
		t.Fatalf("prompt: %s", acpclient.StopReason(res))
	}
	b, err := os.ReadFile(prompts)
	if err != nil {
		t.Fatal(err)
	}
	var got, want []any
	_ = json.Unmarshal(b, &got)
	wb, _ := json.Marshal(blocks)
	_ = json.Unmarshal(wb, &want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the agent got\n%s\nnot\n%s", b, wb)
	}
}

// Where the agent's promptCapabilities do not take them, an image and an
// embedded resource are refused with -32602 naming the capability; a
// resource link, which every agent takes, goes.
func TestACPAgentPromptContentRefused(t *testing.T) {
	c := startACPEnv(t, nil, fakeACPAgent(t)...)
	caps := agentCaps(t, c)
	if caps.PromptCapabilities.Image || caps.PromptCapabilities.EmbeddedContext {
		t.Errorf("agent-host says it takes what the agent does not: %+v", caps.PromptCapabilities)
	}
	_, res := c.Call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})
	var ns struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(res.Result, &ns)
	for capability, block := range map[string]any{
		"promptCapabilities.image":           map[string]any{"type": "image", "mimeType": "image/png", "data": tinyPNG},
		"promptCapabilities.embeddedContext": map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///a", "text": "a"}},
	} {
		_, res := c.Call("session/prompt", map[string]any{"sessionId": ns.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "SAY x"}, block}})
		if res.Error == nil || *res.Error.Code != -32602 || !strings.Contains(res.Error.Message, capability) {
			t.Errorf("%s: %+v %s; want -32602 naming it", capability, res.Error, res.Result)
		}
	}
	link := map[string]any{"type": "resource_link", "uri": "file:///src/util.go", "name": "util.go"}
	if _, res := c.Call("session/prompt", map[string]any{"sessionId": ns.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "SAY x"}, link}}); acpclient.StopReason(res) != "end_turn" {
		t.Errorf("a resource link: %s", acpclient.StopReason(res))
	}
}

// A permission an ACP agent asks is put to the editor with the tool call
// the agent sent, every field kept: before, the editor got agentry's own
// tool call with the agent's whole call nested in its rawInput.
func TestACPAgentPermissionAsSent(t *testing.T) {
	c := startACPEnv(t, []string{"FAKEACP_META=1"}, fakeACPAgent(t)...)
	work := t.TempDir()
	s := c.NewSession(work)
	if _, r := c.Call("session/set_mode", map[string]any{"sessionId": s, "modeId": "level-1-ask"}); r.Error != nil {
		t.Fatal(r.Error.Message)
	}
	c.Permission("reject")
	evs, res := c.Call("session/prompt", acpclient.Prompt(s, "WRITE asked.txt"))
	if acpclient.StopReason(res) != "end_turn" {
		t.Fatalf("prompt: %s", acpclient.StopReason(res))
	}
	want := map[string]any{"toolCallId": "t1", "title": "write asked.txt", "kind": "edit", "status": "pending",
		"locations": []any{map[string]any{"path": filepath.Join(work, "asked.txt")}},
		"_meta":     map[string]any{"fake": map[string]any{"asked": "write asked.txt"}}}
	n := 0
	for _, ev := range evs {
		if ev.Event != "permission" {
			continue
		}
		n++
		var p struct {
			SessionID string         `json:"sessionId"`
			ToolCall  map[string]any `json:"toolCall"`
			Options   []any          `json:"options"`
		}
		if err := json.Unmarshal(ev.Params, &p); err != nil {
			t.Fatal(err)
		}
		if p.SessionID != s || !reflect.DeepEqual(p.ToolCall, want) || len(p.Options) == 0 {
			t.Errorf("the editor was asked with\n%s\nnot the agent's tool call\n%v", ev.Params, want)
		}
	}
	if n != 1 {
		t.Errorf("%d permission requests reached the editor, not 1: %v", n, acpclient.Kinds(evs))
	}
	if _, err := os.Stat(filepath.Join(work, "asked.txt")); err == nil {
		t.Error("the rejected write was made")
	}
}
