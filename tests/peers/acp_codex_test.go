package peers

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/tests/acpclient"
)

func codexPeer(t *testing.T) acpPeer {
	api := fakeOpenAI(t)
	return acpPeer{backend: "codex", env: append(codexEnv(t, api), "AGENT_HOST_CODEX_BIN="+codexBin)}
}

// toolCallIDs are the ids of the tool calls among evs, in order.
func toolCallIDs(evs []acpclient.Event) []string {
	var ids []string
	for _, ev := range evs {
		if ev.Update.SessionUpdate == "tool_call" {
			ids = append(ids, ev.Update.ToolCallID)
		}
	}
	return ids
}

// finals counts each call's final statuses (completed or failed) among evs.
func finals(evs []acpclient.Event) map[string][]string {
	out := map[string][]string{}
	for _, ev := range evs {
		u := ev.Update
		if u.SessionUpdate == "tool_call_update" && (u.Status == "completed" || u.Status == "failed") {
			out[u.ToolCallID] = append(out[u.ToolCallID], u.Status)
		}
	}
	return out
}

// A cancel while an allowed command runs (asked and allowed, or run
// unasked at level 2) stops it: within 3 s no sleep is left and its file
// is never written, the call ends failed exactly once before the answer;
// and session/load after a restart replays every call under the id it had
// live (issue 47 items 1, 2 and 4).
func TestACPCodexCancelStopsCommand(t *testing.T) {
	need(t)
	p := codexPeer(t)
	c, s, work := startACPPeer(t, p)
	var live []string

	setMode(t, c, s, "level-2")
	evs, _ := c.Call("session/prompt", acpclient.Prompt(s, `CALL exec_command {"cmd":"echo ran-it"}`))
	live = append(live, toolCallIDs(evs)...)
	setMode(t, c, s, "level-2-ask")
	c.Permission("reject")
	evs, _ = c.Call("session/prompt", acpclient.Prompt(s, `CALL exec_command {"cmd":"echo no > out.txt"}`))
	live = append(live, toolCallIDs(evs)...)

	for i, mode := range []string{"level-2-ask", "level-2"} {
		t.Run(mode, func(t *testing.T) {
			setMode(t, c, s, mode)
			c.Permission("allow")
			late := filepath.Join(work, fmt.Sprintf("late%d.txt", i))
			secs := fmt.Sprintf("4.81%d", i)
			tag := c.Send("session/prompt", acpclient.Prompt(s, fmt.Sprintf(`CALL exec_command {"cmd":"sleep %s; touch %s"}`, secs, filepath.Base(late))))
			sleeping := func() bool {
				return len(procsWhere("cmdline", func(f []string) bool { return len(f) > 1 && f[0] == "sleep" && f[1] == secs })) > 0
			}
			// The editor cancels a call it has been shown running, as a
			// person does; a cancel in the instant between the command's
			// start and codex's report of it is another case.
			shown := c.Until(func(ev acpclient.Event) bool { return ev.Tag == tag || ev.Update.SessionUpdate == "tool_call" })
			if shown[len(shown)-1].Tag == tag {
				t.Fatalf("the turn ended before its call was shown: %v", acpclient.Kinds(shown))
			}
			if !await.Until(30*time.Second, sleeping) {
				c.Notify("session/cancel", map[string]any{"sessionId": s})
				t.Fatalf("the command never started: %v", acpclient.Kinds(c.Wait(tag)))
			}
			started := time.Now()
			c.Notify("session/cancel", map[string]any{"sessionId": s})
			evs := append(shown, c.Wait(tag)...)
			t.Logf("cancelled answered %v after the cancel", time.Since(started))
			if r := acpclient.StopReason(evs[len(evs)-1]); r != "cancelled" {
				t.Errorf("the turn ended %s", r)
			}
			if !await.Until(3*time.Second, func() bool { return !sleeping() }) {
				t.Error("the cancelled turn's sleep is still running 3 s after the cancel")
			}
			// The command, left alone, would have written its file 4.8 s
			// after it started.
			if await.Until(time.Until(started.Add(6*time.Second)), func() bool { _, err := os.Stat(late); return err == nil }) {
				t.Error("the cancelled command went on to write its file")
			}
			ids := toolCallIDs(evs)
			live = append(live, ids...)
			if f := finals(evs); len(ids) != 1 || !slices.Equal(f[ids[0]], []string{"failed"}) {
				t.Errorf("the cut call's final statuses %v (calls %v): %v", f, ids, acpclient.Kinds(evs))
			}
		})
	}
	c.End()

	c = runACPPeer(t, p)
	c.Call("initialize", map[string]any{"protocolVersion": 1})
	evs, res := c.Call("session/load", map[string]any{"sessionId": s, "cwd": work, "mcpServers": []any{}})
	if res.Error != nil {
		t.Fatalf("session/load: %s", res.Error.Message)
	}
	replayed := toolCallIDs(evs)
	if len(live) != 4 || !slices.Equal(replayed, live) {
		t.Errorf("tool call ids live %v, replayed %v", live, replayed)
	}
	seen := map[string]bool{}
	for _, id := range replayed {
		if seen[id] {
			t.Errorf("replayed id %s twice", id)
		}
		seen[id] = true
	}
	c.End()
}

// codexTree is agent-host's descendants that are codex's own processes,
// and the tree's resident memory, in MB.
func codexTree(pid int) (codex []int, rssMB float64) {
	for _, p := range append([]int{pid}, proc.Descendants(pid)...) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseFloat(f[1], 64)
				rssMB += kb / 1024
			}
		}
		if in, err := proc.Stat(p); err == nil && p != pid && strings.HasPrefix(in.Comm, "codex") {
			codex = append(codex, p)
		}
	}
	return codex, rssMB
}

// One codex app-server serves every session of an agent-host: it starts
// at initialize, before any prompt; sessions never prompted cost no
// process; 12 sessions prompted are 12 threads on it, each with its own
// history (issue 47 item 6 and turn 1).
func TestACPCodexSharedServer(t *testing.T) {
	need(t)
	c, first, work := startACPPeer(t, codexPeer(t))
	one := func() bool { n, _ := codexTree(c.PID); return len(n) == 1 }
	if !await.Until(30*time.Second, one) {
		n, _ := codexTree(c.PID)
		t.Errorf("no app-server ready before the first prompt: codex processes %v", n)
	}
	sessions := []string{first}
	for len(sessions) < 12 {
		_, res := c.Call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})
		id, _, _ := strings.Cut(strings.TrimPrefix(string(res.Result), `{"sessionId":"`), `"`)
		sessions = append(sessions, id)
	}
	if n, _ := codexTree(c.PID); len(n) != 1 {
		t.Errorf("12 sessions opened, none prompted: codex processes %v", n)
	}
	for i, s := range sessions {
		evs, res := c.Call("session/prompt", acpclient.Prompt(s, fmt.Sprintf("SAY answer-%d", i)))
		if got := acpclient.Text(evs); got != fmt.Sprintf("answer-%d", i) || acpclient.StopReason(res) != "end_turn" {
			t.Errorf("session %d said %q, %s", i, got, acpclient.StopReason(res))
		}
	}
	n, rss := codexTree(c.PID)
	t.Logf("12 sessions prompted: %d codex processes, the tree's RSS %.0f MB", len(n), rss)
	if len(n) > 2 {
		t.Errorf("12 sessions prompted: %d codex processes %v", len(n), n)
	}
	for _, i := range []int{3, 11} {
		evs, _ := c.Call("session/prompt", acpclient.Prompt(sessions[i], "RECALL"))
		if got := acpclient.Text(evs); got != fmt.Sprintf("FIRST PROMPT WAS: SAY answer-%d", i) {
			t.Errorf("session %d's history: %q", i, got)
		}
	}
	c.End()
}

// The editor's MCP servers reach a codex session: given at session/new,
// they are its thread's, and the model calls their tools (issue 47, ACP
// round 2).
func TestACPCodexMCPServers(t *testing.T) {
	need(t)
	mcp := fakeMCP(t)
	c := runACPPeer(t, codexPeer(t))
	c.Call("initialize", map[string]any{"protocolVersion": 1})
	work := t.TempDir()
	_, res := c.Call("session/new", map[string]any{"cwd": work, "mcpServers": []any{
		map[string]any{"type": "http", "name": "tools", "url": mcp.URL + "/mcp", "headers": []any{}}}})
	s := sessionID(res)
	if s == "" {
		t.Fatalf("session/new: %+v %s", res.Error, res.Result)
	}
	setMode(t, c, s, "level-2")
	evs, res := c.Call("session/prompt", acpclient.Prompt(s, "STEPS:\nCALL tool_search {\"query\":\"echo text\"}\nCALL mcp__tools.echo {\"text\":\"round trip\"}\n"))
	var called, answered bool
	for _, ev := range evs {
		u := ev.Update
		called = called || u.SessionUpdate == "tool_call" && strings.Contains(u.Title, "echo")
		answered = answered || u.SessionUpdate == "tool_call_update" && u.Status == "completed" && strings.Contains(string(u.RawOutput), "echo: round trip")
	}
	mcp.mu.Lock()
	var reached bool
	for _, b := range mcp.bodies {
		reached = reached || strings.Contains(b, `"tools/call"`)
	}
	mcp.mu.Unlock()
	if !called || !answered || !reached || acpclient.StopReason(res) != "end_turn" {
		t.Errorf("the MCP tool: called %v, answered %v, the server reached %v, %s: %v", called, answered, reached, acpclient.StopReason(res), acpclient.Kinds(evs))
	}
	c.End()
}

// A cancel stops its own session's command only: another session's, on
// the same app-server, runs on and writes its file.
func TestACPCodexCancelSparesOtherSessions(t *testing.T) {
	need(t)
	c, a, work := startACPPeer(t, codexPeer(t))
	_, res := c.Call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})
	b := sessionID(res)
	for _, s := range []string{a, b} {
		setMode(t, c, s, "level-2")
	}
	sleeping := func(secs string) bool {
		return len(procsWhere("cmdline", func(f []string) bool { return len(f) > 1 && f[0] == "sleep" && f[1] == secs })) > 0
	}
	tagB := c.Send("session/prompt", acpclient.Prompt(b, `CALL exec_command {"cmd":"sleep 2.917; touch b.txt"}`))
	tagA := c.Send("session/prompt", acpclient.Prompt(a, `CALL exec_command {"cmd":"sleep 4.917; touch a.txt"}`))
	if !await.Until(30*time.Second, func() bool { return sleeping("2.917") && sleeping("4.917") }) {
		t.Fatal("the two commands did not both start")
	}
	c.Notify("session/cancel", map[string]any{"sessionId": a})
	c.Until(func(ev acpclient.Event) bool { return ev.Tag == tagA })
	if !await.Until(3*time.Second, func() bool { return !sleeping("4.917") }) {
		t.Error("the cancelled session's command is still running")
	}
	if !sleeping("2.917") {
		t.Error("the other session's command was stopped too")
	}
	evs := c.Until(func(ev acpclient.Event) bool { return ev.Tag == tagB })
	if r := acpclient.StopReason(evs[len(evs)-1]); r != "end_turn" {
		t.Errorf("the other session's turn ended %s", r)
	}
	if _, err := os.Stat(filepath.Join(work, "b.txt")); err != nil {
		t.Errorf("the other session's command did not finish: %v", err)
	}
	if _, err := os.Stat(filepath.Join(work, "a.txt")); err == nil {
		t.Error("the cancelled command wrote its file")
	}
	c.End()
}

// A command allowed for the session (allow_always) is not asked again
// after the mode is changed away and back, though the change moved the
// thread to another app-server configuration (thread/resume) and codex
// there has forgotten it; and a change to a mode of the same grant
// (level 3 is level 2's) restarts nothing (allowAlwaysSurvivesModes;
// issue 47 item 3, codex).
func TestACPCodexAllowAlwaysSurvivesModes(t *testing.T) {
	c, s, work := startACPPeer(t, codexPeer(t))
	allowAlwaysSurvivesModes(t, c, s, work, `CALL exec_command {"cmd":"echo hello > out.txt"}`,
		func() []int { codex, _ := codexTree(c.PID); return codex }, false)
}

// The end of input mid-turn is the editor's stop (endOfInputMidTurn; issue
// 47 item 5, codex).
func TestACPCodexEndOfInputMidTurn(t *testing.T) {
	c, s, work := startACPPeer(t, codexPeer(t))
	endOfInputMidTurn(t, c, s, work,
		`CALL exec_command {"cmd":"python3 -c 'import time; time.sleep(4.0419)' && touch late.txt"}`, "time.sleep(4.0419)")
}
