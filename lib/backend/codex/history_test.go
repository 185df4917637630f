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
	for _, s := range threadHistory(thread) {
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
