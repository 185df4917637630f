package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/protocol"
	"github.com/tidwall/gjson"
)

// translator turns one turn's app-server messages into agent events, and
// answers the server's requests.
type translator struct {
	t      *host.Turn
	srv    replier
	thread string
	turn   string
	last   string                     // the last agent message
	usage  protocol.Usage             // the sum of the turn's model calls
	inputs map[string]json.RawMessage // tool inputs by item id, for approvals
	open   []string                   // the calls started and not yet completed, in order
	level  int                        // the turn's: what it runs unasked (granted)
	roots  []string                   // the directories its file changes may write, resolved (confine.Roots)
}

// replier is how the translator answers the server, and tells it more.
type replier interface {
	reply(id json.RawMessage, result any) error
	refuse(id json.RawMessage, msg string) error
	call(ctx context.Context, method string, params any) (gjson.Result, error)
}

// handle takes one message; done is set at the turn's end, with the run's
// outcome.
func (x *translator) handle(m rpcMsg) (done bool, err error) {
	if id := m.Params.Get("threadId"); id.Exists() && id.Str != x.thread {
		if m.ID != nil {
			_ = x.srv.refuse(m.ID, "agent-host: not this chat's thread")
		}
		return false, nil
	}
	if m.ID != nil {
		x.request(m)
		return false, nil
	}
	p := m.Params
	switch m.Method {
	case "item/agentMessage/delta":
		x.t.Emit(protocol.AgentEvent{Type: protocol.EvTextDelta, Text: p.Get("delta").Str})
	case "item/started":
		item := p.Get("item")
		if name, input, ok := toolCall(item); ok {
			x.inputs[item.Get("id").Str] = input
			id := x.callID(p, item.Get("id").Str)
			x.open = append(x.open, id)
			x.t.Emit(protocol.AgentEvent{Type: protocol.EvToolCall, ToolCallID: id, Name: name, Input: input})
		}
	case "item/completed":
		x.completed(p, p.Get("item"))
	case "turn/plan/updated":
		x.t.Emit(planEvent(p))
	case "thread/tokenUsage/updated":
		last := p.Get("tokenUsage.last")
		x.usage.InputTokens += last.Get("inputTokens").Int()
		x.usage.OutputTokens += last.Get("outputTokens").Int()
		x.usage.CacheReadTokens += last.Get("cachedInputTokens").Int()
		x.usage.CacheWriteTokens += last.Get("cacheWriteInputTokens").Int()
		// As it grows, not only at the turn's end: a budget is kept
		// where it is crossed (runagent --max-budget-usd).
		u := x.usage
		x.t.Emit(protocol.AgentEvent{Type: protocol.EvUsage, Usage: &u})
	case "error":
		if p.Get("willRetry").Bool() {
			x.t.Log("warn", "codex: "+p.Get("error.message").Str+" (retrying)")
		}
	case "turn/completed":
		return true, x.end(p.Get("turn"))
	}
	return false, nil
}

// callID is a tool call's id, live as in a replayed history (see
// threadHistory): the item's id is the model's call id, which need not be
// unique in a thread; with its turn's, it is.
func (x *translator) callID(p gjson.Result, item string) string {
	turn := p.Get("turnId").Str
	if turn == "" {
		turn = x.turn
	}
	return callID(turn, item)
}

func callID(turn, item string) string { return turn + "/" + item }

// cut ends every call the turn started and never completed (a cancel cut
// it short: codex says no more of it) as failed, once.
func (x *translator) cut(why string) {
	for _, id := range x.open {
		x.t.Emit(protocol.AgentEvent{Type: protocol.EvToolResult, ToolCallID: id, Output: why, IsError: true})
	}
	x.open = nil
}

func (x *translator) completed(p, item gjson.Result) {
	switch typ := item.Get("type").Str; typ {
	case "agentMessage":
		x.last = item.Get("text").Str
		x.t.Emit(protocol.AgentEvent{Type: protocol.EvText, Text: x.last})
	case "reasoning":
		var parts []string
		for _, k := range []string{"summary", "content"} {
			item.Get(k).ForEach(func(_, s gjson.Result) bool {
				if s.Type == gjson.String {
					parts = append(parts, s.Str)
				} else if txt := s.Get("text").Str; txt != "" {
					parts = append(parts, txt)
				}
				return true
			})
		}
		if len(parts) > 0 {
			x.t.Emit(protocol.AgentEvent{Type: protocol.EvThinking, Text: strings.Join(parts, "\n")})
		}
	default:
		if _, _, ok := toolCall(item); ok {
			out, isErr := toolOutput(item)
			id := x.callID(p, item.Get("id").Str)
			if i := slices.Index(x.open, id); i >= 0 {
				x.open = slices.Delete(x.open, i, i+1)
			}
			x.t.Emit(protocol.AgentEvent{Type: protocol.EvToolResult, ToolCallID: id, Output: out, IsError: isErr})
		}
	}
}

// planEvent is turn/plan/updated's plan (or the plan tool's arguments),
// whole, as a plan event: codex's step statuses (pending, inProgress or
// in_progress, completed) in the protocol's words.
func planEvent(p gjson.Result) protocol.AgentEvent {
	ev := protocol.AgentEvent{Type: protocol.EvPlan, Text: p.Get("explanation").Str, Plan: []protocol.PlanStep{}}
	p.Get("plan").ForEach(func(_, s gjson.Result) bool {
		st := protocol.PlanPending
		switch s.Get("status").Str {
		case "inProgress", "in_progress":
			st = protocol.PlanInProgress
		case "completed":
			st = protocol.PlanCompleted
		}
		ev.Plan = append(ev.Plan, protocol.PlanStep{Step: s.Get("step").Str, Status: st})
		return true
	})
	return ev
}

// end is the run's outcome at turn/completed.
func (x *translator) end(turn gjson.Result) error {
	switch turn.Get("status").Str {
	case "completed":
		u := x.usage
		x.t.Emit(protocol.AgentEvent{Type: protocol.EvUsage, Usage: &u})
		x.t.Emit(protocol.AgentEvent{Type: protocol.EvCompleted, Text: x.last, Usage: &u, SessionID: x.thread})
		return nil
	case "interrupted":
		x.cut("interrupted")
		return host.ErrInterrupted
	}
	msg := turn.Get("error.message").Str
	if msg == "" {
		msg = "codex: the turn " + turn.Get("status").Str
	}
	return host.Failed(protocol.CodeBackendFailed, msg, false)
}

// request answers a request of the server: an approval (approval in
// ask.go), a question (question); anything else is refused, so that the
// server never waits on us for ever.
func (x *translator) request(m rpcMsg) {
	switch m.Method {
	case "item/commandExecution/requestApproval":
		x.approval(m, "command")
	case "item/fileChange/requestApproval":
		x.approval(m, "file_change")
	case "item/tool/requestUserInput":
		x.question(m)
	default:
		_ = x.srv.refuse(m.ID, "agent-host does not serve "+m.Method)
	}
}

// approvalInput is what the daemon is shown of the call: the command and
// its directory, or the item's file changes.
func approvalInput(p gjson.Result, itemInput json.RawMessage) json.RawMessage {
	if cmd := p.Get("command"); cmd.Exists() {
		return rawJSON(map[string]string{"command": cmd.Str, "cwd": p.Get("cwd").Str})
	}
	if len(itemInput) > 0 {
		return itemInput
	}
	return json.RawMessage("{}")
}

// decision is codex's for a resolution: a denial by an interrupt or a stop
// also ends the turn.
func decision(a host.Answer) string {
	switch {
	case a.Decision == protocol.DecisionAllow:
		return decisionAccept
	case a.Decision == protocol.DecisionAllowSession:
		return decisionAcceptForSession
	case a.By == protocol.ResolvedByInterrupt || a.By == protocol.ResolvedByShutdown:
		return decisionCancel
	}
	return decisionDecline
}

// toolCall is an item's tool name and input, when it is a tool call.
func toolCall(item gjson.Result) (name string, input json.RawMessage, ok bool) {
	switch item.Get("type").Str {
	case "commandExecution":
		return "command", rawJSON(map[string]string{"command": item.Get("command").Str}), true
	case "mcpToolCall":
		args := item.Get("arguments").Raw
		if args == "" || args == "null" {
			args = "{}"
		}
		return "mcp__" + item.Get("server").Str + "__" + item.Get("tool").Str, json.RawMessage(args), true
	case "fileChange":
		ch := item.Get("changes").Raw
		if ch == "" {
			ch = "[]"
		}
		return "file_change", rawJSON(map[string]json.RawMessage{"changes": json.RawMessage(ch)}), true
	case "webSearch":
		return "web_search", rawJSON(map[string]string{"query": item.Get("query").Str}), true
	}
	return "", nil, false
}

// toolOutput is a completed tool item's output, and whether it failed.
func toolOutput(item gjson.Result) (string, bool) {
	status := item.Get("status").Str
	failed := status == "failed" || status == "declined"
	switch item.Get("type").Str {
	case "commandExecution":
		out := item.Get("aggregatedOutput").Str
		if code := item.Get("exitCode"); code.Exists() && code.Type != gjson.Null && code.Int() != 0 {
			failed = true
			if out == "" {
				out = fmt.Sprintf("exit status %d", code.Int())
			}
		}
		if status == "declined" && out == "" {
			out = "declined"
		}
		return out, failed
	case "mcpToolCall":
		if e := item.Get("error"); e.Exists() && e.Type != gjson.Null {
			if msg := e.Get("message").Str; msg != "" {
				return msg, true
			}
			return e.String(), true
		}
		var b strings.Builder
		item.Get("result.content").ForEach(func(_, c gjson.Result) bool {
			b.WriteString(c.Get("text").Str)
			return true
		})
		return b.String(), failed
	case "fileChange":
		return status, failed
	}
	return "", failed
}

// rawJSON is v as JSON, without HTML escaping: a command's ">" stays ">".
func rawJSON(v any) json.RawMessage {
	b, _ := protocol.Marshal(v)
	return b
}
