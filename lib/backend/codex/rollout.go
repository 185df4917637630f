package codex

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/ndjson"
	"github.com/agentry/agentry/lib/protocol"
	"github.com/tidwall/gjson"
)

// A thread's turns as thread/resume reports them leave out some of the
// tool calls the model made: one the user declined, one a cancel cut
// short, one run after the app-server was restarted on the thread. The
// thread's rollout file (thread.path: codex's own transcript of what the
// model saw) has every call and its output, so the history takes the
// missing ones from there.

// rolloutCall is one tool call in a rollout, as the model made it.
type rolloutCall struct {
	id, name string
	input    json.RawMessage
	output   string
	answered bool // an output came
	failed   bool
	after    int // how many of its turn's agent messages came before it
}

// rolloutCalls reads a rollout file's tool calls by turn id, in order.
// An unreadable file gives none: the thread's own turns still stand.
func rolloutCalls(path string) map[string][]rolloutCall {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	turns := map[string][]rolloutCall{}
	said := map[string]int{}
	var turn string
	_ = ndjson.Lines(f, 0, func(*ndjson.TooLongError) {}, func(line []byte) bool {
		p := gjson.GetBytes(line, "payload")
		if id := p.Get("turn_id").Str; id != "" {
			turn = id
		}
		if gjson.GetBytes(line, "type").Str != "response_item" || turn == "" {
			return true
		}
		switch p.Get("type").Str {
		case "message":
			if p.Get("role").Str == "assistant" {
				said[turn]++
			}
		case "function_call", "custom_tool_call", "local_shell_call":
			name, input := rolloutTool(p)
			turns[turn] = append(turns[turn], rolloutCall{id: p.Get("call_id").Str, name: name, input: input, after: said[turn]})
		case "function_call_output", "custom_tool_call_output":
			calls := turns[turn]
			for i := range calls {
				if calls[i].id == p.Get("call_id").Str {
					calls[i].output, calls[i].failed = rolloutOutput(p.Get("output"))
					calls[i].answered = true
				}
			}
		}
		return true
	})
	return turns
}

// rolloutTool names a rollout call as the thread's items would: a shell
// command as "command" with its command line.
func rolloutTool(p gjson.Result) (string, json.RawMessage) {
	args := gjson.Parse(p.Get("arguments").Str)
	switch name := p.Get("name").Str; {
	case p.Get("type").Str == "local_shell_call":
		return "command", commandInput(p.Get("action.command"))
	case name == "exec_command":
		return "command", rawJSON(map[string]string{"command": args.Get("cmd").Str})
	case name == "shell" || name == "shell_command":
		return "command", commandInput(args.Get("command"))
	case p.Get("type").Str == "custom_tool_call":
		return name, rawJSON(map[string]string{"input": p.Get("input").Str})
	default:
		raw := p.Get("arguments").Str
		if !gjson.Valid(raw) {
			raw = "{}"
		}
		return name, json.RawMessage(raw)
	}
}

// commandInput is a command given as a string or as argv.
func commandInput(c gjson.Result) json.RawMessage {
	if !c.IsArray() {
		return rawJSON(map[string]string{"command": c.Str})
	}
	var argv []string
	c.ForEach(func(_, a gjson.Result) bool { argv = append(argv, a.Str); return true })
	return rawJSON(map[string]string{"command": strings.Join(argv, " ")})
}

// exitLine is compiled at its first use, not at every start of a
// program that links this package (runagent does).
var exitLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^Process exited with code (-?\d+)$`)
})

// rolloutOutput is a call's output as the model was given it, and whether
// it failed: a non-zero exit, a call codex could not make (declined,
// rejected), one aborted.
func rolloutOutput(o gjson.Result) (string, bool) {
	out := o.Str
	if o.IsObject() || o.IsArray() {
		out = o.Raw
	}
	if j := gjson.Parse(out); j.IsObject() && j.Get("metadata.exit_code").Exists() {
		return j.Get("output").Str, j.Get("metadata.exit_code").Int() != 0
	}
	if m := exitLine().FindStringSubmatch(out); m != nil {
		code, _ := strconv.Atoi(m[1])
		return out, code != 0
	}
	failed := strings.Contains(out, " failed: ") || strings.Contains(out, "aborted by user") || strings.Contains(out, "rejected by user")
	return out, failed
}

// missingCalls adds to a turn's history the calls of its rollout the
// thread left out: each after the agent message the model had said
// before it; a call never answered ended unfinished, so failed; a call of
// the plan tool, as the plan it set.
type missingCalls struct {
	calls []rolloutCall
	next  int
}

func newMissingCalls(all []rolloutCall, seen map[string]bool) *missingCalls {
	m := &missingCalls{}
	for _, c := range all {
		if !seen[c.id] {
			m.calls = append(m.calls, c)
		}
	}
	return m
}

// upTo appends the missing calls made before the turn's said-th agent
// message ended (all of them, with said < 0).
func (m *missingCalls) upTo(said int, turnID string, out []host.Said) []host.Said {
	for ; m.next < len(m.calls) && (said < 0 || m.calls[m.next].after <= said); m.next++ {
		c := m.calls[m.next]
		if c.name == "update_plan" {
			// The plan tool's calls are no items: live, the plan is
			// turn/plan/updated, and so it is here.
			out = append(out, host.Said{Event: planEvent(gjson.ParseBytes(c.input))})
			continue
		}
		id := callID(turnID, c.id)
		out = append(out, host.Said{Event: protocol.AgentEvent{Type: protocol.EvToolCall, ToolCallID: id, Name: c.name, Input: c.input}})
		res := protocol.AgentEvent{Type: protocol.EvToolResult, ToolCallID: id, Output: c.output, IsError: c.failed || !c.answered}
		if !c.answered {
			res.Output = "unfinished"
		}
		out = append(out, host.Said{Event: res})
	}
	return out
}
