package codex

import (
	"context"
	"encoding/json"
	"maps"
	"slices"

	"github.com/agentry/agentry/lib/protocol"
)

// SetMCPServers gives the chat's thread the MCP servers (in the
// configuration claude takes: stdio's command, args and env; http's and
// sse's url and headers), as codex's mcp_servers of the thread's
// configuration, their tools approved as the level allows the rest: from
// the thread's next load, at once for a chat that has none yet (an ACP
// session's servers come before its first prompt).
func (b *Backend) SetMCPServers(ctx context.Context, chatID string, servers map[string]json.RawMessage) (*protocol.ToolRefresh, error) {
	c := b.chat(chatID)
	c.mu.Lock()
	defer c.mu.Unlock()
	r := &protocol.ToolRefresh{Added: []string{}, Removed: []string{}, Errors: map[string]string{}}
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		if _, ok := c.servers[name]; !ok {
			r.Added = append(r.Added, name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.servers)) {
		if _, ok := servers[name]; !ok {
			r.Removed = append(r.Removed, name)
		}
	}
	c.servers = servers
	if c.on != nil {
		// The thread takes its configuration when it is loaded.
		b.mu.Lock()
		thread := c.thread
		b.mu.Unlock()
		c.on.unload(thread)
		c.on = nil
	}
	return r, nil
}

// RefreshTools reports the chat's servers, unchanged.
func (b *Backend) RefreshTools(ctx context.Context, chatID string) (*protocol.ToolRefresh, error) {
	c := b.chat(chatID)
	c.mu.Lock()
	defer c.mu.Unlock()
	return &protocol.ToolRefresh{Added: []string{}, Removed: []string{}, Errors: map[string]string{}}, nil
}

// mcpConfig is the servers as codex's mcp_servers table.
func mcpConfig(servers map[string]json.RawMessage) map[string]any {
	out := map[string]any{}
	for name, raw := range servers {
		var s struct {
			Type    string            `json:"type"`
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		}
		if json.Unmarshal(raw, &s) != nil {
			continue
		}
		v := map[string]any{"default_tools_approval_mode": "approve"}
		if s.URL != "" {
			v["url"] = s.URL
			if len(s.Headers) > 0 {
				v["http_headers"] = s.Headers
			}
		} else {
			v["command"] = s.Command
			v["args"] = append([]string{}, s.Args...)
			if len(s.Env) > 0 {
				v["env"] = s.Env
			}
		}
		out[name] = v
	}
	return out
}
