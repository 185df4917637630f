package codex

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/agentry/agentry/lib/host"
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
	r := host.ServersChanged(c.servers, servers)
	c.servers = servers
	b.reload(c) // the thread takes its configuration when it is loaded
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

// SetDirectories makes dirs writable to the chat's commands beyond its
// workspace (codex's writable roots, at levels 2 and 3), from the
// thread's next load.
func (b *Backend) SetDirectories(ctx context.Context, chatID string, dirs []string) error {
	c := b.chat(chatID)
	c.mu.Lock()
	defer c.mu.Unlock()
	if slices.Equal(c.dirs, dirs) {
		return nil
	}
	c.dirs = slices.Clone(dirs)
	b.reload(c)
	return nil
}

// ForkSession makes the chat's thread a fork of codex's thread sessionID
// (thread/fork at its first turn: the history is the other's, the thread
// its own), working in workspace.
func (b *Backend) ForkSession(ctx context.Context, chatID, sessionID, workspace string) error {
	c := b.chat(chatID)
	c.mu.Lock()
	defer c.mu.Unlock()
	b.reload(c)
	b.mu.Lock()
	c.thread, c.fork = "", sessionID
	b.mu.Unlock()
	return nil
}

// reload has the chat's thread loaded again at its next turn, with the
// chat's configuration as it is then; c.mu is held.
func (b *Backend) reload(c *chat) {
	if c.on == nil {
		return
	}
	b.mu.Lock()
	thread := c.thread
	b.mu.Unlock()
	c.on.unload(thread)
	c.on = nil
}
