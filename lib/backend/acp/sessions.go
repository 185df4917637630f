package acp

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/protocol"
)

// What a face that is itself ACP (agent-host --acp) passes through to the
// agent: its capabilities, its list of sessions, and session/resume.

// AgentCapabilities are the agentCapabilities the agent said at its last
// initialize, as it said them; an agent is started (and ended) to ask
// when none has been yet.
func (b *Backend) AgentCapabilities(ctx context.Context) (json.RawMessage, error) {
	if caps := b.knownCaps(); caps != nil {
		return caps.raw, nil
	}
	ag, err := b.spare(ctx)
	if err != nil {
		return nil, err
	}
	ag.end(closeGrace)
	return ag.caps.raw, nil
}

func (b *Backend) knownCaps() *agentCaps {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.caps
}

// spare starts an agent of no chat, in the host's working copy, for a
// question of no session.
func (b *Backend) spare(ctx context.Context) (*agent, error) {
	root, err := b.workspace(protocol.ChatRunParams{})
	if err != nil {
		return nil, err
	}
	return b.startAgent(ctx, root, false, func(string, string) {})
}

// ListSessions is the agent's session/list, its params and its result
// as they are (the agent's own sessions), from an agent started for it
// and ended after; refused (unsupported) when the agent lists none.
func (b *Backend) ListSessions(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	ag, err := b.spare(ctx)
	if err != nil {
		return nil, err
	}
	defer ag.end(closeGrace)
	if ag.caps.SessionCapabilities.List == nil {
		return nil, host.Failed(protocol.CodeUnsupported, "the agent lists no sessions (its initialize said no sessionCapabilities.list)", false)
	}
	res, err := ag.conn.call(ctx, "session/list", params)
	if err != nil {
		return nil, host.Failed(protocol.CodeBackendFailed, "acp: "+err.Error(), false)
	}
	return res, nil
}

// ResumeSession makes chat chatID continue the agent's session sessionID
// by session/resume (no replay); refused (unsupported) when the agent
// does not resume sessions.
func (b *Backend) ResumeSession(ctx context.Context, chatID, sessionID, workspace string) error {
	c := b.chat(chatID)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endAgent(time.Second)
	root, err := b.workspace(protocol.ChatRunParams{Workspace: workspace})
	if err != nil {
		return err
	}
	ag, err := b.startAgent(ctx, root, true, func(string, string) {}) // as LoadSession's
	if err != nil {
		return err
	}
	if ag.caps.SessionCapabilities.Resume == nil {
		ag.end(closeGrace)
		return host.Failed(protocol.CodeUnsupported, "the agent resumes no session (its initialize said no sessionCapabilities.resume)", false)
	}
	if err := ag.reopenBy(ctx, "session/resume", sessionID, root, c.mcp(ag, func(string, string) {}), nil); err != nil {
		ag.end(closeGrace)
		return err
	}
	c.infoMu.Lock()
	c.ag, c.root, c.session = ag, root, sessionID
	c.infoMu.Unlock()
	return nil
}
