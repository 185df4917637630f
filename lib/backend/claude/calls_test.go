package claude

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/grant"
	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/ndjson"
	"github.com/agentry/agentry/lib/policy"
	"github.com/agentry/agentry/lib/protocol"
	"github.com/tidwall/gjson"
)

// Each tool's call in a policy's terms.
func TestCallOf(t *testing.T) {
	for _, c := range []struct {
		tool, input string
		want        policy.Call
	}{
		{"Bash", `{"command":"git -C . push origin x","description":"push"}`, policy.Call{Tool: "Bash", Command: "git -C . push origin x"}},
		{"Write", `{"file_path":"/w/sub/.env","content":"x"}`, policy.Call{Tool: "Write", Writes: []string{"/w/sub/.env"}}},
		{"Edit", `{"file_path":"a.go","old_string":"a","new_string":"b"}`, policy.Call{Tool: "Edit", Writes: []string{"a.go"}}},
		{"MultiEdit", `{"file_path":"a.go","edits":[]}`, policy.Call{Tool: "MultiEdit", Writes: []string{"a.go"}}},
		{"NotebookEdit", `{"notebook_path":"n.ipynb","new_source":""}`, policy.Call{Tool: "NotebookEdit", Writes: []string{"n.ipynb"}}},
		{"Read", `{"file_path":"/w/.env"}`, policy.Call{Tool: "Read", Reads: []string{"/w/.env"}}},
		{"Grep", `{"pattern":"x","path":"src"}`, policy.Call{Tool: "Grep", Reads: []string{"src"}}},
		{"Glob", `{"pattern":"*.go"}`, policy.Call{Tool: "Glob", Reads: []string{"."}}},
		{"WebFetch", `{"url":"https://example.com/x","prompt":"p"}`, policy.Call{Tool: "WebFetch", Hosts: []string{"https://example.com/x"}}},
		{"WebSearch", `{"query":"q","allowed_domains":["go.dev"]}`, policy.Call{Tool: "WebSearch", Hosts: []string{"go.dev"}}},
		{"mcp__tools__echo", `{"text":"x"}`, policy.Call{Tool: "mcp__tools__echo"}},
	} {
		if got := callOf(c.tool, gjson.Parse(c.input)); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s %s: %+v, want %+v", c.tool, c.input, got, c.want)
		}
	}
}

// Granted is what the level's flags let run unasked.
func TestGranted(t *testing.T) {
	g, _ := grant.For(grant.Options{Level: 2, Harness: grant.Claude, Stream: true, MCPServers: map[string]json.RawMessage{"tools": json.RawMessage(`{}`)}})
	a := allowedOf(g)
	for tool, want := range map[string]bool{"Bash": true, "Read": true, "Write": true, "mcp__tools__echo": true, "mcp__other__x": false, "WebFetch": false, "Task": false} {
		if a.granted(tool) != want {
			t.Errorf("level 2: %s granted %v", tool, !want)
		}
	}
	g, _ = grant.For(grant.Options{Level: 2, Harness: grant.Claude, Stream: true, Ask: true})
	if a := allowedOf(g); a.granted("Bash") || !a.granted("Read") {
		t.Errorf("level 2 asking: Bash granted %v, Read %v", a.granted("Bash"), a.granted("Read"))
	}
}

// A policy's run answers the hook "ask", so the CLI asks for the call; a
// can_use_tool then reaches Turn.Ask with the call, the directory the
// hook was told the shell is in, and whether the level allows it. Another run's hook answer decides nothing.
func TestHookAndAsk(t *testing.T) {
	hook := `{"type":"control_request","request_id":"H1","request":{"subtype":"hook_callback","callback_id":"agentry-policy","input":{"cwd":"/w/sub","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/w/f.txt"},"tool_use_id":"toolu_2"},"tool_use_id":"toolu_2"}}`
	use := `{"type":"control_request","request_id":"U1","request":{"subtype":"can_use_tool","tool_name":"Read","input":{"file_path":"/w/f.txt"},"tool_use_id":"toolu_2"}}`
	for _, askAll := range []bool{true, false} {
		out := make(stdinLines, 4)
		g, _ := grant.For(grant.Options{Level: 2, Harness: grant.Claude, Stream: true, AskAll: true})
		var asked host.Ask
		tr := &host.Turn{AskAll: askAll, Ask: func(q host.Ask) host.Answer { asked = q; return host.Answer{Decision: "allow"} }}
		x := &translator{t: tr, p: &cli{out: newWriter(out), allowed: allowedOf(g)}}
		x.control(hook)
		got := gjson.Parse(waitLine(t, out))
		if d := got.Get("response.response.hookSpecificOutput.permissionDecision").Str; got.Get("response.request_id").Str != "H1" || (d == "ask") != askAll {
			t.Errorf("askAll %v: hook answer %s", askAll, got.Raw)
		}
		if !askAll {
			continue
		}
		x.control(use)
		got = gjson.Parse(waitLine(t, out))
		if got.Get("response.response.behavior").Str != "allow" || !asked.Granted || asked.Call.Tool != "Read" || fmt.Sprint(asked.Call.Reads) != "[/w/f.txt]" || asked.Call.Dir != "/w/sub" {
			t.Errorf("asked %+v, answered %s", asked, got.Raw)
		}
	}
}

// stdinLines is a CLI's stdin as a test reads it: each line written, in turn.
type stdinLines chan string

func (s stdinLines) Write(p []byte) (int, error) {
	s <- string(p)
	return len(p), nil
}

// newWriter is a CLI's stdin written to s.
func newWriter(s stdinLines) *ndjson.Writer { return ndjson.NewWriter(s) }

// waitLine waits for the next line written (answers are sent from
// goroutines of their own).
func waitLine(t *testing.T, s stdinLines) string {
	t.Helper()
	select {
	case l := <-s:
		return strings.TrimSuffix(l, "\n")
	case <-time.After(5 * time.Second):
		t.Fatal("no answer within 5s")
	}
	return ""
}

// The host runs a policy's turns on the backend only if it says it
// enforces one.
var _ host.PolicyEnforcer = (*Backend)(nil)

// A call the daemon allowed for the session is granted when the hooked
// CLI asks for it again, so the person is not asked twice; another call
// is not.
func TestSessionGrant(t *testing.T) {
	out := make(stdinLines, 8)
	g, _ := grant.For(grant.Options{Level: 2, Harness: grant.Claude, Stream: true, Ask: true, AskAll: true})
	var asked []host.Ask
	answers := make(chan host.Answer, 3)
	tr := &host.Turn{AskAll: true, Params: protocol.ChatRunParams{Permissions: protocol.PermissionsAsk},
		Ask: func(q host.Ask) host.Answer { asked = append(asked, q); return <-answers }}
	x := &translator{t: tr, p: &cli{out: newWriter(out), allowed: allowedOf(g)}}
	use := func(id, cmd string) string {
		return `{"type":"control_request","request_id":"` + id + `","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"` + cmd + `"},"permission_suggestions":[{"type":"addRules"}]}}`
	}
	answers <- host.Answer{Decision: protocol.DecisionAllowSession}
	x.control(use("U1", "python3 -c 1"))
	waitLine(t, out)
	answers <- host.Answer{Decision: protocol.DecisionAllow}
	x.control(use("U2", "python3 -c 1"))
	waitLine(t, out)
	answers <- host.Answer{Decision: protocol.DecisionAllow}
	x.control(use("U3", "python3 -c 2"))
	waitLine(t, out)
	if len(asked) != 3 || asked[0].Granted || !asked[1].Granted || asked[2].Granted {
		t.Errorf("granted: %v %v %v", asked[0].Granted, asked[1].Granted, asked[2].Granted)
	}
}
