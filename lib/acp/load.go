package acp

import (
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentry/agentry/lib/host"
)

type loadParams struct {
	SessionID             string      `json:"sessionId"`
	Cwd                   string      `json:"cwd"`
	AdditionalDirectories []string    `json:"additionalDirectories"`
	MCPServers            []mcpServer `json:"mcpServers"`
}

type loadResult struct {
	Modes         *modeState     `json:"modes,omitempty"`
	ConfigOptions []configOption `json:"configOptions,omitempty"`
}

// loadSession takes up a session an earlier connection (or agent-host)
// had, and replays its history as session/update notifications before it
// answers.
func (a *agent) loadSession(params json.RawMessage) (any, error) { return a.takeUp(params, true) }

// resumeSession takes up a session without replaying its history.
func (a *agent) resumeSession(params json.RawMessage) (any, error) { return a.takeUp(params, false) }

func (a *agent) takeUp(params json.RawMessage, replay bool) (any, error) {
	var p loadParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	loader, ok := a.backend.(host.SessionLoader)
	if !ok {
		return nil, errorf(codeMethodNotFound, "the %s backend cannot load a session", a.caps.name)
	}
	pe, isPeer := a.backend.(peer)
	if isPeer {
		// The agent behind is asked to, where it says it can.
		pc, err := a.peerCaps()
		switch {
		case err != nil:
			return nil, err
		case replay && !pc.LoadSession:
			return nil, a.refusedByAgent("session/load", "loads no session", "agentCapabilities.loadSession")
		case !replay && pc.SessionCapabilities.Resume == nil:
			return nil, a.refusedByAgent("session/resume", "resumes no session", "sessionCapabilities.resume")
		}
	}
	if a.session(p.SessionID) != nil {
		return nil, errorf(codeInvalidParams, "invalid params: session %s is open on this connection", p.SessionID)
	}
	rec, err := a.store.load(p.SessionID)
	switch {
	case errors.Is(err, fs.ErrNotExist) && isPeer:
		// One of the agent's own sessions (session/list's): taken up
		// under its id, in the cwd given.
		if p.Cwd == "" || !filepath.IsAbs(p.Cwd) {
			return nil, errorf(codeInvalidParams, "invalid params: cwd must be an absolute path, not %q", p.Cwd)
		}
		rec = record{SessionID: p.SessionID, CLISession: p.SessionID, Cwd: p.Cwd, Backend: a.caps.name}
	case errors.Is(err, fs.ErrNotExist):
		return nil, &rpcError{Code: codeNotFound, Message: "no session " + p.SessionID, Data: map[string]string{"sessionId": p.SessionID}}
	case err != nil:
		return nil, errorf(codeInternal, "reading session %s: %v", p.SessionID, err)
	case rec.Backend != a.caps.name:
		return nil, errorf(codeInvalidParams, "invalid params: session %s was a %s session, and this agent-host runs %s", p.SessionID, rec.Backend, a.caps.name)
	}
	cwd := p.Cwd
	if cwd == "" {
		cwd = rec.Cwd
	}
	if err := a.checkDirs(p.AdditionalDirectories); err != nil {
		return nil, err
	}
	s := &session{id: rec.SessionID, cwd: cwd, dirs: p.AdditionalDirectories, created: time.Now(), mode: a.defaultMode(), title: rec.Title}
	s.updated = s.created
	if m, ok := a.modeByID(rec.Mode); ok {
		s.mode = m
	}
	if len(p.MCPServers) > 0 {
		if err := a.setServers(s, p.MCPServers); err != nil {
			return nil, err
		}
	}
	ctx, cancel := a.callCtx()
	defer cancel()
	var said []host.Said
	if isPeer && !replay {
		err = pe.ResumeSession(ctx, s.id, rec.CLISession, cwd)
	} else {
		said, err = loader.LoadSession(ctx, s.id, rec.CLISession, cwd)
	}
	if err != nil {
		return nil, hostError(err)
	}
	if err := a.setDirs(s); err != nil {
		return nil, err
	}
	a.mu.Lock()
	if a.sessions[s.id] != nil {
		a.mu.Unlock()
		return nil, errorf(codeInvalidParams, "invalid params: session %s is open on this connection", s.id)
	}
	a.sessions[s.id] = s
	a.mu.Unlock()
	a.warm(s)
	if replay {
		a.replay(s, said)
	}
	ms, opts := a.state(s)
	return loadResult{Modes: ms, ConfigOptions: opts}, nil
}

// replay sends a session's history as the updates its turns sent: the
// user's messages, the agent's, its thoughts, and each tool call with its
// title and the status it ended with (one that never ended, as in a
// cancelled turn, is failed).
func (a *agent) replay(s *session, said []host.Said) {
	t := &turn{a: a, s: s, calls: map[string]*call{}}
	for _, x := range said {
		if x.User != "" {
			// A user's message starts a turn: what the last one left
			// unfinished ended with it.
			t.unfinished()
			t = &turn{a: a, s: s, calls: map[string]*call{}}
			a.update(s, contentChunk{SessionUpdate: "user_message_chunk", Content: text(x.User)})
			continue
		}
		t.event(x.Event)
	}
	t.unfinished()
}

// unfinished reports the turn's calls that never ended as failed, in the
// order they were made.
func (t *turn) unfinished() {
	for _, id := range t.order {
		if c := t.calls[id]; c.reported && !c.final {
			c.final = true
			t.update(toolCall{SessionUpdate: "tool_call_update", ToolCallID: id, Status: statusFailed,
				RawOutput: "The turn ended before the call did."})
		}
	}
}

// remember keeps what a later agent-host needs to load the session, as
// the session is when it is written, if a turn has changed it since the
// last write.
func (a *agent) remember(s *session) {
	s.saving.Lock()
	defer s.saving.Unlock()
	s.mu.Lock()
	if !s.unsaved {
		s.mu.Unlock()
		return
	}
	s.unsaved = false
	r := record{SessionID: s.id, Cwd: s.cwd, Dirs: s.dirs, Backend: a.caps.name, CLISession: s.cli, Title: s.title,
		UpdatedAt: s.updated.UTC().Format(time.RFC3339), Mode: s.mode.id()}
	s.mu.Unlock()
	if err := a.store.save(r); err != nil {
		a.opts.Warn("keeping session " + s.id + " for session/load: " + err.Error())
	}
}

// titleOf is a session's title: its first prompt's first line, cut short.
func titleOf(prompt string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	if r := []rune(line); len(r) > 80 {
		line = string(r[:79]) + "…"
	}
	return line
}

// forkSession starts a session from another's history (open, or kept for
// session/load), which goes on unchanged: the new session has its mode,
// model, effort and what it allowed for itself, and its own CLI session.
func (a *agent) forkSession(params json.RawMessage) (any, error) {
	var p loadParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	fk, ok := a.backend.(forker)
	if !ok || a.caps.fork == nil {
		return nil, errorf(codeMethodNotFound, "the %s backend cannot fork a session", a.caps.name)
	}
	if err := checkCwd(p.Cwd); err != nil {
		return nil, err
	}
	if err := a.checkDirs(p.AdditionalDirectories); err != nil {
		return nil, err
	}
	s := &session{id: newID(), cwd: p.Cwd, dirs: p.AdditionalDirectories, created: time.Now(), mode: a.defaultMode()}
	s.updated = s.created
	from, err := a.forkOf(p.SessionID, s)
	if err != nil {
		return nil, err
	}
	if len(p.MCPServers) > 0 {
		if err := a.setServers(s, p.MCPServers); err != nil {
			return nil, err
		}
	}
	if from != "" { // a session never prompted has nothing to fork: s starts afresh
		ctx, cancel := a.callCtx()
		defer cancel()
		if err := fk.ForkSession(ctx, s.id, from, s.cwd); err != nil {
			return nil, hostError(err)
		}
	}
	if err := a.setDirs(s); err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.sessions[s.id] = s
	a.mu.Unlock()
	a.warm(s)
	ms, opts := a.state(s)
	return newSessionResult{SessionID: s.id, Modes: ms, ConfigOptions: opts}, nil
}

// forkOf is the CLI session of the session id to fork, giving s its
// settings: an open session's, or one kept for session/load.
func (a *agent) forkOf(id string, s *session) (string, error) {
	if o := a.session(id); o != nil {
		o.mu.Lock()
		s.mode, s.model, s.effort = o.mode, o.model, o.effort
		s.grants = maps.Clone(o.grants)
		o.mu.Unlock()
		ctx, cancel := a.callCtx()
		defer cancel()
		info, err := a.hc.SessionInfo(ctx, id)
		if err != nil || info == nil {
			return "", nil
		}
		return info.SessionID, nil
	}
	rec, err := a.store.load(id)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", &rpcError{Code: codeNotFound, Message: "no session " + id, Data: map[string]string{"sessionId": id}}
	case err != nil:
		return "", errorf(codeInternal, "reading session %s: %v", id, err)
	case rec.Backend != a.caps.name:
		return "", errorf(codeInvalidParams, "invalid params: session %s was a %s session, and this agent-host runs %s", id, rec.Backend, a.caps.name)
	}
	if m, ok := a.modeByID(rec.Mode); ok {
		s.mode = m
	}
	return rec.CLISession, nil
}
