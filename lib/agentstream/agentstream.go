// Package agentstream reads the agent CLIs' JSON output, a line at a time,
// as agent-host protocol events: claude's stream-json and codex exec's
// --json. It is what the claude and codex backends and runagent's --events
// share; what a caller does with a session id or a result is its own.
package agentstream

import (
	"encoding/json"
	"strings"

	"github.com/agentry/agentry/lib/protocol"
	"github.com/tidwall/gjson"
)

// Claude is the events of one line of claude's stream-json output: text
// deltas (with --include-partial-messages), assistant text, thinking and
// tool calls, and tool results. system and result lines give none: the
// caller reads them (ClaudeUsage for a result).
func Claude(s string) []protocol.AgentEvent {
	var evs []protocol.AgentEvent
	switch gjson.Get(s, "type").Str {
	case "stream_event":
		if d := gjson.Get(s, "event.delta"); gjson.Get(s, "event.type").Str == "content_block_delta" && d.Get("type").Str == "text_delta" {
			evs = append(evs, protocol.AgentEvent{Type: protocol.EvTextDelta, Text: d.Get("text").Str})
		}
	case "assistant":
		gjson.Get(s, "message.content").ForEach(func(_, blk gjson.Result) bool {
			switch blk.Get("type").Str {
			case "text":
				evs = append(evs, protocol.AgentEvent{Type: protocol.EvText, Text: blk.Get("text").Str})
			case "thinking":
				evs = append(evs, protocol.AgentEvent{Type: protocol.EvThinking, Text: blk.Get("thinking").Str})
			case "tool_use":
				evs = append(evs, protocol.AgentEvent{Type: protocol.EvToolCall, ToolCallID: blk.Get("id").Str, Name: blk.Get("name").Str,
					Input: json.RawMessage(blk.Get("input").Raw)})
			}
			return true
		})
	case "user":
		gjson.Get(s, "message.content").ForEach(func(_, blk gjson.Result) bool {
			if blk.Get("type").Str == "tool_result" {
				evs = append(evs, protocol.AgentEvent{Type: protocol.EvToolResult, ToolCallID: blk.Get("tool_use_id").Str,
					Output: contentText(blk.Get("content")), IsError: blk.Get("is_error").Bool()})
			}
			return true
		})
	}
	return evs
}

// ClaudeUsage is the usage a claude result line reports.
func ClaudeUsage(s string) *protocol.Usage {
	return &protocol.Usage{
		InputTokens:      gjson.Get(s, "usage.input_tokens").Int(),
		OutputTokens:     gjson.Get(s, "usage.output_tokens").Int(),
		CacheReadTokens:  gjson.Get(s, "usage.cache_read_input_tokens").Int(),
		CacheWriteTokens: gjson.Get(s, "usage.cache_creation_input_tokens").Int(),
		CostUSD:          gjson.Get(s, "total_cost_usd").Float(),
		DurationMs:       gjson.Get(s, "duration_ms").Int(),
	}
}

func contentText(r gjson.Result) string {
	if r.Type == gjson.String {
		return r.Str
	}
	var b strings.Builder
	r.ForEach(func(_, c gjson.Result) bool {
		b.WriteString(c.Get("text").Str)
		return true
	})
	return b.String()
}

// Codex is the events of one line of codex exec --json: a tool call as its
// item starts, its result, agent messages and reasoning as their items
// complete. thread and turn lines give none: the caller reads them.
func Codex(s string) []protocol.AgentEvent {
	item := gjson.Get(s, "item")
	switch gjson.Get(s, "type").Str {
	case "item.started":
		if IsCodexTool(item.Get("type").Str) {
			return []protocol.AgentEvent{{Type: protocol.EvToolCall, ToolCallID: item.Get("id").Str, Name: codexToolName(item), Input: json.RawMessage(codexToolInput(item))}}
		}
	case "item.completed":
		switch typ := item.Get("type").Str; {
		case typ == "agent_message":
			return []protocol.AgentEvent{{Type: protocol.EvText, Text: item.Get("text").Str}}
		case typ == "reasoning":
			return []protocol.AgentEvent{{Type: protocol.EvThinking, Text: item.Get("text").Str}}
		case IsCodexTool(typ):
			out, isErr := codexToolOutput(item)
			return []protocol.AgentEvent{{Type: protocol.EvToolResult, ToolCallID: item.Get("id").Str, Output: out, IsError: isErr}}
		}
	}
	return nil
}

// IsCodexTool says whether a codex item type is a tool call.
func IsCodexTool(typ string) bool {
	return typ == "mcp_tool_call" || typ == "command_execution" || typ == "file_change" || typ == "web_search"
}

func codexToolName(item gjson.Result) string {
	switch item.Get("type").Str {
	case "mcp_tool_call":
		return "mcp__" + item.Get("server").Str + "__" + item.Get("tool").Str
	case "command_execution":
		return "command"
	case "web_search":
		return "web_search"
	}
	return "file_change"
}

func codexToolInput(item gjson.Result) string {
	switch item.Get("type").Str {
	case "mcp_tool_call":
		if a := item.Get("arguments"); a.Exists() {
			return a.Raw
		}
	case "command_execution":
		b, _ := json.Marshal(map[string]string{"command": item.Get("command").Str})
		return string(b)
	case "file_change":
		if ch := item.Get("changes"); ch.Exists() {
			return ch.Raw
		}
	case "web_search":
		b, _ := json.Marshal(map[string]string{"query": item.Get("query").Str})
		return string(b)
	}
	return "{}"
}

func codexToolOutput(item gjson.Result) (string, bool) {
	switch item.Get("type").Str {
	case "mcp_tool_call":
		if e := item.Get("error"); e.Exists() && e.Type != gjson.Null {
			return e.String(), true
		}
		var b strings.Builder
		item.Get("result.content").ForEach(func(_, c gjson.Result) bool {
			b.WriteString(c.Get("text").Str)
			return true
		})
		return b.String(), false
	case "command_execution":
		code := item.Get("exit_code")
		return item.Get("aggregated_output").Str, code.Exists() && code.Int() != 0
	}
	return item.Get("status").Str, item.Get("status").Str == "failed"
}
