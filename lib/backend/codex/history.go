package codex

import (
	"context"
	"strings"

	"github.com/agentry/agentry/lib/grant"
	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/protocol"
	"github.com/tidwall/gjson"
)

// LoadSession makes the chat continue codex's thread id: the thread is
// resumed on the shared app-server of the backend's level, and the
// history is the thread's turns as codex reports them (its own record of
// the thread).
func (b *Backend) LoadSession(ctx context.Context, chatID, sessionID, workspace string) ([]host.Said, error) {
	c := b.chat(chatID)
	c.mu.Lock()
	defer c.mu.Unlock()
	sh, g, err := b.server(ctx, b.cfg.Level)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	old := c.thread
	c.thread, c.fork = sessionID, ""
	b.mu.Unlock()
	if old != sessionID {
		c.on.unload(old)
	}
	c.on = nil
	var thread gjson.Result
	if err := b.load(ctx, c, sh, g, b.cfg.Level, "", "", workspace, func(string, string) {}, &thread); err != nil {
		b.mu.Lock()
		c.thread = ""
		b.mu.Unlock()
		return nil, host.Failed(protocol.CodeUnknownChat, "codex could not resume thread "+sessionID+": "+err.Error(), false)
	}
	return threadHistory(thread, rolloutCalls(thread.Get("path").Str)), nil
}

// threadHistory is what was said in a thread: the user's messages, the
// agent's, its reasoning, and each tool item as its call and result, with
// the status it ended with; with the calls of the thread's rollout its
// turns leave out (see rolloutCalls).
func threadHistory(thread gjson.Result, rollout map[string][]rolloutCall) []host.Said {
	var said []host.Said
	thread.Get("turns").ForEach(func(_, turn gjson.Result) bool {
		turnID := turn.Get("id").Str
		seen := map[string]bool{}
		turn.Get("items").ForEach(func(_, item gjson.Result) bool {
			seen[item.Get("id").Str] = true
			return true
		})
		missing, messages := newMissingCalls(rollout[turnID], seen), 0
		defer func() { said = missing.upTo(-1, turnID, said) }()
		turn.Get("items").ForEach(func(_, item gjson.Result) bool {
			switch item.Get("type").Str {
			case "userMessage":
				var parts []string
				item.Get("content").ForEach(func(_, c gjson.Result) bool {
					if c.Get("type").Str == "text" {
						parts = append(parts, c.Get("text").Str)
					}
					return true
				})
				if len(parts) > 0 {
					said = append(said, host.Said{User: strings.Join(parts, "\n")})
				}
			case "agentMessage":
				said = missing.upTo(messages, turnID, said)
				messages++
				said = append(said, host.Said{Event: protocol.AgentEvent{Type: protocol.EvText, Text: item.Get("text").Str}})
			case "reasoning":
				var parts []string
				for _, key := range []string{"summary", "content"} {
					item.Get(key).ForEach(func(_, c gjson.Result) bool {
						parts = append(parts, c.String())
						return true
					})
				}
				if len(parts) > 0 {
					said = append(said, host.Said{Event: protocol.AgentEvent{Type: protocol.EvThinking, Text: strings.Join(parts, "\n")}})
				}
			default:
				name, input, ok := toolCall(item)
				if !ok {
					return true
				}
				// An item's id is the model's call id, which need not be
				// unique in a thread; with its turn's, it is.
				id := callID(turnID, item.Get("id").Str)
				said = append(said, host.Said{Event: protocol.AgentEvent{Type: protocol.EvToolCall, ToolCallID: id, Name: name, Input: input}})
				if st := item.Get("status").Str; st != "inProgress" && st != "" {
					out, failed := toolOutput(item)
					said = append(said, host.Said{Event: protocol.AgentEvent{Type: protocol.EvToolResult, ToolCallID: id, Output: out, IsError: failed}})
				}
			}
			return true
		})
		return true
	})
	return said
}

// Efforts are the reasoning efforts a turn takes (turn/start's effort).
func (b *Backend) Efforts() []string { return grant.Efforts[grant.Codex] }
