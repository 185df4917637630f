package claude

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/protocol"
	"github.com/tidwall/gjson"
)

// replay feeds a recorded claude stream through the translator, turn by
// turn, and returns each turn's events and ending.
func replay(t *testing.T, name string) (turns [][]protocol.AgentEvent, ends []error) {
	f, err := os.Open("testdata/" + name + ".stdout")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := &Backend{chats: map[string]*chat{}}
	c := b.chat("c1")
	var evs []protocol.AgentEvent
	turnOf := func() *host.Turn {
		return &host.Turn{Emit: func(e protocol.AgentEvent) { evs = append(evs, e) }, Log: func(string, string) {}}
	}
	x := &translator{t: turnOf(), c: c, b: b}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if done, err := x.line(sc.Bytes()); done {
			turns, ends = append(turns, evs), append(ends, err)
			evs = nil
			x = &translator{t: turnOf(), c: c, b: b}
		}
	}
	return turns, ends
}

func kinds(evs []protocol.AgentEvent) string {
	var k []string
	for _, e := range evs {
		k = append(k, e.Type)
	}
	return strings.Join(k, " ")
}

func TestTranslateInterrupt(t *testing.T) {
	turns, ends := replay(t, "stream-interrupt")
	if len(turns) != 2 {
		t.Fatalf("%d turns", len(turns))
	}
	if ends[0] != host.ErrInterrupted {
		t.Errorf("the aborted turn ended %v", ends[0])
	}
	if got := kinds(turns[0]); !strings.HasPrefix(got, "text_delta text_delta text_delta text_delta text_delta text") {
		t.Errorf("aborted turn events: %s", got)
	}
	if ends[1] != nil || kinds(turns[1]) != "text_delta text usage completed" || turns[1][3].Text != "AFTER-INTERRUPT" {
		t.Errorf("next turn: %s %v", kinds(turns[1]), ends[1])
	}
}

func TestTranslateTools(t *testing.T) {
	turns, ends := replay(t, "level2-write-multiblock")
	if len(turns) != 1 || ends[0] != nil {
		t.Fatalf("%d turns, %v", len(turns), ends)
	}
	got := kinds(turns[0])
	if !strings.Contains(got, "tool_call") || !strings.Contains(got, "tool_result") || !strings.HasSuffix(got, "usage completed") {
		t.Errorf("events: %s", got)
	}
	for _, e := range turns[0] {
		if e.Type == protocol.EvToolCall && (e.ToolCallID == "" || e.Name == "" || len(e.Input) == 0) {
			t.Errorf("tool_call without id, name or input: %+v", e)
		}
		if e.Type == protocol.EvToolResult && e.ToolCallID == "" {
			t.Errorf("tool_result without id: %+v", e)
		}
	}
}

func TestTranslateAPIError(t *testing.T) {
	turns, ends := replay(t, "err500-streamjson")
	info, ok := ends[0].(*protocol.ErrorInfo)
	if len(turns) != 1 || !ok || !info.Retryable || !strings.Contains(info.Message, "500") {
		t.Fatalf("API 500: %v", ends)
	}
}

// What Claude Code is told for each resolution of a can_use_tool request
// (the shapes recorded in ../shared/transcripts/claude-permissions).
func TestPermissionResult(t *testing.T) {
	req := gjson.Parse(`{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"python3 -c 1"},
		"permission_suggestions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"python3 -c 1"}],"behavior":"allow","destination":"localSettings"}]}`)
	q := canUseTool(req)
	if q.Tool != "Bash" || string(q.Input) != `{"command":"python3 -c 1"}` || strings.Join(q.Choices, ",") != "allow,allow_session,deny" {
		t.Errorf("ask %+v", q)
	}
	cases := []struct {
		a    host.Answer
		want string
	}{
		{host.Answer{Decision: "allow", By: "daemon"}, `{"behavior":"allow","updatedInput":{"command":"python3 -c 1"}}`},
		{host.Answer{Decision: "allow", Input: json.RawMessage(`{"command":"true"}`), By: "daemon"}, `{"behavior":"allow","updatedInput":{"command":"true"}}`},
		{host.Answer{Decision: "allow_session", By: "daemon"}, `{"behavior":"allow","updatedInput":{"command":"python3 -c 1"},"updatedPermissions":[{"behavior":"allow","destination":"session","rules":[{"ruleContent":"python3 -c 1","toolName":"Bash"}],"type":"addRules"}]}`},
		{host.Answer{Decision: "deny", Message: "no", By: "daemon"}, `{"behavior":"deny","message":"no"}`},
		{host.Answer{Decision: "deny", By: "timeout"}, `{"behavior":"deny","message":"The host denied this tool call."}`},
		{host.Answer{Decision: "deny", Message: "The run was interrupted.", By: "interrupt"}, `{"behavior":"deny","interrupt":true,"message":"The run was interrupted."}`},
	}
	for _, c := range cases {
		b, _ := json.Marshal(permissionResult(req, c.a))
		if string(b) != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.a, b, c.want)
		}
	}
	if q := canUseTool(gjson.Parse(`{"tool_name":"Write","input":{},"blocked_path":"/w/x"}`)); q.Description != "(writes /w/x)" || len(q.Choices) != 2 {
		t.Errorf("no suggestions: %+v", q)
	}
}

// A session record read back: the user's words without the CLI's own
// reminders, meta lines and interrupt notes; the agent's text, thinking,
// tool calls and results in order; side chains left out.
func TestReadHistory(t *testing.T) {
	rec := `{"type":"summary","summary":"x"}
{"type":"user","message":{"role":"user","content":"<system-reminder>\nbe nice\n</system-reminder>\n\nSAY hello"},"sessionId":"s"}
{"type":"assistant","message":{"content":[{"type":"thinking","thinking":"hmm"}]}}
{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]}}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"a.go","is_error":false}]}}
{"type":"user","isMeta":true,"message":{"content":"Caveat: the messages below"}}
{"type":"assistant","isSidechain":true,"message":{"content":[{"type":"text","text":"side"}]}}
{"type":"assistant","message":{"content":[{"type":"text","text":"hello"}]}}
{"type":"user","message":{"content":[{"type":"text","text":"[Request interrupted by user]"}]}}
not json
`
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	said, err := readHistory(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range said {
		if s.User != "" {
			got = append(got, "user:"+s.User)
		} else {
			got = append(got, s.Event.Type+":"+s.Event.Text+s.Event.Name+s.Event.Output)
		}
	}
	want := "user:SAY hello|thinking:hmm|tool_call:Bash|tool_result:a.go|text:hello"
	if g := strings.Join(got, "|"); g != want {
		t.Errorf("history\n got %s\nwant %s", g, want)
	}
}

// A turn with images sends them as the Messages API's image blocks, before
// the prompt's text; one without sends the prompt as a string.
func TestUserContent(t *testing.T) {
	plain, _ := json.Marshal(userContent(protocol.ChatRunParams{Prompt: "hi"}))
	if string(plain) != `"hi"` {
		t.Errorf("text only: %s", plain)
	}
	at := []protocol.Attachment{{Type: protocol.AttachmentImage, MimeType: "image/png", Data: "iVBORw0KGgo="}}
	b, _ := json.Marshal(userContent(protocol.ChatRunParams{Prompt: "what is this?", Attachments: at}))
	want := `[{"source":{"data":"iVBORw0KGgo=","media_type":"image/png","type":"base64"},"type":"image"},{"text":"what is this?","type":"text"}]`
	if string(b) != want {
		t.Errorf("with an image:\n got %s\nwant %s", b, want)
	}
	b, _ = json.Marshal(userContent(protocol.ChatRunParams{Attachments: at}))
	if n := len(gjson.ParseBytes(b).Array()); n != 1 {
		t.Errorf("an image alone is %d blocks: %s", n, b)
	}
}

// The CLI's answer to the initialize control request a started CLI is sent
// (recorded from the pinned claude, its commands cut to five) is a
// commands event: each slash command, its description and argument hint.
func TestInitializeCommands(t *testing.T) {
	line, err := os.ReadFile("testdata/initialize-response.stdout")
	if err != nil {
		t.Fatal(err)
	}
	var evs []protocol.AgentEvent
	b := &Backend{chats: map[string]*chat{}}
	x := &translator{t: &host.Turn{Emit: func(e protocol.AgentEvent) { evs = append(evs, e) }, Log: func(string, string) {}}, c: b.chat("c1"), b: b}
	if done, _ := x.line([]byte(strings.TrimSpace(string(line)))); done || len(evs) != 1 || evs[0].Type != protocol.EvCommands {
		t.Fatalf("done %v, events %s", done, kinds(evs))
	}
	var got []string
	for _, c := range evs[0].Commands {
		got = append(got, c.Name+"|"+c.Hint)
	}
	if strings.Join(got, " ") != "verify| debug|[issue description] compact|<optional custom summarization instructions> context| init|" {
		t.Errorf("commands %q", got)
	}
	if d := evs[0].Commands[1].Description; d != "Enable debug logging for this session and help diagnose issues" {
		t.Errorf("debug's description %q", d)
	}
	// An answer to another request, or a failed one, says nothing.
	evs = nil
	x.line([]byte(`{"type":"control_response","response":{"subtype":"error","request_id":"agent-host-initialize","error":"no"}}`))
	x.line([]byte(`{"type":"control_response","response":{"subtype":"success","request_id":"interrupt-1","response":{}}}`))
	if len(evs) != 0 {
		t.Errorf("events %s", kinds(evs))
	}
}

// Level 3 is level 2's grant today, so a change between them keeps the
// CLI (and what it was allowed for the session); level 1's is another.
func TestSameGrant(t *testing.T) {
	b := &Backend{cfg: Config{Program: "/bin/claude"}}
	for _, asks := range []bool{false, true} {
		if !b.sameGrant(2, 3, asks) {
			t.Errorf("asks %v: levels 2 and 3 differ", asks)
		}
		if b.sameGrant(1, 2, asks) {
			t.Errorf("asks %v: levels 1 and 2 are the same", asks)
		}
	}
}
