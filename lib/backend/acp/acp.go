// Package acp is the agent-host backend for any agent that speaks the
// Agent Client Protocol (v1): agentry is the ACP client of an agent
// command it starts, one process per chat, in a process group of its own.
//
// The level is agentry's, not the agent's (Policy): agentry answers the
// agent's session/request_permission from the level (or, with
// params.permissions "ask", puts what the level does not allow outright to
// the daemon), serves fs/read_text_file and fs/write_text_file confined to
// the working copy after resolving symlinks (no write at level 1), and
// serves terminal/* through lib/proc, each terminal a process group of
// agentry's (none at level 1). At session start it picks, where the agent
// offers modes, the one that asks the most (PickMode).
//
// Under a policy (host.Turn.AskAll) every session/request_permission,
// terminal/create and fs/* request goes to the host with the call in the
// policy's terms (callOf), so that a denied command never starts; an
// agent's elicitation/create form goes to the turn's questions (elicit).
//
// Where the agent does not ask, a tripwire: a tool_call or
// tool_call_update that shows a call of a kind the level forbids running
// (Policy.Forbids), or one the run's policy denies (Turn.PolicyDenies),
// in progress or completed, which agentry did not allow, ends the turn
// with an error of code CodeLevelViolated or CodePolicyViolated and ends
// the agent, with everything it started.
//
// The translation: agent_message_chunk → text_delta (and the whole text
// at the end), agent_thought_chunk → thinking, tool_call → tool_call
// (its input the agent's whole tool call, which DescribeTool reads back
// for a face: title, kind, locations, diffs), a finished tool_call_update
// → tool_result, plan → plan, available_commands_update → commands,
// usage_update → usage (its cost, when the agent sends one, as the turn's
// part of the session's). An interrupt is session/cancel; the host giving
// up kills the agent's group.
package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentry/agentry/lib/confine"
	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/protocol"
)

// ProtocolVersion is the ACP version agentry speaks to agents.
const ProtocolVersion = 1

// CodeLevelViolated is the error code of a turn the tripwire ended: the
// agent ran a call its level forbids without asking.
const CodeLevelViolated = "level_violated"

// CodePolicyViolated is the error code of a turn the tripwire ended for a
// policy: the agent ran a call the run's policy denies without asking.
const CodePolicyViolated = "policy_violated"

// Config is hello.config's "acp" object.
type Config struct {
	// Command is the agent's argv (default: agent-host's own, after --).
	Command []string `json:"command"`
	// Level is the level when a turn does not give one (default 2).
	Level int `json:"level"`
	// Workspace is the working copy when a turn does not give one
	// (default: the host's directory).
	Workspace string `json:"workspace"`
}

// Backend runs turns on ACP agents, one per chat.
type Backend struct {
	cfg Config
	env host.Env

	mu    sync.Mutex
	chats map[string]*chat
	caps  *agentCaps // what the agent said at its last initialize
}

// New makes the backend from hello.config's "acp" object, the agent's
// command being command unless the configuration gives one.
func New(config json.RawMessage, command []string, env host.Env) (*Backend, error) {
	var c struct {
		ACP Config `json:"acp"`
	}
	if len(config) > 0 {
		if err := json.Unmarshal(config, &c); err != nil {
			return nil, fmt.Errorf("acp: bad config: %v", err)
		}
	}
	cfg := c.ACP
	if len(cfg.Command) == 0 {
		cfg.Command = command
	}
	return Open(cfg, env)
}

// Open makes the backend from a Config.
func Open(cfg Config, env host.Env) (*Backend, error) {
	if len(cfg.Command) == 0 {
		return nil, errors.New("acp: no agent command given (agent-host --backend acp -- CMD ARGS...)")
	}
	if _, err := exec.LookPath(cfg.Command[0]); err != nil {
		return nil, fmt.Errorf("acp: %v", err)
	}
	if cfg.Level == 0 {
		cfg.Level = 2
	}
	if cfg.Level < 1 || cfg.Level > 3 {
		return nil, fmt.Errorf("acp: level %d: the levels are 1, 2 and 3", cfg.Level)
	}
	return &Backend{cfg: cfg, env: env, chats: map[string]*chat{}}, nil
}

func (b *Backend) Name() string { return "acp" }

// Version names the agent, as its command does until it has said.
func (b *Backend) Version() string { return "acp " + filepath.Base(b.cfg.Command[0]) }

// chat is one chat's agent and session.
type chat struct {
	mu      sync.Mutex // one turn at a time, and the agent's changes
	ag      *agent
	session string // the agent's session id
	turns   int
	// infoMu also guards session and turns, written under mu as well,
	// so that SessionInfo need not wait for a turn to end (runagent asks
	// for the session of a run it is stopping).
	infoMu sync.Mutex
	cost   float64 // the session's cost, as the agent last reported it
	root   string  // the session's working copy, resolved
	// servers are the chat's MCP servers (set_mcp_servers), given the
	// set the agent's session was last started or taken up with.
	servers map[string]json.RawMessage
	given   map[string]json.RawMessage
	// told is the session that was sent the turn's system prompt: ACP
	// has none, so it goes once per session, before its first prompt.
	told string
}

// mcp is the chat's MCP servers for ag's session, as it takes them; what
// it cannot take is logged (set_mcp_servers reported it already).
func (c *chat) mcp(ag *agent, logf func(level, msg string)) []any {
	list, errs := ag.caps.mcpServers(c.servers)
	for _, name := range slices.Sorted(maps.Keys(errs)) {
		logf("warn", fmt.Sprintf("acp: MCP server %q: %s", name, errs[name]))
	}
	c.given = c.servers
	return list
}

func (b *Backend) chat(id string) *chat {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.chats[id]
	if c == nil {
		c = &chat{}
		b.chats[id] = c
	}
	return c
}

// workspace is the turn's working copy, its symlinks resolved.
func (b *Backend) workspace(p protocol.ChatRunParams) (string, error) {
	dir := p.Workspace
	if dir == "" {
		dir = b.cfg.Workspace
	}
	return confine.Root(dir)
}

// RunTurn runs one turn on the chat's agent, starting it (and its
// session) when it has none.
func (b *Backend) RunTurn(ctx context.Context, t *host.Turn) error {
	c := b.chat(t.Params.ChatID)
	if t.OneShot != nil {
		c = &chat{} // a chat of its own, ended with the turn
		defer c.close(time.Second)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	level := b.cfg.Level
	if t.Params.Level > 0 {
		level = t.Params.Level
	}
	if c.ag != nil && !c.ag.conn.alive() {
		c.endAgent(0)
	}
	if c.ag != nil && t.Question != nil && !c.ag.forms {
		// The agent was started by a turn that took no questions, and
		// was told so: it would put none to this one. It is started
		// again, told it may, with the chat's session taken up again;
		// an agent that cannot take one up keeps its session, and the
		// turn is told its questions have nobody to reach.
		if c.ag.caps.LoadSession || c.ag.caps.SessionCapabilities.Resume != nil {
			c.endAgent(time.Second)
		} else {
			t.Log("warn", "acp: this chat's agent was started by a turn that took no questions, and can neither load nor resume its session to be told it may: its questions in this turn reach nobody (a new chat's first turn with questions gets them)")
		}
	}
	if c.ag == nil {
		root, err := b.workspace(t.Params)
		if err != nil {
			return host.Failed(protocol.CodeBadRequest, "acp: the working copy: "+err.Error(), false)
		}
		if err := b.open(ctx, c, root, t.Question != nil, t.Log); err != nil {
			return err
		}
	}
	if err := c.ag.caps.takes(t.Params.Attachments); err != nil {
		return err
	}
	asks := t.Ask != nil && t.Params.Permissions == protocol.PermissionsAsk
	return c.turn(ctx, t, Policy{Level: level, Ask: asks, AskAll: t.AskAll && t.Ask != nil, Root: c.root})
}

// open starts the chat's agent in root, initializes it, and starts its
// session, or loads or resumes the chat's when it has one.
func (b *Backend) open(ctx context.Context, c *chat, root string, asks bool, logf func(level, msg string)) error {
	ag, err := b.startAgent(ctx, root, asks, logf)
	if err != nil {
		return err
	}
	c.ag, c.root = ag, root
	mcp := c.mcp(ag, logf)
	if c.session != "" {
		if err := ag.reopen(ctx, c.session, root, mcp, nil); err == nil {
			return nil
		}
		logf("warn", fmt.Sprintf("acp: the agent could not load session %s; this turn starts a new one", c.session))
	}
	id, err := ag.newSession(ctx, root, mcp)
	if err != nil {
		c.endAgent(time.Second)
		return err
	}
	c.infoMu.Lock()
	c.session, c.cost = id, 0 // a new session's cost starts at nothing
	c.infoMu.Unlock()
	return nil
}

// endAgent ends the chat's agent, if it has one, with its terminals.
func (c *chat) endAgent(grace time.Duration) {
	if c.ag == nil {
		return
	}
	c.ag.end(grace)
	c.ag = nil
}

func (c *chat) close(grace time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endAgent(grace)
}

// SessionInfo reports the chat's session.
func (b *Backend) SessionInfo(ctx context.Context, chatID string) (*protocol.SessionInfo, error) {
	b.mu.Lock()
	c := b.chats[chatID]
	b.mu.Unlock()
	if c == nil {
		return nil, nil
	}
	c.infoMu.Lock()
	defer c.infoMu.Unlock()
	return &protocol.SessionInfo{ChatID: chatID, SessionID: c.session, Turns: c.turns}, nil
}

// WarmSession starts the chat's agent and session ahead of its first turn.
func (b *Backend) WarmSession(ctx context.Context, chatID string) error {
	c := b.chat(chatID)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ag != nil && c.ag.conn.alive() {
		return nil
	}
	c.endAgent(0)
	root, err := b.workspace(protocol.ChatRunParams{})
	if err != nil {
		return err
	}
	return b.open(ctx, c, root, false, func(string, string) {})
}

// ResetSession ends the chat's agent and forgets its session; its MCP
// servers stay, for its next one.
func (b *Backend) ResetSession(ctx context.Context, chatID string) (bool, error) {
	b.mu.Lock()
	c, ok := b.chats[chatID]
	delete(b.chats, chatID)
	b.mu.Unlock()
	if ok {
		c.close(2 * time.Second)
		c.mu.Lock()
		servers := c.servers
		c.mu.Unlock()
		if len(servers) > 0 {
			b.chat(chatID).keepServers(servers)
		}
	}
	return ok, nil
}

// keepServers gives the chat servers, unless it was given some since.
func (c *chat) keepServers(servers map[string]json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.servers == nil {
		c.servers = servers
	}
}

// LoadSession makes chat chatID continue the agent's session sessionID
// (session/load, else session/resume, where the agent offers them) and
// returns what the agent replayed of it.
func (b *Backend) LoadSession(ctx context.Context, chatID, sessionID, workspace string) ([]host.Said, error) {
	c := b.chat(chatID)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endAgent(time.Second)
	root, err := b.workspace(protocol.ChatRunParams{Workspace: workspace})
	if err != nil {
		return nil, err
	}
	// The turns of a chat taken up by a session's id (the ACP face's
	// session/load, runagent --resume) take questions: its agent is told
	// it may ask, and needs no restart at its first turn.
	ag, err := b.startAgent(ctx, root, true, func(string, string) {})
	if err != nil {
		return nil, err
	}
	var said []host.Said
	if err := ag.reopen(ctx, sessionID, root, c.mcp(ag, func(string, string) {}), &said); err != nil {
		ag.end(time.Second)
		return nil, err
	}
	c.infoMu.Lock()
	c.ag, c.root, c.session = ag, root, sessionID
	c.infoMu.Unlock()
	return said, nil
}

// AsksPermissions: a turn may put the agent's permission requests to the
// daemon.
func (b *Backend) AsksPermissions() bool { return true }

// EnforcesPolicy: under a policy (Turn.AskAll) every session/request_permission
// and every fs/* and terminal/create the agent sends is put to the host
// before it is answered or carried out, and the agent is put in its mode
// that asks the most (host.PolicyEnforcer). What an agent runs itself
// without asking, inside its own sandbox, agentry never sees:
// agent-host-acp(7) says so.
func (b *Backend) EnforcesPolicy() bool { return true }

// ImageTypes are the images a turn takes, when the agent's prompt
// capabilities take images (a turn with one is refused otherwise).
func (b *Backend) ImageTypes() []string {
	return []string{"image/png", "image/jpeg", "image/gif", "image/webp"}
}

// TakesResources: a turn may carry resources and links to them
// (host.ResourceTaker), refused when the agent's prompt capabilities do
// not take embedded resources.
func (b *Backend) TakesResources() bool { return true }

// takes refuses attachments the agent's prompt capabilities do not take,
// naming the capability: an image without promptCapabilities.image, an
// embedded resource without promptCapabilities.embeddedContext (a link to
// one every agent takes).
func (caps agentCaps) takes(ats []protocol.Attachment) error {
	for _, at := range ats {
		switch {
		case at.Type == protocol.AttachmentImage && !caps.PromptCapabilities.Image:
			return host.Failed(protocol.CodeUnsupported, "the agent takes no images: its initialize said promptCapabilities.image false", false)
		case at.Type == protocol.AttachmentResource && !caps.PromptCapabilities.EmbeddedContext:
			return host.Failed(protocol.CodeUnsupported, "the agent takes no embedded resources: its initialize said promptCapabilities.embeddedContext false", false)
		}
	}
	return nil
}

// closeGrace is how long an agent has to exit at the host's end, after
// its stdin is closed and again after SIGTERM: short, because the host
// ends on a signal too, and its whole tree must be gone within seconds.
const closeGrace = 500 * time.Millisecond

// Close ends every chat's agent (stdin closed, then SIGTERM, then SIGKILL,
// to its whole group) and every terminal.
func (b *Backend) Close() error {
	b.mu.Lock()
	chats := slices.Collect(maps.Values(b.chats))
	b.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range chats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.close(closeGrace)
		}()
	}
	wg.Wait()
	return nil
}

// DescribeTool reads back a tool_call event's input, the agent's own
// ACP tool call, for a face.
func (b *Backend) DescribeTool(name string, input json.RawMessage) host.ToolView {
	var tc toolCall
	_ = json.Unmarshal(input, &tc)
	v := host.ToolView{Title: tc.Title, Kind: tc.Kind}
	if v.Title == "" {
		v.Title = name
	}
	if v.Kind == "" {
		v.Kind = host.ToolOther
	}
	for _, l := range tc.Locations {
		v.Paths = append(v.Paths, l.Path)
	}
	for _, raw := range tc.Content {
		var d struct {
			Type    string  `json:"type"`
			Path    string  `json:"path"`
			OldText *string `json:"oldText"`
			NewText string  `json:"newText"`
		}
		if json.Unmarshal(raw, &d) == nil && d.Type == "diff" {
			v.Diffs = append(v.Diffs, host.Diff{Path: d.Path, Old: d.OldText, New: d.NewText})
		}
	}
	return v
}

// firstLine is s's first line, for a title.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
