package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentry/agentry/lib/backend/echo"
	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/protocol"
)

// loader is the echo backend that can also take up a session, with a
// history of its own.
type loader struct {
	*echo.Backend
	mu     sync.Mutex
	loaded []string // chat=session
}

// DescribeTool: the history's calls are of Claude Code's tools.
func (l *loader) DescribeTool(name string, input json.RawMessage) host.ToolView {
	return claudeView(name, input)
}

func (l *loader) LoadSession(ctx context.Context, chatID, sessionID, workspace string) ([]host.Said, error) {
	l.mu.Lock()
	l.loaded = append(l.loaded, chatID+"="+sessionID)
	l.mu.Unlock()
	return []host.Said{
		{User: "EARLIER QUESTION"},
		{Event: protocol.AgentEvent{Type: protocol.EvThinking, Text: "hmm"}},
		{Event: protocol.AgentEvent{Type: protocol.EvToolCall, ToolCallID: "t1", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)}},
		{Event: protocol.AgentEvent{Type: protocol.EvToolResult, ToolCallID: "t1", Output: "a.go"}},
		{Event: protocol.AgentEvent{Type: protocol.EvToolCall, ToolCallID: "t2", Name: "Bash", Input: json.RawMessage(`{"command":"rm a.go"}`)}},
		{Event: protocol.AgentEvent{Type: protocol.EvToolResult, ToolCallID: "t2", Output: "rejected", IsError: true}},
		{Event: protocol.AgentEvent{Type: protocol.EvText, Text: "EARLIER ANSWER"}},
		{Event: protocol.AgentEvent{Type: protocol.EvToolCall, ToolCallID: "t3", Name: "Read", Input: json.RawMessage(`{"file_path":"/a/b.go"}`)}},
	}, nil
}

// loaderFactory makes a loader over a fresh echo backend.
func loaderFactory(string, json.RawMessage) (host.Backend, error) {
	b, _ := echo.New(nil)
	return &loader{Backend: b}, nil
}

// A session kept by one agent-host is listed and loaded by the next: its
// history replayed with its calls' titles and statuses, its chat given the
// CLI's session, and its turns going on.
func TestLoadAfterRestart(t *testing.T) {
	d, state := loadDefs(t), t.TempDir()
	l := &loader{}
	factory := func(string, json.RawMessage) (host.Backend, error) {
		b, _ := echo.New(nil)
		l.Backend = b
		return l, nil
	}
	c := startWith(t, d, factory, state)
	r := c.call("initialize", map[string]any{"protocolVersion": 1})
	if !strings.Contains(string(r["result"]), `"loadSession":true`) {
		t.Errorf("initialize: %s", r["result"])
	}
	s := c.newSession()
	c.until(c.send("session/prompt", prompt(s, "first words\nmore")))
	c.in.Close()
	<-c.served
	c.served <- nil

	c = startWith(t, d, factory, state)
	c.call("initialize", map[string]any{"protocolVersion": 1})
	r = c.call("session/list", map[string]any{})
	if !strings.Contains(string(r["result"]), `"sessionId":"`+s+`"`) || !strings.Contains(string(r["result"]), `"title":"first words"`) {
		t.Errorf("session/list: %s", r["result"])
	}
	ms := c.until(c.send("session/load", map[string]any{"sessionId": s, "cwd": t.TempDir(), "mcpServers": []any{}}))
	if e := ms[len(ms)-1]["error"]; e != nil {
		t.Fatalf("session/load: %s", e)
	}
	ups, seq := updates(t, ms)
	want := "user_message_chunk agent_thought_chunk tool_call:in_progress tool_call_update:completed tool_call:in_progress tool_call_update:failed agent_message_chunk tool_call:in_progress tool_call_update:failed"
	if got := strings.Join(seq, " "); got != want {
		t.Errorf("replay:\n got %s\nwant %s", got, want)
	}
	if ups[2].Title != "ls" || ups[2].Kind != "execute" || ups[7].Title != "Read /a/b.go" {
		t.Errorf("titles: %+v %+v", ups[2], ups[7])
	}
	if got := l.loaded; len(got) != 1 || got[0] != s+"=echo-"+s {
		t.Errorf("LoadSession calls %v", got)
	}
	ms = c.until(c.send("session/prompt", prompt(s, "and on")))
	ups, _ = updates(t, ms)
	if chunks(ups) != "and on" {
		t.Errorf("after the load: %q", chunks(ups))
	}
	r = c.call("session/load", map[string]any{"sessionId": "no-such", "cwd": "/", "mcpServers": []any{}})
	if !strings.Contains(string(r["error"]), "-32002") {
		t.Errorf("loading a session never kept: %s", r["error"])
	}
	r = c.call("session/resume", map[string]any{"sessionId": s, "cwd": "/"})
	if r["error"] == nil {
		t.Errorf("resuming a session open on this connection: %s", r["result"])
	}
}

// session/delete takes a session out of session/list, open or kept by an
// earlier agent-host: its record is gone, and so is the session.
func TestDeleteSession(t *testing.T) {
	d, state := loadDefs(t), t.TempDir()
	c := startWith(t, d, loaderFactory, state)
	r := c.call("initialize", map[string]any{"protocolVersion": 1})
	if !strings.Contains(string(r["result"]), `"delete":{}`) {
		t.Errorf("initialize: %s", r["result"])
	}
	kept, open := c.newSession(), c.newSession()
	c.until(c.send("session/prompt", prompt(kept, "kept")))
	c.until(c.send("session/prompt", prompt(open, "open")))
	c.in.Close()
	<-c.served
	c.served <- nil

	c = startWith(t, d, loaderFactory, state)
	c.call("initialize", map[string]any{"protocolVersion": 1})
	if r := c.call("session/load", map[string]any{"sessionId": open, "cwd": "/", "mcpServers": []any{}}); r["error"] != nil {
		t.Fatalf("session/load: %s", r["error"])
	}
	for _, s := range []string{kept, open} {
		if r := c.call("session/delete", map[string]any{"sessionId": s}); r["error"] != nil {
			t.Errorf("session/delete %s: %s", s, r["error"])
		}
	}
	r = c.call("session/list", map[string]any{})
	if strings.Contains(string(r["result"]), kept) || strings.Contains(string(r["result"]), open) {
		t.Errorf("session/list after the deletes: %s", r["result"])
	}
	if r := c.call("session/prompt", prompt(open, "still there?")); !strings.Contains(string(r["error"]), "-32002") {
		t.Errorf("a prompt to the deleted session: %s", r["error"])
	}
	if r := c.call("session/delete", map[string]any{"sessionId": kept}); !strings.Contains(string(r["error"]), "-32002") {
		t.Errorf("deleting it again: %s", r["error"])
	}
}

// forking is the loader that can also fork, recording what it forks.
type forking struct {
	loader
	forks []string // chat=session@workspace
}

func (f *forking) ForkSession(ctx context.Context, chatID, sessionID, workspace string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forks = append(f.forks, chatID+"="+sessionID+"@"+workspace)
	return nil
}

// session/fork starts a new session from an open one's CLI session, with
// its mode; the one forked goes on; a session unknown is not found.
func TestForkSession(t *testing.T) {
	f := &forking{}
	factory := func(string, json.RawMessage) (host.Backend, error) {
		f.Backend, _ = echo.New(nil)
		return f, nil
	}
	c := startWith(t, loadDefs(t), factory, t.TempDir())
	if r := c.call("initialize", map[string]any{"protocolVersion": 1}); !strings.Contains(string(r["result"]), `"fork":{}`) {
		t.Errorf("initialize: %s", r["result"])
	}
	s := c.newSession()
	c.call("session/set_mode", map[string]any{"sessionId": s, "modeId": "level-1"})
	c.until(c.send("session/prompt", prompt(s, "first")))
	elsewhere := t.TempDir()
	r := c.call("session/fork", map[string]any{"sessionId": s, "cwd": elsewhere, "mcpServers": []any{}})
	var res struct {
		SessionID string `json:"sessionId"`
		Modes     struct {
			CurrentModeID string `json:"currentModeId"`
		} `json:"modes"`
	}
	if err := json.Unmarshal(r["result"], &res); err != nil || res.SessionID == "" || res.SessionID == s {
		t.Fatalf("session/fork: %s %s", r["result"], r["error"])
	}
	if res.Modes.CurrentModeID != "level-1" {
		t.Errorf("the fork's mode is %s, not the session's", res.Modes.CurrentModeID)
	}
	f.mu.Lock()
	forks := f.forks
	f.mu.Unlock()
	if len(forks) != 1 || forks[0] != res.SessionID+"=echo-"+s+"@"+elsewhere {
		t.Errorf("ForkSession calls %v", forks)
	}
	for _, id := range []string{s, res.SessionID} {
		if ups, _ := updates(t, c.until(c.send("session/prompt", prompt(id, "on")))); chunks(ups) != "on" {
			t.Errorf("session %s after the fork: %q", id, chunks(ups))
		}
	}
	if r := c.call("session/fork", map[string]any{"sessionId": "nope", "cwd": "/", "mcpServers": []any{}}); !strings.Contains(string(r["error"]), "-32002") {
		t.Errorf("forking no session: %s", r["error"])
	}
}

// The record kept for session/load is written once the turn is answered:
// a session deleted right after its answer stays deleted (no record is
// written after the delete), and one answered just before the end of
// input is kept (the end waits for the write).
func TestRecordAfterAnswer(t *testing.T) {
	d, state := loadDefs(t), t.TempDir()
	c := startWith(t, d, loaderFactory, state)
	c.call("initialize", map[string]any{"protocolVersion": 1})
	gone, kept := c.newSession(), c.newSession()
	for i := 0; i < 20; i++ {
		c.until(c.send("session/prompt", prompt(gone, fmt.Sprintf("turn %d", i))))
	}
	if r := c.call("session/delete", map[string]any{"sessionId": gone}); r["error"] != nil {
		t.Fatalf("session/delete: %s", r["error"])
	}
	c.until(c.send("session/prompt", prompt(kept, "last words")))
	c.in.Close()
	<-c.served
	c.served <- nil

	files, _ := filepath.Glob(filepath.Join(state, "*", "*.json"))
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".json"))
	}
	if len(names) != 1 || names[0] != kept {
		t.Errorf("records after the delete of %s and a last turn of %s: %v", gone, kept, names)
	}
}
