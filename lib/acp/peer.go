package acp

import (
	"context"
	"encoding/json"
	"sync"
)

// peer is a backend that is itself the ACP client of an agent (the acp
// backend): what the agent says it can do is what the face says, and
// the agent's sessions, their list and session/resume are passed
// through to it.
type peer interface {
	// AgentCapabilities are the agent's agentCapabilities, as it said them.
	AgentCapabilities(ctx context.Context) (json.RawMessage, error)
	// ListSessions is the agent's session/list, params and result as they are.
	ListSessions(ctx context.Context, params json.RawMessage) (json.RawMessage, error)
	// ResumeSession continues the agent's session in a chat by
	// session/resume.
	ResumeSession(ctx context.Context, chatID, sessionID, workspace string) error
}

// peerCaps is what the face reads of the agent's capabilities.
type peerCaps struct {
	LoadSession         bool               `json:"loadSession"`
	PromptCapabilities  promptCapabilities `json:"promptCapabilities"`
	MCPCapabilities     mcpCapabilities    `json:"mcpCapabilities"`
	SessionCapabilities struct {
		List   *empty `json:"list"`
		Resume *empty `json:"resume"`
	} `json:"sessionCapabilities"`
}

// peerState is the agent's capabilities, asked once.
type peerState struct {
	mu   sync.Mutex
	caps *peerCaps
}

// peerCaps is the agent's capabilities when the backend is a peer (nil,
// nil when it is none), asked of it once.
func (a *agent) peerCaps() (*peerCaps, error) {
	p, ok := a.backend.(peer)
	if !ok {
		return nil, nil
	}
	a.peer.mu.Lock()
	defer a.peer.mu.Unlock()
	if a.peer.caps != nil {
		return a.peer.caps, nil
	}
	ctx, cancel := a.callCtx()
	defer cancel()
	raw, err := p.AgentCapabilities(ctx)
	if err != nil {
		return nil, errorf(codeInternal, "the agent behind agent-host could not say what it can do: %v", err)
	}
	var pc peerCaps
	_ = json.Unmarshal(raw, &pc)
	a.peer.caps = &pc
	return &pc, nil
}

// refusedByAgent is the error for a method the agent behind agent-host
// does not offer, naming the capability its initialize lacked.
func (a *agent) refusedByAgent(method, what, capability string) error {
	return &rpcError{Code: codeMethodNotFound, Message: "the agent behind agent-host (the " + a.caps.name + " backend) " + what +
		": its initialize said no " + capability, Data: map[string]string{"method": method, "capability": capability}}
}

// listAgentSessions is session/list passed through to the agent: its own
// sessions, each under the id this face knows it by (the session's, when
// it was opened here and kept), else the agent's.
func (a *agent) listAgentSessions(p peer, params json.RawMessage) (any, error) {
	pc, err := a.peerCaps()
	if err != nil {
		return nil, err
	}
	if pc.SessionCapabilities.List == nil {
		return nil, a.refusedByAgent("session/list", "lists no sessions", "sessionCapabilities.list")
	}
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	ctx, cancel := a.callCtx()
	defer cancel()
	raw, err := p.ListSessions(ctx, params)
	if err != nil {
		return nil, hostError(err)
	}
	var res map[string]json.RawMessage
	if json.Unmarshal(raw, &res) != nil {
		return nil, errorf(codeInternal, "the agent's session/list answered %.200s", raw)
	}
	var list []map[string]json.RawMessage
	_ = json.Unmarshal(res["sessions"], &list)
	ids := a.faceIDs()
	for _, s := range list {
		var id string
		if json.Unmarshal(s["sessionId"], &id) == nil && ids[id] != "" {
			s["sessionId"], _ = json.Marshal(ids[id])
		}
	}
	if list == nil {
		list = []map[string]json.RawMessage{}
	}
	res["sessions"], _ = json.Marshal(list)
	return res, nil
}

// faceIDs maps the agent's session ids to the face's, for the sessions
// kept for session/load and those open.
func (a *agent) faceIDs() map[string]string {
	ids := map[string]string{}
	for _, r := range a.store.all() {
		if r.Backend == a.caps.name && r.CLISession != "" {
			ids[r.CLISession] = r.SessionID
		}
	}
	a.mu.Lock()
	var open []string
	for id := range a.sessions {
		open = append(open, id)
	}
	a.mu.Unlock()
	ctx, cancel := a.callCtx()
	defer cancel()
	for _, id := range open {
		if info, err := a.hc.SessionInfo(ctx, id); err == nil && info != nil && info.SessionID != "" {
			ids[info.SessionID] = id
		}
	}
	return ids
}
