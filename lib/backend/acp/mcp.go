package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/protocol"
)

// A chat's MCP servers (set_mcp_servers) go to the agent in the mcpServers
// of session/new, session/load and session/resume, in ACP's shapes: stdio
// always, http and sse only where the agent's initialize said
// mcpCapabilities.http or .sse; a server the agent cannot take is left
// out and named in the refresh's errors, never dropped unsaid. A set
// changed while the chat has a session reaches it at the next turn, which
// takes the session up again (session/load or session/resume) with the new
// set; an agent that can do neither keeps its session and the set it
// started with, and the refresh says the new one applies from the chat's
// next session.

// mcpServer is a server's configuration, as set_mcp_servers gives it.
type mcpServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// nameValue is ACP's EnvVariable and HttpHeader.
type nameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func nameValues(m map[string]string) []nameValue {
	out := []nameValue{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, nameValue{Name: k, Value: m[k]})
	}
	return out
}

// mcpServers is servers in ACP's McpServer shapes, by name, with why each
// server left out could not go to an agent of caps.
func (caps agentCaps) mcpServers(servers map[string]json.RawMessage) ([]any, map[string]string) {
	out := []any{}
	errs := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		var s mcpServer
		if err := json.Unmarshal(servers[name], &s); err != nil {
			errs[name] = "not an MCP server configuration: " + err.Error()
			continue
		}
		switch s.Type {
		case "", "stdio":
			if s.Command == "" {
				errs[name] = "a stdio server without a command"
				continue
			}
			args := s.Args
			if args == nil {
				args = []string{}
			}
			out = append(out, map[string]any{"name": name, "command": s.Command, "args": args, "env": nameValues(s.Env)})
		case "http", "sse":
			can := caps.McpCapabilities.HTTP
			if s.Type == "sse" {
				can = caps.McpCapabilities.SSE
			}
			if !can {
				errs[name] = fmt.Sprintf("the agent takes no %s MCP servers (its initialize said no mcpCapabilities.%s); it does not get this one", s.Type, s.Type)
				continue
			}
			if s.URL == "" {
				errs[name] = "an " + s.Type + " server without a url"
				continue
			}
			out = append(out, map[string]any{"type": s.Type, "name": name, "url": s.URL, "headers": nameValues(s.Headers)})
		default:
			errs[name] = fmt.Sprintf("transport %q is not stdio, http or sse", s.Type)
		}
	}
	return out, errs
}

// sameServers reports whether two sets are the same configurations.
func sameServers(a, b map[string]json.RawMessage) bool {
	return maps.EqualFunc(a, b, func(x, y json.RawMessage) bool { return string(x) == string(y) })
}

// SetMCPServers gives the chat its MCP servers (host.ToolSetter), from its
// next session/new, session/load or session/resume: between turns (this
// waits for one in flight), the chat's agent is ended when the set changed
// and it can take its session up again, which the next turn does with the
// new set.
func (b *Backend) SetMCPServers(ctx context.Context, chatID string, servers map[string]json.RawMessage) (*protocol.ToolRefresh, error) {
	if servers == nil {
		servers = map[string]json.RawMessage{}
	}
	c := b.chat(chatID)
	c.mu.Lock()
	defer c.mu.Unlock()
	r := host.ServersChanged(c.servers, servers)
	caps, err := b.capsOf(ctx, c)
	if err != nil {
		return nil, err
	}
	_, r.Errors = caps.mcpServers(servers)
	c.servers = servers
	if c.ag == nil || sameServers(servers, c.given) {
		return r, nil
	}
	if !caps.LoadSession && caps.SessionCapabilities.Resume == nil {
		for name := range maps.Keys(servers) {
			if _, ok := r.Errors[name]; !ok && string(servers[name]) != string(c.given[name]) {
				r.Errors[name] = "the agent can neither load nor resume its session, so the chat's session keeps the servers it started with; this one applies from the chat's next session (reset_session)"
			}
		}
		for _, name := range r.Removed {
			r.Errors[name] = "the agent can neither load nor resume its session, so the chat's session keeps this server until its next session (reset_session)"
		}
		return r, nil
	}
	c.endAgent(5 * time.Second) // the next turn takes the session up with the new set
	return r, nil
}

// RefreshTools reports what of the chat's servers the agent cannot take;
// the agent connects to them itself, so nothing is re-derived here.
func (b *Backend) RefreshTools(ctx context.Context, chatID string) (*protocol.ToolRefresh, error) {
	c := b.chat(chatID)
	c.mu.Lock()
	defer c.mu.Unlock()
	caps, err := b.capsOf(ctx, c)
	if err != nil {
		return nil, err
	}
	_, errs := caps.mcpServers(c.servers)
	return &protocol.ToolRefresh{Added: []string{}, Removed: []string{}, Errors: errs}, nil
}

// capsOf is what the chat's agent said it can do, or the last agent's,
// or (none started yet) what one started to ask says.
func (b *Backend) capsOf(ctx context.Context, c *chat) (agentCaps, error) {
	if c.ag != nil {
		return c.ag.caps, nil
	}
	if caps := b.knownCaps(); caps != nil {
		return *caps, nil
	}
	ag, err := b.spare(ctx)
	if err != nil {
		return agentCaps{}, err
	}
	ag.end(closeGrace)
	return ag.caps, nil
}
