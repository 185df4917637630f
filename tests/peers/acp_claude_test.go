package peers

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/tests/acpclient"
)

// The promises of agent-host-acp(7) that the claude backend keeps, each
// against the real pinned CLI behind the fake Anthropic API (issue 47).

// claudeACP runs agent-host --acp --backend claude with the flags given,
// under the official SDK's client, initialized.
func claudeACP(t *testing.T, flags ...string) (*acpclient.Client, *server) {
	t.Helper()
	need(t)
	sdk := acpclient.SDK()
	if sdk == "" {
		t.Fatal("no @agentclientprotocol/sdk in $AGENTRY_PEERS/acp (tests/peers/install.sh installs it) or no node")
	}
	api := fakeAnthropic(t)
	env := append(claudeEnv(t, api), "AGENT_HOST_CLAUDE_BIN="+claudeBin, "XDG_STATE_HOME="+t.TempDir())
	hostBin := filepath.Join(filepath.Dir(runagentBin), "agent-host")
	argv := append([]string{hostBin, "--acp", "--backend", "claude", "--interrupt-grace", "5s"}, flags...)
	c := acpclient.Start(t, sdk, env, t.TempDir(), argv...)
	if _, init := c.Call("initialize", map[string]any{"protocolVersion": 1}); init.Error != nil {
		t.Fatalf("initialize: %s", init.Error.Message)
	}
	return c, api
}

// newACPSession opens a session in a directory of its own.
func newACPSession(t *testing.T, c *acpclient.Client) (string, string) {
	t.Helper()
	work := t.TempDir()
	_, res := c.Call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})
	id := sessionIDOf(t, res)
	return id, work
}

func sessionIDOf(t *testing.T, res acpclient.Event) string {
	t.Helper()
	if res.Error != nil {
		t.Fatalf("%s", res.Error.Message)
	}
	var s struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(res.Result, &s)
	if s.SessionID == "" {
		t.Fatalf("no sessionId in %s", res.Result)
	}
	return s.SessionID
}

// cmdlineHas: the descendants of pid whose command line holds s.
func cmdlineHas(pid int, s string) []int {
	var out []int
	for _, p := range proc.Descendants(pid) {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "cmdline"))
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), s) {
			out = append(out, p)
		}
	}
	return out
}

// The end of input mid-turn is the editor's stop (endOfInputMidTurn).
func TestACPClaudeEndOfInputMidTurn(t *testing.T) {
	c, _ := claudeACP(t)
	s, work := newACPSession(t, c)
	endOfInputMidTurn(t, c, s, work,
		`CALL Bash {"command":"python3 -c 'import time; time.sleep(4.0417)' && touch late.txt","description":"wait"}`, "time.sleep(4.0417)")
}

// claudePIDs are the claude CLIs under agent-host.
func claudePIDs(c *acpclient.Client) []int {
	var out []int
	for _, p := range proc.Descendants(c.PID) {
		if exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(p), "exe")); err == nil && exe == claudeBin {
			out = append(out, p)
		}
	}
	return out
}

func asked(evs []acpclient.Event) bool {
	for _, ev := range evs {
		if ev.Event == "permission" {
			return true
		}
	}
	return false
}

// A command allowed for the session (allow_always) is not asked again
// after the mode is changed away and back, though the change started the
// CLI again (twice); and a change to a mode of the same grant (level 3 is
// level 2's) keeps the CLI, and so what it was allowed
// (allowAlwaysSurvivesModes).
func TestACPClaudeAllowAlwaysSurvivesModes(t *testing.T) {
	c, _ := claudeACP(t)
	s, work := newACPSession(t, c)
	allowAlwaysSurvivesModes(t, c, s, work, writeCall, func() []int { return claudePIDs(c) }, true)
}

// session/new starts the session's CLI in the background, so that the
// first prompt finds it ready (the same process answers it), and
// session/new itself stays quick.
func TestACPClaudeStartsAtSessionNew(t *testing.T) {
	c, _ := claudeACP(t)
	began := time.Now()
	s, _ := newACPSession(t, c)
	took := time.Since(began)
	t.Logf("session/new answered in %v", took)
	if took > time.Second {
		t.Errorf("session/new took %v", took)
	}
	var before []int
	if !await.Until(20*time.Second, func() bool { before = claudePIDs(c); return len(before) == 1 }) {
		t.Fatalf("no CLI under agent-host before the first prompt: %v", before)
	}
	sent := time.Now()
	tag := c.Send("session/prompt", acpclient.Prompt(s, "SAY ready"))
	first := c.Until(func(ev acpclient.Event) bool {
		return ev.Update.SessionUpdate == "agent_message_chunk" || ev.Tag == tag
	})
	t.Logf("the first chunk of turn 1 came %v after the prompt", time.Since(sent))
	evs := first
	if first[len(first)-1].Tag != tag {
		evs = append(evs, c.Wait(tag)...)
	}
	if got := acpclient.Text(evs); got != "ready" {
		t.Errorf("said %q: %v", got, acpclient.Kinds(evs))
	}
	if after := claudePIDs(c); len(after) != 1 || after[0] != before[0] {
		t.Errorf("the first prompt started another CLI: %v, then %v", before, after)
	}
	c.End()
}

// An idle session's CLI is stopped after the idle time (a session never
// prompted included), and its next prompt starts it again, resumed: the
// model sees the session's history.
func TestACPClaudeIdleStop(t *testing.T) {
	c, _ := claudeACP(t, "--idle-stop", "2s")
	s, _ := newACPSession(t, c)
	newACPSession(t, c) // never prompted
	if _, res := c.Call("session/prompt", acpclient.Prompt(s, "SAY first words")); acpclient.StopReason(res) != "end_turn" {
		t.Fatalf("the first turn: %s", acpclient.StopReason(res))
	}
	began := time.Now()
	var left []int
	if !await.Until(20*time.Second, func() bool { left = claudePIDs(c); return len(left) == 0 }) {
		t.Fatalf("%d CLIs still run 20 s after the last turn, the idle time being 2 s: %v", len(left), left)
	}
	t.Logf("every CLI stopped %v after the last turn (idle time 2 s)", time.Since(began))
	evs, res := c.Call("session/prompt", acpclient.Prompt(s, "RECALL"))
	if got := acpclient.Text(evs); !strings.HasSuffix(got, "SAY first words") || acpclient.StopReason(res) != "end_turn" {
		t.Errorf("the turn after the idle stop: %q, %s (the session not resumed?)", got, acpclient.StopReason(res))
	}
	if n := len(claudePIDs(c)); n != 1 {
		t.Errorf("%d CLIs after the prompt, want the one resumed", n)
	}
	c.End()
}

// The first prompt titles the session, and the editor is told at once
// (session_info_update), as session/list then has it.
func TestACPClaudeTitle(t *testing.T) {
	c, _ := claudeACP(t)
	s, work := newACPSession(t, c)
	evs, res := c.Call("session/prompt", acpclient.Prompt(s, "SAY titled\nsecond line"))
	if acpclient.StopReason(res) != "end_turn" {
		t.Fatalf("the turn: %s", acpclient.StopReason(res))
	}
	var titles []string
	for _, ev := range evs {
		if ev.Update.SessionUpdate == "session_info_update" {
			titles = append(titles, ev.Update.Title)
		}
	}
	if len(titles) != 1 || titles[0] != "SAY titled" {
		t.Errorf("session_info_update titles %q: %v", titles, acpclient.Kinds(evs))
	}
	if _, list := c.Call("session/list", map[string]any{"cwd": work}); !strings.Contains(string(list.Result), `"title":"SAY titled"`) {
		t.Errorf("session/list: %s", list.Result)
	}
	c.End()
}

// session/delete takes a session out of session/list, here and for the
// next agent-host, which can no longer load it.
func TestACPClaudeDelete(t *testing.T) {
	need(t)
	api := fakeAnthropic(t)
	env := append(claudeEnv(t, api), "AGENT_HOST_CLAUDE_BIN="+claudeBin, "XDG_STATE_HOME="+t.TempDir())
	p := acpPeer{backend: "claude", env: env}
	c, s, work := startACPPeer(t, p)
	keep, _ := newACPSession(t, c)
	for _, id := range []string{s, keep} {
		if _, res := c.Call("session/prompt", acpclient.Prompt(id, "SAY hello")); acpclient.StopReason(res) != "end_turn" {
			t.Fatalf("the turn: %s", acpclient.StopReason(res))
		}
	}
	if _, res := c.Call("session/delete", map[string]any{"sessionId": s}); res.Error != nil {
		t.Fatalf("session/delete: %s", res.Error.Message)
	}
	if _, list := c.Call("session/list", map[string]any{}); strings.Contains(string(list.Result), s) || !strings.Contains(string(list.Result), keep) {
		t.Errorf("session/list after deleting %s: %s", s, list.Result)
	}
	c.End()
	c = runACPPeer(t, p)
	c.Call("initialize", map[string]any{"protocolVersion": 1})
	if _, list := c.Call("session/list", map[string]any{}); strings.Contains(string(list.Result), s) || !strings.Contains(string(list.Result), keep) {
		t.Errorf("the next agent-host's session/list: %s", list.Result)
	}
	if _, res := c.Call("session/load", map[string]any{"sessionId": s, "cwd": work, "mcpServers": []any{}}); res.Error == nil {
		t.Error("the next agent-host loaded the deleted session")
	}
	c.End()
}

// additionalDirectories are claude's --add-dir: the CLI works in them as
// in its cwd, and tells the model so (its system prompt names them); a
// session without them does not.
func TestACPClaudeAdditionalDirectories(t *testing.T) {
	c, api := claudeACP(t)
	extra := t.TempDir()
	told := func(t *testing.T, dirs []string) bool {
		t.Helper()
		_, res := c.Call("session/new", map[string]any{"cwd": t.TempDir(), "additionalDirectories": dirs, "mcpServers": []any{}})
		s := sessionIDOf(t, res)
		if _, done := c.Call("session/prompt", acpclient.Prompt(s, "SAY hi")); acpclient.StopReason(done) != "end_turn" {
			t.Fatalf("the turn: %s", acpclient.StopReason(done))
		}
		api.mu.Lock()
		defer api.mu.Unlock()
		return strings.Contains(api.bodies[len(api.bodies)-1], extra)
	}
	if !told(t, []string{extra}) {
		t.Errorf("the model was not told of the additional directory %s", extra)
	}
	if told(t, []string{}) {
		t.Errorf("a session without additional directories was given %s", extra)
	}
	c.End()
}

// session/fork is claude's --resume ID --fork-session: the fork has the
// session's history, and what is said in it stays out of the session
// forked from.
func TestACPClaudeFork(t *testing.T) {
	c, api := claudeACP(t)
	s, work := newACPSession(t, c)
	if _, res := c.Call("session/prompt", acpclient.Prompt(s, "SAY first words")); acpclient.StopReason(res) != "end_turn" {
		t.Fatalf("the first turn: %s", acpclient.StopReason(res))
	}
	_, res := c.Call("session/fork", map[string]any{"sessionId": s, "cwd": work, "mcpServers": []any{}})
	fork := sessionIDOf(t, res)
	if fork == s {
		t.Fatalf("the fork is the session itself")
	}
	evs, res := c.Call("session/prompt", acpclient.Prompt(fork, "RECALL FORKED-ONLY"))
	if got := acpclient.Text(evs); !strings.HasSuffix(got, "SAY first words") || acpclient.StopReason(res) != "end_turn" {
		t.Errorf("the fork's turn: %q, %s (no history?)", got, acpclient.StopReason(res))
	}
	if _, res := c.Call("session/prompt", acpclient.Prompt(s, "SAY again")); acpclient.StopReason(res) != "end_turn" {
		t.Fatalf("the session's turn after the fork: %s", acpclient.StopReason(res))
	}
	api.mu.Lock()
	last := api.bodies[len(api.bodies)-1]
	api.mu.Unlock()
	if !strings.Contains(last, "SAY first words") || strings.Contains(last, "FORKED-ONLY") {
		t.Errorf("the session forked from: history kept %v, the fork's words in it %v",
			strings.Contains(last, "SAY first words"), strings.Contains(last, "FORKED-ONLY"))
	}
	c.End()
}

// A model picked for the session reaches the model API from the next turn,
// though its CLI was started (at session/new) with the default one: the
// CLI is started again with --model, the session resumed.
func TestACPClaudeModel(t *testing.T) {
	c, api := claudeACP(t, "--config", `{"claude":{"models":[{"id":"claude-test-model-1","name":"Test"}]}}`)
	s, _ := newACPSession(t, c)
	model := func(t *testing.T, prompt string) string {
		t.Helper()
		if _, res := c.Call("session/prompt", acpclient.Prompt(s, prompt)); acpclient.StopReason(res) != "end_turn" {
			t.Fatalf("the turn: %s", acpclient.StopReason(res))
		}
		api.mu.Lock()
		defer api.mu.Unlock()
		var body struct {
			Model string `json:"model"`
		}
		_ = json.Unmarshal([]byte(api.bodies[len(api.bodies)-1]), &body)
		return body.Model
	}
	first := model(t, "SAY one")
	if _, res := c.Call("session/set_config_option", map[string]any{"sessionId": s, "configId": "model", "value": "claude-test-model-1"}); res.Error != nil {
		t.Fatalf("set model: %s", res.Error.Message)
	}
	if got := model(t, "SAY two"); got != "claude-test-model-1" {
		t.Errorf("the turn after picking claude-test-model-1 asked for %q (before: %q)", got, first)
	}
	c.End()
}
