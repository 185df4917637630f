package codex

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/protocol"
	"github.com/tidwall/gjson"
)

// replies records what the translator answered the server; sent hears of
// each answer (an approval's comes from a goroutine of its own).
type replies struct {
	mu   sync.Mutex
	got  []string
	sent chan struct{}
}

func newReplies() *replies { return &replies{sent: make(chan struct{}, 16)} }

func (r *replies) add(s string) error {
	r.mu.Lock()
	r.got = append(r.got, s)
	r.mu.Unlock()
	r.sent <- struct{}{}
	return nil
}

func (r *replies) reply(id json.RawMessage, result any) error {
	b, _ := json.Marshal(result)
	return r.add(string(id) + " " + string(b))
}

func (r *replies) refuse(id json.RawMessage, msg string) error {
	return r.add(string(id) + " error " + msg)
}

// call records a call (thread/inject_items) as "call METHOD PARAMS".
func (r *replies) call(_ context.Context, method string, params any) (gjson.Result, error) {
	b, _ := json.Marshal(params)
	return gjson.Result{}, r.add("call " + method + " " + string(b))
}

// wait waits for n answers, failing after 5 s.
func (r *replies) wait(t *testing.T, n int) []string {
	t.Helper()
	for range n {
		select {
		case <-r.sent:
		case <-time.After(5 * time.Second):
			t.Fatalf("fewer than %d answers within 5s", n)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

// session is a recorded app-server session (the pinned codex, from
// ../shared/transcripts/codex-app-server) as the server's messages.
func session(t *testing.T, name string) []rpcMsg {
	f, err := os.Open("testdata/sessions/" + name + ".out.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var msgs []rpcMsg
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		m := gjson.ParseBytes(sc.Bytes())
		if !m.Get("method").Exists() {
			continue // a response to one of the recorder's calls
		}
		msg := rpcMsg{Method: m.Get("method").Str, Params: m.Get("params")}
		if id := m.Get("id"); id.Exists() {
			msg.ID = json.RawMessage(id.Raw)
		}
		msgs = append(msgs, msg)
	}
	return msgs
}

// replayTurns feeds a session through one translator per turn (a turn
// starts at turn/started), with ask answering any approval request.
func replayTurns(t *testing.T, name string, ask func(host.Ask) host.Answer) (turns [][]protocol.AgentEvent, ends []error, r *replies) {
	r = newReplies()
	var x *translator
	var evs []protocol.AgentEvent
	for _, m := range session(t, name) {
		if m.Method == "turn/started" {
			evs = nil
			turn := &host.Turn{Emit: func(e protocol.AgentEvent) { evs = append(evs, e) }, Log: func(string, string) {}, Ask: ask}
			x = &translator{t: turn, srv: r, thread: m.Params.Get("threadId").Str, turn: m.Params.Get("turn.id").Str, inputs: map[string]json.RawMessage{}}
		}
		if x == nil {
			continue
		}
		if done, err := x.handle(m); done {
			turns, ends = append(turns, evs), append(ends, err)
			x = nil
		}
	}
	return turns, ends, r
}

func types(evs []protocol.AgentEvent) string {
	var s []string
	for _, e := range evs {
		s = append(s, e.Type)
	}
	return strings.Join(s, " ")
}

func TestTranslateTwoTurns(t *testing.T) {
	turns, ends, _ := replayTurns(t, "basic-two-turns", nil)
	if len(turns) != 2 || ends[0] != nil || ends[1] != nil {
		t.Fatalf("%d turns, ends %v", len(turns), ends)
	}
	for i, want := range []string{"first answer", "second answer"} {
		evs := turns[i]
		last := evs[len(evs)-1]
		if last.Type != protocol.EvCompleted || last.Text != want || last.SessionID == "" {
			t.Errorf("turn %d: %s, last %+v", i+1, types(evs), last)
		}
		// Per turn, not per thread: one model call of 20 in, 8 out.
		if last.Usage == nil || last.Usage.InputTokens != 20 || last.Usage.OutputTokens != 8 {
			t.Errorf("turn %d usage %+v", i+1, last.Usage)
		}
		if !strings.Contains(types(evs), "text_delta") || !strings.Contains(types(evs), "usage completed") {
			t.Errorf("turn %d: %s", i+1, types(evs))
		}
	}
}

func TestTranslateInterrupt(t *testing.T) {
	_, ends, _ := replayTurns(t, "interrupt", nil)
	if len(ends) != 2 || ends[0] != host.ErrInterrupted || ends[1] != nil {
		t.Fatalf("ends %v", ends)
	}
}

// An approval request goes to Ask with the command, and the answer goes
// back as codex's decision; a run that does not ask declines it.
func TestTranslateApproval(t *testing.T) {
	var asked []host.Ask
	var mu sync.Mutex
	ask := func(q host.Ask) host.Answer {
		mu.Lock()
		asked = append(asked, q)
		mu.Unlock()
		return host.Answer{Decision: protocol.DecisionAllow, By: protocol.ResolvedByDaemon}
	}
	turns, ends, r := replayTurns(t, "approval-untrusted-accept", ask)
	if got := r.wait(t, 1); len(got) != 1 || got[0] != `0 {"decision":"accept"}` {
		t.Errorf("replies %v", got)
	}
	mu.Lock()
	if len(asked) != 1 || asked[0].Tool != "command" || !strings.Contains(string(asked[0].Input), `echo approved > approved.txt`) {
		t.Fatalf("asked %+v", asked)
	}
	mu.Unlock()
	if len(turns) != 1 || ends[0] != nil || !strings.Contains(types(turns[0]), "tool_call tool_result") {
		t.Errorf("turns %v ends %v", turns, ends)
	}

	turns, _, r = replayTurns(t, "approval-untrusted-decline", nil)
	if got := r.wait(t, 1); len(got) != 1 || got[0] != `0 {"decision":"decline"}` {
		t.Errorf("no Ask: replies %v", got)
	}
	var result protocol.AgentEvent
	for _, e := range turns[0] {
		if e.Type == protocol.EvToolResult {
			result = e
		}
	}
	if !result.IsError {
		t.Errorf("a declined command's result %+v", result)
	}
	for _, c := range []struct {
		a    host.Answer
		want string
	}{
		{host.Answer{Decision: "allow_session"}, decisionAcceptForSession},
		{host.Answer{Decision: "deny", By: "daemon"}, decisionDecline},
		{host.Answer{Decision: "deny", By: "timeout"}, decisionDecline},
		{host.Answer{Decision: "deny", By: "interrupt"}, decisionCancel},
		{host.Answer{Decision: "deny", By: protocol.ResolvedByShutdown}, decisionCancel},
	} {
		if got := decision(c.a); got != c.want {
			t.Errorf("%+v: %s, want %s", c.a, got, c.want)
		}
	}
}

// Requests the backend does not serve are refused, never left waiting.
func TestTranslateRefusesOtherRequests(t *testing.T) {
	r := newReplies()
	x := &translator{t: &host.Turn{Emit: func(protocol.AgentEvent) {}, Log: func(string, string) {}}, srv: r, thread: "th", inputs: map[string]json.RawMessage{}}
	x.handle(rpcMsg{Method: "item/tool/call", ID: json.RawMessage("7"), Params: gjson.Parse(`{"threadId":"th"}`)})
	x.handle(rpcMsg{Method: "item/commandExecution/requestApproval", ID: json.RawMessage("8"), Params: gjson.Parse(`{"threadId":"other"}`)})
	if got := r.wait(t, 2); len(got) != 2 || !strings.HasPrefix(got[0], "7 error") || !strings.HasPrefix(got[1], "8 error") {
		t.Errorf("replies %v", got)
	}
}

// A recorded session of the pinned codex (update_plan enabled in its
// config.toml) with an apply_patch turn, then an update_plan turn: the
// patch is a file_change call whose input carries codex's changes, diffs
// and all; the plan is a plan event, whole, in the protocol's statuses.
func TestTranslatePatchAndPlan(t *testing.T) {
	turns, ends, _ := replayTurns(t, "patch-and-plan", nil)
	if len(turns) != 2 || ends[0] != nil || ends[1] != nil {
		t.Fatalf("%d turns, ends %v", len(turns), ends)
	}
	var call *protocol.AgentEvent
	for i, e := range turns[0] {
		if e.Type == protocol.EvToolCall {
			call = &turns[0][i]
		}
	}
	if call == nil || call.Name != "file_change" {
		t.Fatalf("turn 1: %s", types(turns[0]))
	}
	changes := gjson.GetBytes(call.Input, "changes")
	if d := changes.Get("0.diff").Str; changes.Get("0.kind.type").Str != "update" || d != "@@ -2,3 +2,3 @@\n two\n-three\n+THREE\n four\n" {
		t.Errorf("the update: %s", changes.Get("0"))
	}
	if changes.Get("1.kind.type").Str != "add" || changes.Get("1.diff").Str != "new file\n" {
		t.Errorf("the add: %s", changes.Get("1"))
	}
	var plan *protocol.AgentEvent
	for i, e := range turns[1] {
		if e.Type == protocol.EvPlan {
			plan = &turns[1][i]
		}
	}
	want := []protocol.PlanStep{{Step: "read", Status: protocol.PlanCompleted}, {Step: "write", Status: protocol.PlanInProgress}, {Step: "test", Status: protocol.PlanPending}}
	if plan == nil || plan.Text != "why" || !reflect.DeepEqual(plan.Plan, want) {
		t.Errorf("turn 2: %s, plan %+v", types(turns[1]), plan)
	}
}

// A call a cancel cut short (codex says no more of it once the turn is
// interrupted) ends failed, once, before the turn does; its id, in the
// call, the approval and the result, is its turn's and its item's, as a
// replayed history has it.
func TestTranslateInterruptedCall(t *testing.T) {
	var asked []host.Ask
	var mu sync.Mutex
	ask := func(q host.Ask) host.Answer {
		mu.Lock()
		asked = append(asked, q)
		mu.Unlock()
		return host.Answer{Decision: protocol.DecisionDeny, By: protocol.ResolvedByInterrupt}
	}
	turns, ends, r := replayTurns(t, "approval-noanswer-then-interrupt", ask)
	r.wait(t, 1)
	if len(turns) != 1 || ends[0] != host.ErrInterrupted {
		t.Fatalf("turns %d, ends %v", len(turns), ends)
	}
	const id = "01a2315a-99d3-7921-847a-05f8b7a7ae36/call_fake000051"
	var calls, results []protocol.AgentEvent
	for _, e := range turns[0] {
		switch e.Type {
		case protocol.EvToolCall:
			calls = append(calls, e)
		case protocol.EvToolResult:
			results = append(results, e)
		}
	}
	if len(calls) != 1 || calls[0].ToolCallID != id {
		t.Errorf("calls %+v", calls)
	}
	if len(results) != 1 || results[0].ToolCallID != id || !results[0].IsError {
		t.Errorf("results %+v", results)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0].ToolCallID != id {
		t.Errorf("asked %+v", asked)
	}
}
