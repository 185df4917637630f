// Package codex is the agent-host backend for Codex: one long-lived
// `codex app-server` per chat, spoken to in its JSON-RPC on stdio, in a
// CODEX_HOME of the chat's own made by lib/agenthome with the grant's
// configuration (no subagents, no plugins) and removed with the process.
// The chat's thread is started (or, after a restart, resumed) with the
// level's sandbox; a turn is turn/start, and an interrupt turn/interrupt.
//
// The translation: item/agentMessage/delta → text_delta; a completed
// agentMessage → text; reasoning → thinking; commandExecution, mcpToolCall,
// fileChange and webSearch → tool_call when they start and tool_result when
// they complete; thread/tokenUsage/updated → the turn's usage (the sum of
// its model calls'); turn/completed → completed, interrupted, or a terminal
// error. With params.permissions "ask" the turn's approval policy is
// "untrusted" and every approval request is put to the daemon. An
// app-server that dies mid-turn fails that run; the next turn starts
// another and resumes the thread.
package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/agentry/agentry/lib/agenthome"
	"github.com/agentry/agentry/lib/grant"
	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/protocol"
	"github.com/tidwall/gjson"
)

// Config is hello.config's "codex" object.
type Config struct {
	Program   string `json:"program"`   // default: $AGENT_HOST_CODEX_BIN, else codex
	Level     int    `json:"level"`     // default 2
	Workspace string `json:"workspace"` //
	// ConfigFile is a config.toml to take the model provider from
	// (default: the user's $CODEX_HOME/config.toml).
	ConfigFile string `json:"configFile"`
}

// Backend runs codex turns.
type Backend struct {
	cfg   Config
	env   host.Env
	mu    sync.Mutex
	chats map[string]*chat
}

type chat struct {
	mu      sync.Mutex // one turn at a time, and the server's changes
	srv     *appServer
	home    agenthome.CodexHome
	scratch string
	level   int // the level srv's thread runs at

	// Under Backend.mu:
	thread string
	turns  int
	in     int64 // input tokens of the last turn (its context)
}

// New makes the backend from hello.config, its commands run in env.
func New(config json.RawMessage, env host.Env) (*Backend, error) {
	var c struct {
		Codex Config `json:"codex"`
	}
	if len(config) > 0 {
		if err := json.Unmarshal(config, &c); err != nil {
			return nil, fmt.Errorf("codex: bad config: %v", err)
		}
	}
	cfg := c.Codex
	prog, err := grant.Program(grant.Codex, cfg.Program, env.Getenv("AGENT_HOST_CODEX_BIN"))
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, grant.InstallAdvice(grant.Codex, "AGENT_HOST_CODEX_BIN"))
	}
	cfg.Program = prog
	if cfg.Level == 0 {
		cfg.Level = 2
	}
	return &Backend{cfg: cfg, env: env, chats: map[string]*chat{}}, nil
}

func (b *Backend) Name() string { return "codex" }

func (b *Backend) Version() string {
	cmd := exec.Command(b.cfg.Program, "--version")
	cmd.Env = b.env.Environ
	out, err := proc.Output(cmd)
	f := strings.Fields(string(out))
	if err != nil || len(f) == 0 {
		return "codex (version unknown)"
	}
	return "codex " + f[len(f)-1]
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

// RunTurn runs one turn on the chat's app-server, starting it (and
// resuming the chat's thread) when it has none or the level changed.
func (b *Backend) RunTurn(ctx context.Context, t *host.Turn) error {
	c := b.chat(t.Params.ChatID)
	if t.OneShot != nil {
		// A one-shot is a chat of its own that ends with it: no thread
		// carried from one to the next, no server left behind.
		c = &chat{}
		defer func() {
			c.mu.Lock()
			c.close(2 * time.Second)
			c.removeScratch()
			c.mu.Unlock()
		}()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	level := b.cfg.Level
	if t.Params.Level > 0 {
		level = t.Params.Level
	}
	if c.srv != nil && (!c.srv.alive() || c.level != level) {
		// It exited between turns, or the sandbox must change: another
		// process resumes the thread.
		c.close(2 * time.Second)
	}
	if c.srv == nil {
		if err := b.open(ctx, c, level, t.Params.Model, t.Params.SystemPrompt, t.Params.Workspace, t.Log); err != nil {
			return err
		}
	}
	return b.turn(ctx, c, t)
}

// scratchPrefix names a level 1 chat's scratch directories in $TMPDIR;
// each chat sweeps those of dead owners before it makes its own.
const scratchPrefix = "agent-host-codex"

// notSignedIn is agenthome.ErrNotSignedIn in the words of the backend's
// configuration (hello.config, or agent-host --acp --config).
const notSignedIn = "codex is not signed in on this machine (no credential and no model provider; run codex login, or set the codex configuration's configFile to a config.toml that names a model provider)"

// open starts the chat's app-server in a fresh CODEX_HOME and starts its
// thread, or resumes it; a thread that cannot be resumed is replaced by a
// new one, with a warning.
func (b *Backend) open(ctx context.Context, c *chat, level int, model, instructions, workspace string, logf func(level, msg string)) error {
	return b.openThread(ctx, c, level, model, instructions, workspace, logf, nil)
}

// openThread is open; with turns set, the chat's thread must be resumed,
// and *turns is given the thread as codex reports it, its turns included.
func (b *Backend) openThread(ctx context.Context, c *chat, level int, model, instructions, workspace string, logf func(level, msg string), turns *gjson.Result) error {
	g, err := grant.For(grant.Options{Level: level, Harness: grant.Codex, Program: b.cfg.Program, Model: model})
	if err != nil {
		return host.Failed(protocol.CodeBadRequest, err.Error(), false)
	}
	home, err := agenthome.PrepareCodex(g, agenthome.CodexSource{Config: b.cfg.ConfigFile}, b.env.Environ)
	if errors.Is(err, agenthome.ErrNotSignedIn) {
		return host.Failed(protocol.CodeBackendUnavailable, notSignedIn, false)
	}
	if err != nil {
		return host.Failed(protocol.CodeBackendUnavailable, err.Error(), false)
	}
	dir := b.cfg.Workspace
	if workspace != "" {
		dir = workspace
	}
	if g.Scratch {
		if c.scratch == "" {
			agenthome.Sweep(scratchPrefix)
			if c.scratch, err = agenthome.RunDir(scratchPrefix); err != nil {
				home.Remove()
				return err
			}
		}
		dir = c.scratch
	}
	cmd := exec.Command(b.cfg.Program, "app-server")
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, b.env.Environ...), "CODEX_HOME="+home.Dir)
	warn := func(msg string) { logf("warn", msg) }
	srv, err := startAppServer(cmd, b.env.StderrOr(), 0, warn)
	if err != nil {
		home.Remove()
		return host.Failed(protocol.CodeBackendUnavailable, "could not start codex app-server: "+err.Error(), false)
	}
	c.srv, c.home, c.level = srv, home, level
	fail := func(err error) error {
		msg := err.Error()
		if last := srv.stderr.LastLine(); last != "" {
			msg += ": " + last
		}
		c.close(time.Second)
		return host.Failed(protocol.CodeBackendUnavailable, "codex app-server: "+msg, true)
	}
	if _, err := srv.call(ctx, "initialize", initializeParams{ClientInfo: clientInfo{Name: "agent-host", Version: "1"}}); err != nil {
		return fail(err)
	}
	if err := srv.notify("initialized", nil); err != nil {
		return fail(err)
	}
	p := threadStartParams{Cwd: dir, ApprovalPolicy: policyNever, Sandbox: sandboxMode(level), Model: model,
		DeveloperInstructions: instructions}
	if level >= 2 {
		p.Config = map[string]any{"sandbox_workspace_write.network_access": true}
	}
	b.mu.Lock()
	thread := c.thread
	b.mu.Unlock()
	if thread != "" {
		res, err := srv.call(ctx, "thread/resume", threadResumeParams{ThreadID: thread, ExcludeTurns: turns == nil, Cwd: p.Cwd,
			ApprovalPolicy: p.ApprovalPolicy, Sandbox: p.Sandbox, Model: p.Model, DeveloperInstructions: p.DeveloperInstructions, Config: p.Config})
		if err == nil {
			if turns != nil {
				*turns = res.Get("thread")
			}
			return nil
		}
		if !srv.alive() || turns != nil {
			return fail(err)
		}
		logf("warn", fmt.Sprintf("codex could not resume thread %s (%v); this turn starts a new thread", thread, err))
	}
	res, err := srv.call(ctx, "thread/start", p)
	if err != nil {
		return fail(err)
	}
	b.mu.Lock()
	c.thread = res.Get("thread.id").Str
	b.mu.Unlock()
	return nil
}

func sandboxMode(level int) string {
	if level == 1 {
		return "read-only"
	}
	return "workspace-write"
}

// close ends the chat's app-server and removes its CODEX_HOME.
func (c *chat) close(grace time.Duration) {
	if c.srv != nil {
		c.srv.stop(grace)
		c.srv = nil
	}
	c.home.Remove()
	c.home = agenthome.CodexHome{}
}

// turn runs one turn/start on the chat's server and translates until
// turn/completed.
func (b *Backend) turn(ctx context.Context, c *chat, t *host.Turn) error {
	srv := c.srv
	b.mu.Lock()
	thread := c.thread
	b.mu.Unlock()
	policy := policyNever
	if t.Ask != nil {
		policy = policyUntrusted
	}
	drain(srv.in) // what came between turns is no one's
	res, err := srv.call(ctx, "turn/start", turnStartParams{ThreadID: thread, Input: inputOf(t.Params),
		ApprovalPolicy: policy, Model: t.Params.Model, Effort: t.Params.ReasoningEffort})
	if err != nil {
		if !srv.alive() || errors.Is(err, errServerGone) {
			c.close(time.Second)
			return host.Failed(protocol.CodeBackendFailed, "codex app-server died: "+srv.stderr.LastLine(), true)
		}
		return host.Failed(protocol.CodeBackendFailed, "codex: "+err.Error(), false)
	}
	x := &translator{t: t, srv: srv, thread: thread, turn: res.Get("turn.id").Str, inputs: map[string]json.RawMessage{}}
	interrupted := t.Interrupted
	for {
		select {
		case m, ok := <-srv.in:
			if !ok {
				// It died mid-turn: this run fails, the next turn starts
				// another and resumes the thread.
				c.close(time.Second)
				return host.Failed(protocol.CodeBackendFailed, "codex app-server died mid-turn: "+srv.stderr.LastLine(), true)
			}
			if done, err := x.handle(m); done {
				b.mu.Lock()
				c.turns++
				c.in = x.usage.InputTokens
				b.mu.Unlock()
				return err
			}
		case <-interrupted:
			interrupted = nil
			go func() {
				ictx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if _, err := srv.call(ictx, "turn/interrupt", turnInterruptParams{ThreadID: thread, TurnID: x.turn}); err != nil {
					t.Log("warn", "codex: turn/interrupt: "+err.Error())
				}
			}()
		case <-ctx.Done():
			// The host gave up waiting: the server goes, with what it
			// started; the next turn resumes the thread in another.
			srv.kill()
			c.close(0)
			return host.ErrInterrupted
		}
	}
}

func drain(ch chan rpcMsg) {
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		default:
			return
		}
	}
}

// SessionInfo reports the chat's thread.
func (b *Backend) SessionInfo(ctx context.Context, chatID string) (*protocol.SessionInfo, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.chats[chatID]
	if c == nil {
		return nil, nil
	}
	return &protocol.SessionInfo{ChatID: chatID, SessionID: c.thread, Turns: c.turns, ContextTokens: int(c.in)}, nil
}

// WarmSession starts the chat's app-server and thread ahead of its first
// turn.
func (b *Backend) WarmSession(ctx context.Context, chatID string) error {
	c := b.chat(chatID)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.srv != nil && c.srv.alive() {
		return nil
	}
	c.close(time.Second)
	return b.open(ctx, c, b.cfg.Level, "", "", "", func(string, string) {})
}

// ResetSession ends the chat's app-server and forgets its thread.
func (b *Backend) ResetSession(ctx context.Context, chatID string) (bool, error) {
	b.mu.Lock()
	c, ok := b.chats[chatID]
	delete(b.chats, chatID)
	b.mu.Unlock()
	if ok {
		c.mu.Lock()
		c.close(2 * time.Second)
		c.removeScratch()
		c.mu.Unlock()
	}
	return ok, nil
}

// AsksPermissions: a turn may put codex's approval requests to the daemon.
func (b *Backend) AsksPermissions() bool { return true }

// ImageTypes are the images a turn takes (turn/start's image input, as a
// data: URL the model is given).
func (b *Backend) ImageTypes() []string {
	return []string{"image/png", "image/jpeg", "image/gif", "image/webp"}
}

// inputOf is a turn's turn/start input: its text, then its images.
func inputOf(p protocol.ChatRunParams) []userInput {
	var in []userInput
	if p.Prompt != "" || len(p.Attachments) == 0 {
		in = append(in, userInput{Type: "text", Text: p.Prompt})
	}
	for _, at := range p.Attachments {
		in = append(in, userInput{Type: "image", URL: "data:" + at.MimeType + ";base64," + at.Data})
	}
	return in
}

// Close ends every chat's app-server (stdin closed, then SIGTERM, then
// SIGKILL) and removes what was made for it.
func (b *Backend) Close() error {
	b.mu.Lock()
	chats := make([]*chat, 0, len(b.chats))
	for _, c := range b.chats {
		chats = append(chats, c)
	}
	b.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range chats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.mu.Lock()
			defer c.mu.Unlock()
			c.close(2 * time.Second)
			c.removeScratch()
		}()
	}
	wg.Wait()
	return nil
}

func (c *chat) removeScratch() {
	if c.scratch != "" {
		os.RemoveAll(c.scratch)
		c.scratch = ""
	}
}
