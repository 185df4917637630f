// Package acpclient drives an ACP agent from Go tests through client.mjs,
// a scripted client on the official TypeScript SDK (@agentclientprotocol/sdk
// 2.4.0), so that what agent-host --acp says is read by a codec nobody
// here wrote.
package acpclient

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// SDK is the directory the SDK was installed into (AGENTRY_ACP_SDK, else
// $AGENTRY_PEERS/acp, where tests/peers/install.sh puts it, else make
// test-peers' default, ~/.cache/agentry-peers/acp), or "" when there is
// none, or no node.
func SDK() string {
	dir := os.Getenv("AGENTRY_ACP_SDK")
	switch {
	case dir != "":
	case os.Getenv("AGENTRY_PEERS") != "":
		dir = filepath.Join(os.Getenv("AGENTRY_PEERS"), "acp")
	default:
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "agentry-peers", "acp")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules/@agentclientprotocol/sdk/package.json")); err != nil {
		return ""
	}
	if _, err := exec.LookPath("node"); err != nil {
		return ""
	}
	return dir
}

// Event is one line client.mjs reports.
type Event struct {
	Event  string          `json:"event"`
	Tag    string          `json:"tag"`
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
	Update Update          `json:"update"`
	// UpdateRaw is the update as the SDK gave it, every field.
	UpdateRaw json.RawMessage `json:"-"`
	SessionID string          `json:"sessionId"`
	Params    json.RawMessage `json:"params"`
	PID       int             `json:"pid"`
	Code      *int            `json:"code"`
	Signal    *string         `json:"signal"`
	T         float64         `json:"t"`
}

// Error is a request's error, as the SDK gave it.
type Error struct {
	Code    *int            `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// Update is a session/update's update, the fields tests look at.
type Update struct {
	SessionUpdate string          `json:"sessionUpdate"`
	Content       json.RawMessage `json:"content"`
	ToolCallID    string          `json:"toolCallId"`
	Title         string          `json:"title"`
	Kind          string          `json:"kind"`
	Status        string          `json:"status"`
	RawInput      json.RawMessage `json:"rawInput"`
	RawOutput     json.RawMessage `json:"rawOutput"`
	Used          int64           `json:"used"`
	Size          int64           `json:"size"`
	CurrentModeID string          `json:"currentModeId"`
	Entries       json.RawMessage `json:"entries"`           // a plan's
	Commands      json.RawMessage `json:"availableCommands"` // available_commands_update's
}

// Text is a chunk's text.
func (u Update) Text() string {
	var c struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(u.Content, &c)
	return c.Text
}

// Client is one client.mjs and the agent it started.
type Client struct {
	t    testing.TB
	cmd  *exec.Cmd
	in   io.WriteCloser
	evs  chan Event
	PID  int // the agent's
	mu   sync.Mutex
	next int
}

// Start runs the agent argv under client.mjs, with env and in dir.
func Start(t testing.TB, sdk string, env []string, dir string, argv ...string) *Client {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "client.mjs")
	cmd := exec.Command("node", append([]string{script}, argv...)...)
	cmd.Env = append(append([]string{}, env...), "ACP_SDK="+sdk)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &Client{t: t, cmd: cmd, in: in, evs: make(chan Event, 4096)}
	go func() {
		defer close(c.evs)
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				var ev Event
				if json.Unmarshal(line, &ev) != nil {
					t.Errorf("client.mjs said: %s", line)
					continue
				}
				var raw struct {
					Update json.RawMessage `json:"update"`
				}
				_ = json.Unmarshal(line, &raw)
				ev.UpdateRaw = raw.Update
				c.evs <- ev
			}
			if err != nil {
				return
			}
		}
	}()
	ev := c.Until(func(ev Event) bool { return ev.Event == "pid" })
	c.PID = ev[len(ev)-1].PID
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return c
}

func (c *Client) op(v map[string]any) {
	b, _ := json.Marshal(v)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Errorf("client.mjs: %v", err)
	}
}

// Send sends a request and returns its tag.
func (c *Client) Send(method string, params any) string {
	c.mu.Lock()
	c.next++
	tag := fmt.Sprint("r", c.next)
	c.mu.Unlock()
	c.op(map[string]any{"op": "request", "tag": tag, "method": method, "params": params})
	return tag
}

// Notify sends a notification.
func (c *Client) Notify(method string, params any) {
	c.op(map[string]any{"op": "notify", "method": method, "params": params})
}

// Permission sets how permission requests are answered from now on:
// allow, allow_session, reject, cancelled or hold.
func (c *Client) Permission(answer string) {
	c.op(map[string]any{"op": "permission", "answer": answer})
}

// Elicit sets how elicitation/create is answered from now on: decline,
// cancel, or a label, accepted for every field of the form.
func (c *Client) Elicit(answer string) {
	c.op(map[string]any{"op": "elicit", "answer": answer})
}

// Release answers the held permission requests, cancelled.
func (c *Client) Release() { c.op(map[string]any{"op": "release"}) }

// Until reads events up to the first that ok accepts, and returns them
// all, that one last; it fails the test after 60 s.
func (c *Client) Until(ok func(Event) bool) []Event {
	c.t.Helper()
	var got []Event
	deadline := time.After(60 * time.Second)
	for {
		select {
		case ev, open := <-c.evs:
			if !open {
				c.t.Fatalf("client.mjs ended; got %d events", len(got))
			}
			got = append(got, ev)
			if ok(ev) {
				return got
			}
		case <-deadline:
			c.t.Fatalf("nothing expected within 60s; got %v", Kinds(got))
		}
	}
}

// Wait reads events up to the answer to tag.
func (c *Client) Wait(tag string) []Event {
	c.t.Helper()
	return c.Until(func(ev Event) bool { return ev.Tag == tag })
}

// Call sends a request and returns every event up to its answer, and the
// answer.
func (c *Client) Call(method string, params any) ([]Event, Event) {
	c.t.Helper()
	evs := c.Wait(c.Send(method, params))
	return evs, evs[len(evs)-1]
}

// End closes the agent's standard input and returns how it exited.
func (c *Client) End() Event {
	c.t.Helper()
	c.op(map[string]any{"op": "end"})
	evs := c.Until(func(ev Event) bool { return ev.Event == "exit" })
	return evs[len(evs)-1]
}

// Kill kills the client (SIGKILL), as an editor dies: the agent's
// standard input ends and its standard output has no reader.
func (c *Client) Kill() { _ = c.cmd.Process.Kill() }

// EOF closes the agent's standard input and returns at once.
func (c *Client) EOF() {
	c.t.Helper()
	c.op(map[string]any{"op": "eof"})
	c.Until(func(ev Event) bool { return ev.Event == "eof" })
}

// NewSession initializes the agent and opens a session in cwd.
func (c *Client) NewSession(cwd string) string {
	c.t.Helper()
	return c.NewSessionWith(cwd, nil)
}

// NewSessionWith is NewSession by a client that says it can do more:
// caps are added to its clientCapabilities (elicitation, say).
func (c *Client) NewSessionWith(cwd string, caps map[string]any) string {
	c.t.Helper()
	all := map[string]any{"fs": map[string]bool{"readTextFile": false, "writeTextFile": false}, "terminal": false}
	for k, v := range caps {
		all[k] = v
	}
	_, init := c.Call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": all})
	if init.Error != nil {
		c.t.Fatalf("initialize: %s", init.Error.Message)
	}
	_, res := c.Call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})
	var s struct {
		SessionID string `json:"sessionId"`
	}
	if res.Error != nil || json.Unmarshal(res.Result, &s) != nil || s.SessionID == "" {
		c.t.Fatalf("session/new: %+v %s", res.Error, res.Result)
	}
	return s.SessionID
}

// Prompt is session/prompt's params for a text prompt.
func Prompt(session, text string) map[string]any {
	return map[string]any{"sessionId": session, "prompt": []any{map[string]any{"type": "text", "text": text}}}
}

// StopReason is a prompt's answer's stop reason, or "error: ...".
func StopReason(ev Event) string {
	if ev.Error != nil {
		return "error: " + ev.Error.Message
	}
	var r struct {
		StopReason string `json:"stopReason"`
	}
	_ = json.Unmarshal(ev.Result, &r)
	return r.StopReason
}

// Kinds names each event, for messages and order checks: an update's
// kind (with its status), "permission", or the answer's tag.
func Kinds(evs []Event) []string {
	var out []string
	for _, ev := range evs {
		switch {
		case ev.Event == "update":
			s := ev.Update.SessionUpdate
			if ev.Update.Status != "" {
				s += ":" + ev.Update.Status
			}
			out = append(out, s)
		case ev.Event == "permission", ev.Event == "elicitation":
			out = append(out, ev.Event)
		case ev.Tag != "":
			out = append(out, "answer")
		}
	}
	return out
}

// Text is the agent_message_chunks' text.
func Text(evs []Event) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Event == "update" && ev.Update.SessionUpdate == "agent_message_chunk" {
			b.WriteString(ev.Update.Text())
		}
	}
	return b.String()
}
