package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/backend/claude"
	"github.com/agentry/agentry/lib/backend/echo"
	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/schema"
)

// defs compiles the official ACP schema's definitions one at a time, so an
// outgoing message is checked against the type its method says it is.
type defs struct {
	dir string
	mu  sync.Mutex
	got map[string]*schema.Schema
	all map[string]json.RawMessage
	top string
}

func loadDefs(t *testing.T) *defs {
	raw, err := os.ReadFile("testdata/schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema string                     `json:"$schema"`
		Defs   map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return &defs{dir: t.TempDir(), got: map[string]*schema.Schema{}, all: doc.Defs, top: doc.Schema}
}

// check reports how v fails the definition name, or "".
func (d *defs) check(t *testing.T, name string, v []byte) string {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.got[name]
	if s == nil {
		if d.all[name] == nil {
			t.Fatalf("the schema has no definition %s", name)
		}
		b, _ := json.Marshal(map[string]any{"$schema": d.top, "$defs": d.all, "$ref": "#/$defs/" + name})
		path := filepath.Join(d.dir, name+".json")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		var err error
		if s, err = schema.Load(path); err != nil {
			t.Fatal(err)
		}
		d.got[name] = s
	}
	return s.Check(v)
}

// results names the schema type of each method's result.
var results = map[string]string{
	"initialize": "InitializeResponse", "session/new": "NewSessionResponse", "session/prompt": "PromptResponse",
	"session/set_mode": "SetSessionModeResponse", "session/set_config_option": "SetSessionConfigOptionResponse",
	"session/list": "ListSessionsResponse", "session/close": "CloseSessionResponse",
	"session/load": "LoadSessionResponse", "session/resume": "ResumeSessionResponse", "authenticate": "AuthenticateResponse",
	"session/delete": "DeleteSessionResponse",
	// (session/fork is unstable, not in schema.json: its response is
	// ForkSessionResponse of schema.unstable.json, shaped as session/new's.)
	"session/fork": "NewSessionResponse",
}

// client is a test's ACP client: it writes requests, reads every line the
// agent writes, checks it against the schema, and answers permission
// requests with answer.
type client struct {
	t      *testing.T
	defs   *defs
	in     io.WriteCloser
	mu     sync.Mutex
	next   int
	method map[string]string // request id → method
	msgs   chan map[string]json.RawMessage
	answer func(params json.RawMessage) any
	// elicit answers elicitation/create, when set.
	elicit func(params json.RawMessage) any
	served chan error
}

func start(t *testing.T, d *defs, echoConfig string) *client {
	return startWith(t, d, func(string, json.RawMessage) (host.Backend, error) {
		return echo.New(json.RawMessage(echoConfig))
	}, "")
}

func startWith(t *testing.T, d *defs, factory host.Factory, stateDir string) *client {
	return startOpts(t, d, Options{Host: host.Options{Backend: "echo", Version: "test", MaxLine: 1 << 20, DrainTimeout: 5 * time.Second,
		InterruptGrace: time.Second, Factory: factory}, Warn: func(msg string) { t.Logf("warn: %s", msg) }, StateDir: stateDir})
}

func startOpts(t *testing.T, d *defs, opts Options) *client {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &client{t: t, defs: d, in: inW, method: map[string]string{}, msgs: make(chan map[string]json.RawMessage, 1000),
		served: make(chan error, 1)}
	go func() { c.served <- Serve(context.Background(), opts, inR, outW); outW.Close() }()
	go c.read(outR)
	t.Cleanup(func() {
		c.in.Close()
		select {
		case <-c.served:
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after the end of input")
		}
	})
	return c
}

func (c *client) read(r io.Reader) {
	defer close(c.msgs)
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := append([]byte(nil), sc.Bytes()...)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			c.t.Errorf("the agent wrote a line that is not a JSON object: %s", line)
			continue
		}
		c.checkLine(m, line)
		if string(m["method"]) == `"session/request_permission"` && c.answer != nil {
			answer, params, id := c.answer, m["params"], m["id"]
			go func() {
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": answer(params)})
				c.write(string(b))
			}()
		}
		if string(m["method"]) == `"elicitation/create"` && c.elicit != nil {
			answer, params, id := c.elicit, m["params"], m["id"]
			go func() {
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": answer(params)})
				c.write(string(b))
			}()
		}
		c.msgs <- m
	}
}

// checkLine checks a line against the schema type it must be.
func (c *client) checkLine(m map[string]json.RawMessage, line []byte) {
	c.t.Helper()
	if string(m["jsonrpc"]) != `"2.0"` {
		c.t.Errorf("no jsonrpc 2.0: %s", line)
	}
	var def string
	var v []byte
	switch {
	case string(m["method"]) == `"session/update"`:
		def, v = "SessionNotification", m["params"]
	case string(m["method"]) == `"session/request_permission"`:
		def, v = "RequestPermissionRequest", m["params"]
	case string(m["method"]) == `"elicitation/create"`:
		def, v = "CreateElicitationRequest", m["params"]
	case string(m["method"]) == `"$/cancel_request"`:
		def, v = "CancelRequestNotification", m["params"]
	case m["method"] != nil:
		c.t.Errorf("the agent sent a method it should not: %s", line)
		return
	case m["error"] != nil:
		def, v = "Error", m["error"]
	default:
		c.mu.Lock()
		def, v = results[c.method[string(m["id"])]], m["result"]
		c.mu.Unlock()
	}
	if def == "" {
		c.t.Errorf("a response to no request: %s", line)
		return
	}
	if why := c.defs.check(c.t, def, v); why != "" {
		c.t.Errorf("not a valid %s (%s): %s", def, why, line)
	}
}

func (c *client) write(line string) {
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Logf("write: %v", err)
	}
}

// send writes a request and returns its id.
func (c *client) send(method string, params any) string {
	c.mu.Lock()
	c.next++
	id := fmt.Sprint(c.next)
	c.method[id] = method
	c.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.next, "method": method, "params": params})
	c.write(string(b))
	return id
}

func (c *client) notify(method string, params any) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	c.write(string(b))
}

// until reads messages up to the response to id, and returns them all,
// the response last.
func (c *client) until(id string) []map[string]json.RawMessage {
	c.t.Helper()
	var got []map[string]json.RawMessage
	deadline := time.After(20 * time.Second)
	for {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				c.t.Fatalf("the agent's output ended before the response to %s", id)
			}
			got = append(got, m)
			if m["method"] == nil && string(m["id"]) == id {
				return got
			}
		case <-deadline:
			c.t.Fatalf("no response to request %s within 20s; got %d messages", id, len(got))
		}
	}
}

func (c *client) call(method string, params any) map[string]json.RawMessage {
	c.t.Helper()
	ms := c.until(c.send(method, params))
	return ms[len(ms)-1]
}

func (c *client) newSession() string {
	c.t.Helper()
	c.call("initialize", map[string]any{"protocolVersion": 1})
	var res struct {
		SessionID string `json:"sessionId"`
	}
	r := c.call("session/new", map[string]any{"cwd": c.t.TempDir(), "mcpServers": []any{}})
	if err := json.Unmarshal(r["result"], &res); err != nil || res.SessionID == "" {
		c.t.Fatalf("session/new: %s", r["result"])
	}
	return res.SessionID
}

func prompt(session, text string) map[string]any {
	return map[string]any{"sessionId": session, "prompt": []any{map[string]any{"type": "text", "text": text}}}
}

// update is the session/update of m, or nil.
type update struct {
	SessionUpdate string          `json:"sessionUpdate"`
	Content       json.RawMessage `json:"content"`
	ToolCallID    string          `json:"toolCallId"`
	Status        string          `json:"status"`
	Title         string          `json:"title"`
	Kind          string          `json:"kind"`
}

// updates are a turn's updates, and their kinds in order; the title a
// session's first turn gives it (session_info_update, TestTitleUpdate's)
// is left out.
func updates(t *testing.T, ms []map[string]json.RawMessage) (ups []update, seq []string) {
	for _, m := range ms {
		switch string(m["method"]) {
		case `"session/update"`:
			var p struct {
				Update update `json:"update"`
			}
			if err := json.Unmarshal(m["params"], &p); err != nil {
				t.Fatal(err)
			}
			if p.Update.SessionUpdate == "session_info_update" {
				continue
			}
			ups = append(ups, p.Update)
			s := p.Update.SessionUpdate
			if p.Update.Status != "" {
				s += ":" + p.Update.Status
			}
			seq = append(seq, s)
		case `"session/request_permission"`:
			seq = append(seq, "request_permission")
		}
	}
	return ups, seq
}

func chunks(ups []update) string {
	var b strings.Builder
	for _, u := range ups {
		if u.SessionUpdate == "agent_message_chunk" {
			var c textContent
			_ = json.Unmarshal(u.Content, &c)
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

func stopReason(t *testing.T, m map[string]json.RawMessage) string {
	t.Helper()
	var r promptResult
	if m["error"] != nil || json.Unmarshal(m["result"], &r) != nil {
		t.Fatalf("session/prompt failed: %s", m["error"])
	}
	return r.StopReason
}

func TestTextTurn(t *testing.T) {
	c := start(t, loadDefs(t), "")
	s := c.newSession()
	ms := c.until(c.send("session/prompt", prompt(s, "hello there world")))
	ups, seq := updates(t, ms)
	if got := chunks(ups); got != "hello there world" {
		t.Errorf("chunks say %q", got)
	}
	if seq[len(seq)-1] != "usage_update" {
		t.Errorf("updates %v: want usage_update last", seq)
	}
	if r := stopReason(t, ms[len(ms)-1]); r != "end_turn" {
		t.Errorf("stopReason %q", r)
	}
}

// At an ask mode the call is reported, then asked; allowed, it runs.
func TestToolAskAllow(t *testing.T) {
	c := start(t, loadDefs(t), "")
	var asked json.RawMessage
	c.answer = func(p json.RawMessage) any {
		asked = p
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow"}}
	}
	s := c.newSession()
	ms := c.until(c.send("session/prompt", prompt(s, "!tool=Bash\ntouch made.txt")))
	_, seq := updates(t, ms)
	want := "tool_call:pending request_permission tool_call_update:in_progress tool_call_update:completed"
	if got := strings.Join(seq, " "); !strings.HasPrefix(got, want) {
		t.Errorf("updates %q, want them to start %q", got, want)
	}
	var p permissionParams
	_ = json.Unmarshal(asked, &p)
	if p.ToolCall.Title != "touch made.txt" || p.ToolCall.Kind != "execute" || len(p.Options) != 3 {
		t.Errorf("permission request %s", asked)
	}
	if r := stopReason(t, ms[len(ms)-1]); r != "end_turn" {
		t.Errorf("stopReason %q", r)
	}
}

// A rejected call is failed, and the turn goes on to its end.
func TestToolAskReject(t *testing.T) {
	c := start(t, loadDefs(t), "")
	c.answer = func(json.RawMessage) any {
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "reject"}}
	}
	s := c.newSession()
	ms := c.until(c.send("session/prompt", prompt(s, "!tool=Bash\nrm -rf x")))
	ups, seq := updates(t, ms)
	want := "tool_call:pending request_permission tool_call_update:failed agent_message_chunk"
	if got := strings.Join(seq, " "); !strings.HasPrefix(got, want) {
		t.Errorf("updates %q, want them to start %q", got, want)
	}
	if n := strings.Count(strings.Join(seq, " "), "tool_call_update"); n != 1 {
		t.Errorf("%d tool_call_updates, want one (failed, once): %v", n, seq)
	}
	if got := chunks(ups); got != "rm -rf x" {
		t.Errorf("the turn did not go on: %q", got)
	}
	if r := stopReason(t, ms[len(ms)-1]); r != "end_turn" {
		t.Errorf("stopReason %q", r)
	}
}

// The mode is the grant from the next turn: at level 2 without asking, the
// call runs unasked.
func TestModeTakesEffectNextTurn(t *testing.T) {
	c := start(t, loadDefs(t), "")
	c.answer = func(json.RawMessage) any {
		t.Error("asked at a mode that does not ask")
		return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}
	}
	s := c.newSession()
	r := c.call("session/set_config_option", map[string]any{"sessionId": s, "configId": "mode", "value": "level-2"})
	if r["error"] != nil {
		t.Fatalf("set_config_option: %s", r["error"])
	}
	ms := c.until(c.send("session/prompt", prompt(s, "!tool=Bash\ntouch made.txt")))
	_, seq := updates(t, ms)
	if got := strings.Join(seq, " "); !strings.HasPrefix(got, "tool_call:in_progress tool_call_update:completed") {
		t.Errorf("updates %q", got)
	}
	r = c.call("session/set_mode", map[string]any{"sessionId": s, "modeId": "level-1-ask"})
	if r["error"] != nil {
		t.Fatalf("set_mode: %s", r["error"])
	}
	r = c.call("session/set_mode", map[string]any{"sessionId": s, "modeId": "level-9"})
	if r["error"] == nil {
		t.Errorf("set_mode to a mode that does not exist: %s", r["result"])
	}
}

// effortEcho is echo with claude's thought levels.
type effortEcho struct{ *echo.Backend }

func (effortEcho) Efforts() []string { return []string{"low", "medium", "high", "xhigh", "max"} }

// A thought level the backend does not take is refused in ACP's words,
// naming the levels it takes; one it takes is the session's.
func TestThoughtLevel(t *testing.T) {
	c := startWith(t, loadDefs(t), func(string, json.RawMessage) (host.Backend, error) {
		b, err := echo.New(nil)
		return effortEcho{b}, err
	}, "")
	s := c.newSession()
	r := c.call("session/set_config_option", map[string]any{"sessionId": s, "configId": "thought_level", "value": "minimal"})
	want := `invalid params: no thought level \"minimal\" (default, low, medium, high, xhigh, max)`
	if !strings.Contains(string(r["error"]), "-32602") || !strings.Contains(string(r["error"]), want) || strings.Contains(string(r["error"]), "--") {
		t.Errorf("a bad thought level: %s", r["error"])
	}
	r = c.call("session/set_config_option", map[string]any{"sessionId": s, "configId": "thought_level", "value": "high"})
	if r["error"] != nil || !strings.Contains(string(r["result"]), `"currentValue":"high"`) {
		t.Errorf("a thought level it takes: %s %s", r["error"], r["result"])
	}

	plain := start(t, loadDefs(t), "")
	s = plain.newSession()
	r = plain.call("session/set_config_option", map[string]any{"sessionId": s, "configId": "thought_level", "value": "high"})
	if !strings.Contains(string(r["error"]), `invalid params: no thought level \"high\": echo has no thought levels`) {
		t.Errorf("a backend without thought levels: %s", r["error"])
	}
}

// A cancel ends the turn as cancelled at once, and the session goes on.
func TestCancel(t *testing.T) {
	c := start(t, loadDefs(t), "")
	s := c.newSession()
	id := c.send("session/prompt", prompt(s, "!sleep=30s\nnever said"))
	c.notify("session/cancel", map[string]any{"sessionId": s})
	began := time.Now()
	ms := c.until(id)
	if r := stopReason(t, ms[len(ms)-1]); r != "cancelled" {
		t.Errorf("stopReason %q", r)
	}
	if d := time.Since(began); d > 2*time.Second {
		t.Errorf("cancelled after %v", d)
	}
	ms = c.until(c.send("session/prompt", prompt(s, "still here")))
	ups, _ := updates(t, ms)
	if got := chunks(ups); got != "still here" {
		t.Errorf("the turn after a cancel says %q", got)
	}
}

// A cancel while a permission request is pending resolves it: the turn
// ends cancelled, the client's late answer changes nothing.
func TestCancelWhileAsking(t *testing.T) {
	c := start(t, loadDefs(t), "")
	asked := make(chan struct{}, 1)
	c.answer = func(json.RawMessage) any {
		asked <- struct{}{}
		return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}
	}
	s := c.newSession()
	// The answer is held back: the client answers only after the cancel.
	release := make(chan struct{})
	answer := c.answer
	c.answer = func(p json.RawMessage) any { r := answer(p); <-release; return r }
	id := c.send("session/prompt", prompt(s, "!tool=Bash\ntouch x"))
	<-asked
	c.notify("session/cancel", map[string]any{"sessionId": s})
	ms := c.until(id)
	close(release)
	if r := stopReason(t, ms[len(ms)-1]); r != "cancelled" {
		t.Errorf("stopReason %q", r)
	}
}

func TestErrorsKeepTheConnection(t *testing.T) {
	c := start(t, loadDefs(t), "")
	s := c.newSession()
	r := c.call("no/such_method", map[string]any{})
	if !strings.Contains(string(r["error"]), "-32601") {
		t.Errorf("unknown method: %s", r["error"])
	}
	c.write(`{"jsonrpc":"2.0","id":"broken","method":"session/prompt",`)
	m := <-c.msgs
	if string(m["id"]) != "null" || !strings.Contains(string(m["error"]), "-32700") {
		t.Errorf("a malformed line: %v", m)
	}
	r = c.call("session/prompt", prompt("no-such-session", "hi"))
	if !strings.Contains(string(r["error"]), "-32002") {
		t.Errorf("an unknown session: %s", r["error"])
	}
	r = c.call("session/prompt", map[string]any{"sessionId": s, "prompt": []any{map[string]any{"type": "image", "data": "AA==", "mimeType": "image/png"}}})
	if !strings.Contains(string(r["error"]), "-32602") {
		t.Errorf("an image: %s", r["error"])
	}
	r = c.call("session/new", map[string]any{"cwd": "relative", "mcpServers": []any{}})
	if !strings.Contains(string(r["error"]), "-32602") {
		t.Errorf("a relative cwd: %s", r["error"])
	}
	missing := filepath.Join(t.TempDir(), "gone")
	r = c.call("session/new", map[string]any{"cwd": missing, "mcpServers": []any{}})
	if !strings.Contains(string(r["error"]), "-32602") || !strings.Contains(string(r["error"]), "cwd "+missing+" is not a directory") {
		t.Errorf("a cwd that is no directory: %s", r["error"])
	}
	ms := c.until(c.send("session/prompt", map[string]any{"sessionId": s, "prompt": []any{
		map[string]any{"type": "text", "text": "look at"},
		map[string]any{"type": "resource_link", "uri": "file:///a/b.go", "name": "b.go"},
		map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///a/c.go", "text": "package c"}},
	}}))
	ups, _ := updates(t, ms)
	if got := chunks(ups); !strings.Contains(got, "[@b.go](file:///a/b.go)") || !strings.Contains(got, "package c") {
		t.Errorf("context blocks reached the backend as %q", got)
	}
}

// session/close cancels the session's turn, answers it, and forgets the
// session; session/list lists what is open.
func TestCloseAndList(t *testing.T) {
	c := start(t, loadDefs(t), "")
	s := c.newSession()
	r := c.call("session/list", map[string]any{})
	if !strings.Contains(string(r["result"]), s) {
		t.Errorf("session/list: %s", r["result"])
	}
	p := c.send("session/prompt", prompt(s, "!sleep=30s\nnever"))
	closeID := c.send("session/close", map[string]any{"sessionId": s})
	ms := c.until(closeID)
	answered := false
	for _, m := range ms {
		if m["method"] == nil && string(m["id"]) == p {
			answered = true
			if r := stopReason(t, m); r != "cancelled" {
				t.Errorf("the closed session's turn: %q", r)
			}
		}
	}
	if !answered {
		t.Error("session/close answered before the session's turn")
	}
	r = c.call("session/prompt", prompt(s, "hi"))
	if !strings.Contains(string(r["error"]), "-32002") {
		t.Errorf("a closed session: %s", r["error"])
	}
}

// The end of input is the editor's stop: a turn in flight is cancelled at
// once, and still answered, long before the drain timeout.
func TestEndOfInputAnswersTurns(t *testing.T) {
	c := start(t, loadDefs(t), "")
	s := c.newSession()
	id := c.send("session/prompt", prompt(s, "!sleep=30s\nfinished"))
	began := time.Now()
	c.in.Close()
	ms := c.until(id)
	if r := stopReason(t, ms[len(ms)-1]); r != "cancelled" {
		t.Errorf("stopReason %q", r)
	}
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("answered %v after the end of input", took)
	}
	select {
	case err := <-c.served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
		c.served <- err
	case <-time.After(10 * time.Second):
		t.Error("Serve did not return")
	}
}

// Claude Code's TodoWrite is also the session's plan.
func TestPlanFromTodoWrite(t *testing.T) {
	d := loadDefs(t)
	p, ok := planOf(claudeView("TodoWrite", json.RawMessage(`{"todos":[{"content":"read","status":"completed","activeForm":"reading"},{"content":"write","status":"in_progress"},{"content":"test","status":"odd"}]}`)))
	if !ok {
		t.Fatal("no plan")
	}
	b, _ := json.Marshal(sessionNotification{SessionID: "s", Update: p})
	if why := d.check(t, "SessionNotification", b); why != "" {
		t.Errorf("%s: %s", why, b)
	}
	if got := fmt.Sprint(p.Entries); got != "[{read medium completed} {write medium in_progress} {test medium pending}]" {
		t.Errorf("entries %s", got)
	}
	if _, ok := planOf(claudeView("Bash", json.RawMessage(`{}`))); ok {
		t.Error("a plan from Bash")
	}
}

// Claude Code's edits are shown as diffs.
func TestDiffs(t *testing.T) {
	d := loadDefs(t)
	for _, c := range []struct{ name, input, want string }{
		{"Edit", `{"file_path":"/w/a.go","old_string":"x := 1","new_string":"x := 2"}`, `[{"type":"diff","path":"/w/a.go","oldText":"x := 1","newText":"x := 2"}]`},
		{"Write", `{"file_path":"/w/new.go","content":"package w"}`, `[{"type":"diff","path":"/w/new.go","oldText":null,"newText":"package w"}]`},
		{"MultiEdit", `{"file_path":"/w/a.go","edits":[{"old_string":"a","new_string":"b"},{"old_string":"c","new_string":""}]}`,
			`[{"type":"diff","path":"/w/a.go","oldText":"a","newText":"b"},{"type":"diff","path":"/w/a.go","oldText":"c","newText":""}]`},
		{"Bash", `{"command":"ls"}`, `null`},
	} {
		diffs := diffsOf(claudeView(c.name, json.RawMessage(c.input)))
		b, _ := json.Marshal(diffs)
		if string(b) != c.want {
			t.Errorf("%s: %s, want %s", c.name, b, c.want)
		}
		u, _ := json.Marshal(sessionNotification{SessionID: "s", Update: toolCall{SessionUpdate: "tool_call", ToolCallID: "t", Title: c.name, Content: diffs}})
		if why := d.check(t, "SessionNotification", u); why != "" {
			t.Errorf("%s: %s: %s", c.name, why, u)
		}
	}
}

// claudeView is the claude backend's view of a call of one of Claude
// Code's tools.
func claudeView(name string, input json.RawMessage) host.ToolView {
	return new(claude.Backend).DescribeTool(name, input)
}

// A call allowed for the session (allow_always) is not asked again in the
// session, whatever the backend remembers (echo, like a CLI started again
// for a mode change, remembers nothing): the face answers it, allowed for
// the session again; another call is asked.
func TestAllowSessionKept(t *testing.T) {
	c := start(t, loadDefs(t), "")
	var asked atomic.Int32
	c.answer = func(json.RawMessage) any {
		asked.Add(1)
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_session"}}
	}
	s := c.newSession()
	c.until(c.send("session/prompt", prompt(s, "!tool=Bash\ntouch made.txt")))
	c.call("session/set_mode", map[string]any{"sessionId": s, "modeId": "level-1"})
	c.call("session/set_mode", map[string]any{"sessionId": s, "modeId": "level-2-ask"})
	ms := c.until(c.send("session/prompt", prompt(s, "!tool=Bash\ntouch made.txt")))
	_, seq := updates(t, ms)
	want := "tool_call:pending tool_call_update:in_progress tool_call_update:completed"
	if got := strings.Join(seq, " "); !strings.HasPrefix(got, want) || asked.Load() != 1 {
		t.Errorf("asked %d times; the second turn's updates %q, want them to start %q", asked.Load(), got, want)
	}
	c.until(c.send("session/prompt", prompt(s, "!tool=Bash\ntouch other.txt")))
	if asked.Load() != 2 {
		t.Errorf("another command was not asked about (%d asks)", asked.Load())
	}
}

// A session's first prompt titles it, and the editor is told at once
// (session_info_update, as session/list has it); later prompts do not.
func TestTitleUpdate(t *testing.T) {
	c := start(t, loadDefs(t), "")
	s := c.newSession()
	titles := func(ms []map[string]json.RawMessage) []string {
		var out []string
		for _, m := range ms {
			var p struct {
				Update struct {
					SessionUpdate, Title, UpdatedAt string
				} `json:"update"`
			}
			if json.Unmarshal(m["params"], &p) == nil && p.Update.SessionUpdate == "session_info_update" {
				out = append(out, p.Update.Title+"@"+p.Update.UpdatedAt)
			}
		}
		return out
	}
	got := titles(c.until(c.send("session/prompt", prompt(s, "fix the bug\nin main.go"))))
	if len(got) != 1 || !strings.HasPrefix(got[0], "fix the bug@20") {
		t.Errorf("the first turn's title updates: %v", got)
	}
	if got := titles(c.until(c.send("session/prompt", prompt(s, "and another")))); len(got) != 0 {
		t.Errorf("the second turn's title updates: %v", got)
	}
}

// The end of input with a permission request waiting for the editor: it
// is rejected at once, and the agent told that nobody can answer, not
// that the user rejected the call.
func TestEndOfInputRejectsAskedCall(t *testing.T) {
	c := start(t, loadDefs(t), "")
	s := c.newSession()
	id := c.send("session/prompt", prompt(s, "!tool=Bash\nmake deploy"))
	var got []map[string]json.RawMessage
	deadline := time.After(20 * time.Second)
	for asked := false; !asked; {
		select {
		case m := <-c.msgs:
			got = append(got, m)
			asked = string(m["method"]) == `"session/request_permission"`
		case <-deadline:
			t.Fatalf("no permission request; got %d messages", len(got))
		}
	}
	c.in.Close()
	ms := c.until(id)
	var said string
	for _, m := range ms {
		said += string(m["params"])
	}
	if !strings.Contains(said, "Nobody can answer: the editor's input has ended.") || strings.Contains(said, "The user rejected") {
		t.Errorf("the agent was not told the input ended:\n%s", said)
	}
}
