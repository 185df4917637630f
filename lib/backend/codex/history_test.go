package codex

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// A thread's turns read back: user and agent messages, reasoning, and tool
// items as call then result with the status they ended with (declined is
// a failure; a call still in progress has no result); call ids made unique
// by their turn's.
func TestThreadHistory(t *testing.T) {
	thread := gjson.Parse(`{"id":"th","turns":[
	 {"id":"u1","items":[
	  {"type":"userMessage","id":"i0","content":[{"type":"text","text":"SAY hi"}]},
	  {"type":"reasoning","id":"i1","summary":["think"],"content":[]},
	  {"type":"commandExecution","id":"call_1","command":"echo hi","aggregatedOutput":"hi\n","exitCode":0,"status":"completed"},
	  {"type":"agentMessage","id":"i2","text":"hi"}]},
	 {"id":"u2","items":[
	  {"type":"userMessage","id":"i3","content":[{"type":"text","text":"write"}]},
	  {"type":"commandExecution","id":"call_1","command":"touch x","status":"declined"},
	  {"type":"commandExecution","id":"call_2","command":"sleep 9","status":"inProgress"}]}]}`)
	var got []string
	for _, s := range threadHistory(thread, nil) {
		if s.User != "" {
			got = append(got, "user:"+s.User)
			continue
		}
		e := s.Event
		got = append(got, e.Type+":"+e.ToolCallID+":"+e.Text+e.Output)
		if e.IsError {
			got[len(got)-1] += ":error"
		}
	}
	want := "user:SAY hi|thinking::think|tool_call:u1/call_1:|tool_result:u1/call_1:hi\n|text::hi|user:write|tool_call:u2/call_1:|tool_result:u2/call_1:declined:error|tool_call:u2/call_2:"
	if g := strings.Join(got, "|"); g != want {
		t.Errorf("history\n got %q\nwant %q", g, want)
	}
}

// The calls thread/resume leaves out come from the thread's rollout (a
// real one, recorded from the pinned codex through agent-host --acp and
// cut to its turns, calls and answers): declined, cancelled while it
// ran, and run after the app-server restarted on the thread; each in its
// place before the turn's answer, failed; a call the thread has is not
// repeated.
func TestThreadHistoryFromRollout(t *testing.T) {
	turn := func(id, user, item, answer string) string {
		s := `{"id":"` + id + `","items":[{"type":"userMessage","id":"u` + id + `","content":[{"type":"text","text":"` + user + `"}]}`
		if item != "" {
			s += "," + item
		}
		if answer != "" {
			s += `,{"type":"agentMessage","id":"a` + id + `","text":"` + answer + `"}`
		}
		return s + "]}"
	}
	thread := gjson.Parse(`{"id":"th","path":"testdata/rollout-acp.jsonl","turns":[` +
		turn("01a24075-b594-76c0-a83d-f6a272391d51", "allow", `{"type":"commandExecution","id":"call_1","command":"/bin/bash -lc 'echo hello > out.txt'","aggregatedOutput":"","exitCode":0,"status":"completed"}`, "wrote") + "," +
		turn("01a24075-b725-7b90-9bde-a7c176d4c073", "reject", "", "rejected") + "," +
		turn("01a24075-b8ca-74b2-9f1d-6b0fe18ce153", "long", "", "") + "," +
		turn("01a24075-beb3-7b80-a9f1-31cfd393bc48", "level 1", "", "read-only") + `]}`)
	var got []string
	for _, s := range threadHistory(thread, rolloutCalls(thread.Get("path").Str)) {
		if s.User != "" {
			got = append(got, "user:"+s.User)
			continue
		}
		e := s.Event
		g := e.Type + ":" + e.Text + string(e.Input)
		if e.IsError {
			g += ":failed"
		}
		got = append(got, g)
	}
	want := `user:allow|tool_call:{"command":"/bin/bash -lc 'echo hello > out.txt'"}|tool_result:|text:wrote|` +
		`user:reject|tool_call:{"command":"echo hello > out.txt"}|tool_result::failed|text:rejected|` +
		`user:long|tool_call:{"command":"python3 -c 'import time; time.sleep(4817)' && touch late.txt"}|tool_result::failed|` +
		`user:level 1|tool_call:{"command":"echo hello > out.txt"}|tool_result::failed|text:read-only`
	if g := strings.Join(got, "|"); g != want {
		t.Errorf("history\n got %s\nwant %s", g, want)
	}
}

// A call of codex's plan tool (recorded from the pinned codex, its plan
// tool on) is in the rollout only: it comes back as the plan it set, not
// as a tool call.
func TestThreadHistoryPlan(t *testing.T) {
	thread := gjson.Parse(`{"id":"th","path":"testdata/rollout-plan.jsonl","turns":[{"id":"01a24091-76a1-7c01-b125-10980716151b","items":[` +
		`{"type":"userMessage","id":"u1","content":[{"type":"text","text":"plan"}]},{"type":"agentMessage","id":"a1","text":"TOOL_RESULT(False): Plan updated"}]}]}`)
	var got []string
	for _, s := range threadHistory(thread, rolloutCalls(thread.Get("path").Str)) {
		if s.User != "" {
			got = append(got, "user")
			continue
		}
		g := s.Event.Type
		for _, st := range s.Event.Plan {
			g += " " + st.Step + ":" + st.Status
		}
		got = append(got, g)
	}
	if g := strings.Join(got, "|"); g != "user|plan read:completed write:in_progress test:pending|text" {
		t.Errorf("history %s", g)
	}
}
