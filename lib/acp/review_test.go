package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/agentry/agentry/lib/await"
	"github.com/agentry/agentry/lib/backend/echo"
	"github.com/agentry/agentry/lib/host"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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

// The end of input while a permission request waits for the client: no
// answer can come any more, so the request is rejected at once and the turn
// is cancelled, rather than waiting for the drain timeout.
func TestEndOfInputRejectsPendingPermission(t *testing.T) {
	d := loadDefs(t)
	c := startOpts(t, d, Options{Host: host.Options{Backend: "echo", Version: "test", MaxLine: 1 << 20, DrainTimeout: time.Hour,
		InterruptGrace: time.Second, Factory: func(string, json.RawMessage) (host.Backend, error) { return echo.New(nil) }},
		Warn: func(msg string) { t.Logf("warn: %s", msg) }})
	asked := make(chan struct{})
	never := make(chan struct{})
	t.Cleanup(func() { close(never) })
	c.answer = func(json.RawMessage) any { close(asked); <-never; return nil } // answers only after the test
	s := c.newSession()
	id := c.send("session/prompt", prompt(s, "!tool=Bash\ntouch x"))
	<-asked
	c.in.Close()
	ms := c.until(id)
	if r := stopReason(t, ms[len(ms)-1]); r != "cancelled" {
		t.Errorf("stopReason %q", r)
	}
	if _, seq := updates(t, ms); !contains(seq, "tool_call_update:failed") {
		t.Errorf("updates %v: the call unanswered at the end of input is not failed", seq)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// A permission request the turn no longer waits for (the session closed
// while the client was asking) is withdrawn with $/cancel_request, so that
// the editor stops asking its user.
func TestCloseWithdrawsPermissionRequest(t *testing.T) {
	c := start(t, loadDefs(t), "")
	s := c.newSession()
	p := c.send("session/prompt", prompt(s, "!tool=Bash\ntouch x"))
	var reqID json.RawMessage
	for reqID == nil {
		m := <-c.msgs
		if string(m["method"]) == `"session/request_permission"` {
			reqID = m["id"]
		}
	}
	ms := c.until(c.send("session/close", map[string]any{"sessionId": s}))
	withdrawn, answered := -1, -1
	for i, m := range ms {
		if string(m["method"]) == `"$/cancel_request"` {
			var n struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			_ = json.Unmarshal(m["params"], &n)
			if string(n.RequestID) == string(reqID) {
				withdrawn = i
			}
		}
		if m["method"] == nil && string(m["id"]) == p {
			answered = i
		}
	}
	if withdrawn < 0 || answered < 0 || withdrawn > answered {
		t.Errorf("request %s withdrawn at message %d, the prompt answered at %d: want it withdrawn before the answer", reqID, withdrawn, answered)
	}
}

// Cancels racing the end of turns, permission answers racing cancels:
// every prompt is answered exactly once, and nothing of a turn (its tool
// call, by id) comes after its answer.
func TestCancelRaces(t *testing.T) {
	c := start(t, loadDefs(t), "")
	var n atomic.Int64
	c.answer = func(json.RawMessage) any {
		opt := []string{"allow", "reject", "allow_session"}[n.Add(1)%3]
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": opt}}
	}
	s := c.newSession()
	const turns = 40
	ids := map[string]int{}
	var seen []map[string]json.RawMessage
	for i := 0; i < turns; i++ {
		text := "!tool=Bash\ntouch x"
		if i%2 == 1 {
			text = "!slow=1ms\na b c d e f"
		}
		ids[c.send("session/prompt", prompt(s, text))] = i + 1
		for k := 0; k < i%4; k++ {
			seen = append(seen, <-c.msgs) // let the turn go a little way
		}
		if i%3 != 2 {
			c.notify("session/cancel", map[string]any{"sessionId": s})
		}
	}
	// Every prompt's answer, then a request answered after them all.
	answers := 0
	for i := 0; answers < turns; i++ {
		if i == len(seen) {
			seen = append(seen, c.nextMsg(t))
		}
		if m := seen[i]; m["method"] == nil && ids[string(m["id"])] > 0 {
			answers++
		}
	}
	seen = append(seen, c.until(c.send("session/list", map[string]any{}))...)
	answered := map[int]int{}
	for _, m := range seen {
		if m["method"] == nil {
			if turn := ids[string(m["id"])]; turn > 0 {
				answered[turn]++
			}
			continue
		}
		if string(m["method"]) != `"session/update"` {
			continue
		}
		var p struct {
			Update update `json:"update"`
		}
		_ = json.Unmarshal(m["params"], &p)
		for turn := range answered {
			if p.Update.ToolCallID != "" && strings.Contains(p.Update.ToolCallID, fmt.Sprintf("%s.%d-", s, turn)) {
				t.Errorf("turn %d's update %s came after its answer", turn, m["params"])
			}
		}
	}
	for turn := 1; turn <= turns; turn++ {
		if answered[turn] != 1 {
			t.Errorf("turn %d answered %d times", turn, answered[turn])
		}
	}
}

// nextMsg is the next message from the agent, within 20 s.
func (c *client) nextMsg(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	select {
	case m, ok := <-c.msgs:
		if !ok {
			t.Fatal("the agent's output ended")
		}
		return m
	case <-time.After(20 * time.Second):
		t.Fatal("no message from the agent within 20s")
	}
	return nil
}

// A request whose id is neither a string, a number nor null is answered
// with id null: an id JSON-RPC forbids is never echoed.
func TestInvalidIDAnsweredWithNull(t *testing.T) {
	c := start(t, loadDefs(t), "")
	for _, id := range []string{`{"a":1}`, `[1]`, `true`} {
		c.write(`{"jsonrpc":"2.0","id":` + id + `,"method":"initialize","params":{"protocolVersion":1}}`)
		m := c.nextMsg(t)
		if string(m["id"]) != "null" || !strings.Contains(string(m["error"]), "-32600") {
			t.Errorf("id %s: answered %s %s", id, m["id"], m["error"])
		}
	}
}

// $/cancel_request for a prompt cancels that prompt alone: the running
// one is interrupted and answered cancelled, and one queued behind it
// still runs; one queued is dropped, and the one running goes on.
func TestCancelRequestCancelsThatPrompt(t *testing.T) {
	c := start(t, loadDefs(t), "")
	s := c.newSession()
	cancelReq := func(id string) {
		c.write(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":` + id + `}}`)
	}
	first := c.send("session/prompt", prompt(s, "!sleep=30s\nnever"))
	second := c.send("session/prompt", prompt(s, "second"))
	cancelReq(first)
	ms := c.until(first)
	if r := stopReason(t, ms[len(ms)-1]); r != "cancelled" {
		t.Errorf("the prompt cancelled: %q", r)
	}
	ms = c.until(second)
	if r := stopReason(t, ms[len(ms)-1]); r != "end_turn" {
		t.Errorf("the prompt after it: %q", r)
	}

	// The running turn waits for a permission answer the test holds back
	// until the queued prompt's cancel has been read.
	release := make(chan struct{})
	c.answer = func(json.RawMessage) any {
		<-release
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow"}}
	}
	running := c.send("session/prompt", prompt(s, "!tool=Bash\ntouch x"))
	queued := c.send("session/prompt", prompt(s, "queued"))
	cancelReq(queued)
	// A request answered at once, read after the cancel: the cancel has
	// been handled when its answer comes.
	c.until(c.send("session/set_mode", map[string]any{"sessionId": s, "modeId": "level-2-ask"}))
	close(release)
	ms = c.until(running)
	if r := stopReason(t, ms[len(ms)-1]); r != "end_turn" {
		t.Errorf("the running prompt: %q", r)
	}
	ms = c.until(queued)
	if r := stopReason(t, ms[len(ms)-1]); r != "cancelled" {
		t.Errorf("the queued prompt cancelled: %q", r)
	}
}

// A mode change sent right before a prompt, without waiting for its
// answer, is the grant of that prompt's turn: the two are taken in the
// order they were read.
func TestModeChangeBeforePromptInOrder(t *testing.T) {
	c := start(t, loadDefs(t), "")
	c.answer = func(json.RawMessage) any {
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow"}}
	}
	s := c.newSession() // level 2, asking
	for i := 0; i < 20; i++ {
		set := c.send("session/set_config_option", map[string]any{"sessionId": s, "configId": "mode", "value": "level-2"})
		p := c.send("session/prompt", prompt(s, "!tool=Bash\ntouch made.txt"))
		back := c.send("session/set_mode", map[string]any{"sessionId": s, "modeId": "level-2-ask"})
		ms := c.untilAll(t, set, p, back)
		if _, seq := updates(t, ms); contains(seq, "request_permission") {
			t.Fatalf("round %d: asked, at the mode set before the prompt that does not ask: %v", i, seq)
		}
	}
}

// untilAll reads messages until every request of ids is answered.
func (c *client) untilAll(t *testing.T, ids ...string) []map[string]json.RawMessage {
	t.Helper()
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var ms []map[string]json.RawMessage
	for len(want) > 0 {
		m := c.nextMsg(t)
		ms = append(ms, m)
		if m["method"] == nil {
			delete(want, string(m["id"]))
		}
	}
	return ms
}

// A response-shaped line is never answered, even one JSON-RPC would not
// match to a request (id null, as a client's parse error comes back): an
// answer to it could start two peers answering each other without end.
func TestResponseShapedLinesNotAnswered(t *testing.T) {
	c := start(t, loadDefs(t), "")
	c.write(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)
	c.write(`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"}}`)
	c.write(`{"jsonrpc":"2.0","id":null,"result":{}}`)
	c.write(`{"jsonrpc":"2.0","id":77,"result":{}}`)
	id := c.send("initialize", map[string]any{"protocolVersion": 1})
	if m := c.nextMsg(t); string(m["id"]) != id {
		t.Errorf("a response-shaped line was answered: %s %s", m["id"], m["error"])
	}
}

// A request with id null is a request, as JSON-RPC and the official SDK
// take it: answered, with id null. Only a line without an id is a
// notification.
func TestNullIDRequestAnswered(t *testing.T) {
	c := start(t, loadDefs(t), "")
	c.mu.Lock()
	c.method["null"] = "initialize"
	c.mu.Unlock()
	c.write(`{"jsonrpc":"2.0","id":null,"method":"initialize","params":{"protocolVersion":1}}`)
	m := c.nextMsg(t)
	if string(m["id"]) != "null" || m["result"] == nil {
		t.Errorf("answered %s: %s %s", m["id"], m["result"], m["error"])
	}
}

// A permission request the host's deadline decided (a rejection) is
// withdrawn when the call gets its result, while the turn goes on: the
// editor does not keep asking about a call that is over.
func TestDeadlineWithdrawsPermissionRequest(t *testing.T) {
	c := startOpts(t, loadDefs(t), Options{Host: host.Options{Backend: "echo", Version: "test", MaxLine: 1 << 20, DrainTimeout: 5 * time.Second,
		InterruptGrace: time.Second, Factory: func(string, json.RawMessage) (host.Backend, error) { return echo.New(nil) }},
		Warn: func(msg string) { t.Logf("warn: %s", msg) }, PermissionTimeout: 50 * time.Millisecond})
	s := c.newSession()
	// Never answered; the turn runs on for minutes after the call.
	p := c.send("session/prompt", prompt(s, "!tool=Bash\n!slow=100s\ntouch x and then some"))
	var reqID json.RawMessage
	var seq []string
	for {
		m := c.nextMsg(t)
		_, s := updates(t, []map[string]json.RawMessage{m})
		seq = append(seq, s...)
		if string(m["method"]) == `"session/request_permission"` {
			reqID = m["id"]
		}
		if string(m["method"]) == `"$/cancel_request"` && reqID != nil && strings.Contains(string(m["params"]), string(reqID)) {
			break
		}
		if m["method"] == nil && string(m["id"]) == p {
			t.Fatalf("the turn ended before the request was withdrawn: %v", seq)
		}
	}
	c.notify("session/cancel", map[string]any{"sessionId": s})
	_, rest := updates(t, c.until(p))
	if seq = append(seq, rest...); !contains(seq, "tool_call_update:failed") {
		t.Errorf("updates %v: the call denied at the deadline is not failed", seq)
	}
}

// Serve stopped by its context leaves no goroutine reading its input
// behind, once the input has something more to read or ends.
func TestServeLeavesNoReader(t *testing.T) {
	inR, inW := io.Pipe()
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, Options{Host: host.Options{Backend: "echo", Version: "test", MaxLine: 1 << 20, DrainTimeout: time.Second,
			InterruptGrace: time.Second, Factory: func(string, json.RawMessage) (host.Backend, error) { return echo.New(nil) }}}, inR, io.Discard)
	}()
	stop()
	<-served
	// The reader, blocked reading, gets a line and then the end of input.
	go func() {
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`+"\n")
		inW.Close()
	}()
	gone := await.Until(10*time.Second, func() bool {
		buf := make([]byte, 1<<20)
		return !strings.Contains(string(buf[:runtime.Stack(buf, true)]), "acp.(*agent).read(")
	})
	if !gone {
		t.Error("the goroutine reading the input is still there after Serve returned")
	}
}

// A signal ends Serve, and every backend process, even when the client
// reads nothing and a write to it blocks for good.
func TestSignalWithClientNotReading(t *testing.T) {
	inR, inW := io.Pipe()
	outW := &stuckWriter{writing: make(chan struct{}), release: make(chan struct{})}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, Options{Host: host.Options{Backend: "echo", Version: "test", MaxLine: 1 << 20, DrainTimeout: time.Hour,
			InterruptGrace: 100 * time.Millisecond, Factory: func(string, json.RawMessage) (host.Backend, error) { return echo.New(nil) }},
			Warn: func(msg string) { t.Logf("warn: %s", msg) }}, inR, outW)
	}()
	// Answered on the reading loop: its write blocks.
	go func() {
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`+"\n")
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`+"\n")
	}()
	<-outW.writing
	stop()
	select {
	case <-served:
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return after the signal, the client reading nothing")
	}
	inW.Close()
	close(outW.release)
}

// stuckWriter is a client that reads nothing: a write blocks until
// release, and says it has begun on writing.
type stuckWriter struct {
	once             sync.Once
	writing, release chan struct{}
}

func (w *stuckWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.writing) })
	<-w.release
	return 0, io.ErrClosedPipe
}

// The end of input ends Serve after the drain, even when the client reads
// nothing and a write to it blocks for good.
func TestEndOfInputWithClientNotReading(t *testing.T) {
	inR, inW := io.Pipe()
	outW := &stuckWriter{writing: make(chan struct{}), release: make(chan struct{})}
	served := make(chan error, 1)
	go func() {
		served <- Serve(context.Background(), Options{Host: host.Options{Backend: "echo", Version: "test", MaxLine: 1 << 20,
			DrainTimeout: 100 * time.Millisecond, InterruptGrace: 100 * time.Millisecond,
			Factory: func(string, json.RawMessage) (host.Backend, error) { return echo.New(nil) }},
			Warn: func(msg string) { t.Logf("warn: %s", msg) }}, inR, outW)
	}()
	go func() {
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`+"\n")
		inW.Close()
	}()
	<-outW.writing
	select {
	case <-served:
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return after the end of input, the client reading nothing")
	}
	close(outW.release)
}
