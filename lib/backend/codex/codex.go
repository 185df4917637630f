// Package codex is the agent-host backend for Codex: one long-lived
// `codex app-server` per configuration (level 1's, with no shell, and
// levels 2 and 3's) serving every chat of the host as a thread of its own,
// spoken to in its JSON-RPC on stdio, in a CODEX_HOME of the server's own
// made by lib/agenthome with the grant's configuration (no subagents, no
// plugins) and removed with the process. The server of the backend's
// level is started ahead of the first turn when the face asks (Prestart);
// a chat's thread is started (or, on another server, resumed) with the
// level's sandbox; a turn is turn/start, and an interrupt turn/interrupt,
// after which what the server still runs for the chat is ended.
//
// The translation: item/agentMessage/delta → text_delta; a completed
// agentMessage → text; reasoning → thinking; commandExecution, mcpToolCall,
// fileChange and webSearch → tool_call when they start and tool_result when
// they complete, their id the turn's and the item's; thread/tokenUsage/updated
// → the turn's usage (the sum of its model calls'); turn/completed →
// completed, interrupted (a call left unfinished ends failed), or a terminal
// error. With params.permissions "ask" the turn's approval policy is
// "untrusted" and every approval request is put to the daemon. A server
// that dies mid-turn fails the turns on it; the next turn starts another
// and resumes the thread.
package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentry/agentry/lib/agenthome"
	"github.com/agentry/agentry/lib/confine"
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
	cfg     Config
	env     host.Env
	mu      sync.Mutex
	chats   map[string]*chat
	servers map[string]*shared // by the configuration they run with
	closed  bool
	closing chan struct{} // closed by Close: a server starting gives up
	// starting counts the StartChat calls in flight: Prestart's warm-up
	// thread gives way to them.
	starting int
	version  func() string // codex --version's, asked once
}

type chat struct {
	mu      sync.Mutex // one turn at a time, and the thread's moves
	on      *shared    // the server its thread is loaded in, if any
	scratch string
	mark    string                     // its commands' markVar
	servers map[string]json.RawMessage // its MCP servers, claude's configuration
	dirs    []string                   // writable beyond its workspace
	fork    string                     // the thread its own is to fork, at its first load
	mode    threadMode                 // what its thread is loaded with
	asks    bool                       // its turns ask: its thread is loaded at their approval policy
	dir     string                     // the directory its thread works in

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
	if cfg.Level < 1 || cfg.Level > 3 {
		return nil, fmt.Errorf("codex: level %d: the levels are 1, 2 and 3", cfg.Level)
	}
	b := &Backend{cfg: cfg, env: env, chats: map[string]*chat{}, servers: map[string]*shared{}, closing: make(chan struct{})}
	b.version = sync.OnceValue(b.askVersion)
	return b, nil
}

func (b *Backend) Name() string { return "codex" }

// Version is the CLI's version, asked of it once (a process of the
// CLI's each time: the host's hello asks twice, ahead of every session).
func (b *Backend) Version() string { return b.version() }

func (b *Backend) askVersion() string {
	cmd := exec.Command(b.cfg.Program, "--version")
	cmd.Env = b.env.Environ
	out, err := proc.Output(cmd, b.env.Start())
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
		c = &chat{mark: newMark()}
		b.chats[id] = c
	}
	return c
}

// RunTurn runs one turn on the shared app-server of the turn's level,
// its thread loaded there (ready).
func (b *Backend) RunTurn(ctx context.Context, t *host.Turn) error {
	level := b.cfg.Level
	if t.Params.Level > 0 {
		level = t.Params.Level
	}
	if t.OneShot != nil {
		return b.oneShot(ctx, t, level)
	}
	c := b.chat(t.Params.ChatID)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asks = asks(t)
	if err := b.ready(ctx, c, level, t.Params, t.Log); err != nil {
		return err
	}
	return b.turn(ctx, c, t, level)
}

// StartChat loads the chat's thread ahead of its first turn (the ACP
// face's session/new, seconds before the first prompt): on the shared
// server of p's level, in p's workspace, at the approval policy of p's
// turns, its rollout file written, so that the prompt is a turn/start
// alone and costs what a later one does. A thread's start is most of
// what a first turn costs beyond a later one; the rest is codex's
// changing the thread's approval policy (a turn/start that asks, on a
// thread started at "never") and writing the rollout file, each tens of
// ms of codex's own.
func (b *Backend) StartChat(ctx context.Context, p protocol.ChatRunParams) error {
	level := b.cfg.Level
	if p.Level > 0 {
		level = p.Level
	}
	// With questions on: the face's turns take them (the person is at
	// the editor), and a turn that does not tells the agent so.
	p.Questions = protocol.QuestionsAsk
	b.mu.Lock()
	b.starting++
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.starting--
		b.mu.Unlock()
	}()
	c := b.chat(p.ChatID)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asks = p.Permissions == protocol.PermissionsAsk
	b.mu.Lock()
	fresh := c.thread == "" && c.fork == "" // thread/start, which writes no rollout
	b.mu.Unlock()
	if err := b.ready(ctx, c, level, p, func(string, string) {}); err != nil {
		return err
	}
	if fresh {
		b.save(ctx, c, p.ChatID)
	}
	return nil
}

// save has codex write the rollout file of the chat's thread, new and
// loaded, which it otherwise does at the thread's first turn (its
// directory, the file, the thread's metadata): naming a thread writes it.
// The name is the chat's. A failure leaves the work to the first turn.
// Under c.mu.
func (b *Backend) save(ctx context.Context, c *chat, chatID string) {
	b.mu.Lock()
	thread := c.thread
	b.mu.Unlock()
	_, _ = c.on.srv.call(ctx, "thread/name/set", threadSetNameParams{ThreadID: thread, Name: "agent-host " + chatID})
}

// asks reports whether a turn puts codex's approvals to the host (the
// daemon decides, or a policy applies).
func asks(t *host.Turn) bool { return t.Ask != nil || t.AskAll }

// approvalPolicy is codex's policy for turns that ask, or do not:
// "untrusted", at which codex asks for every command and every file
// change, or "never".
func approvalPolicy(asks bool) string {
	if asks {
		return policyUntrusted
	}
	return policyNever
}

// ready has the chat's thread loaded for a turn of p at level, on the
// shared server of the level: loaded there first when it is not (its
// first turn, a level of another configuration, a server started again),
// or again when the turn takes questions and the thread was loaded
// without (the other way round, the turn tells the agent nobody is there
// to answer, which a reload would not change). Under c.mu.
func (b *Backend) ready(ctx context.Context, c *chat, level int, p protocol.ChatRunParams, logf func(level, msg string)) error {
	sh, g, err := b.server(ctx, level)
	if err != nil {
		return err
	}
	want := modeOf(p)
	if c.on == sh && (c.mode.questions || !want.questions) {
		return nil
	}
	c.mode = want
	b.mu.Lock()
	thread := c.thread
	b.mu.Unlock()
	c.on.unload(thread)
	c.on = nil
	return b.load(ctx, c, sh, g, level, p.Model, p.SystemPrompt, p.Workspace, logf, nil)
}

// oneShot runs a one-shot: a chat of its own on a server of its own that
// ends with it, no thread carried from one to the next.
func (b *Backend) oneShot(ctx context.Context, t *host.Turn, level int) error {
	g, err := grant.For(grant.Options{Level: level, Harness: grant.Codex, Program: b.cfg.Program})
	if err != nil {
		return host.Failed(protocol.CodeBadRequest, err.Error(), false)
	}
	sh := &shared{ready: make(chan struct{})}
	b.startShared(context.WithoutCancel(ctx), sh, g)
	if sh.err != nil {
		return sh.err
	}
	c := &chat{mark: newMark(), mode: modeOf(t.Params), asks: asks(t)}
	defer func() {
		sh.close(2 * time.Second)
		c.removeScratch()
	}()
	if err := b.load(ctx, c, sh, g, level, t.Params.Model, t.Params.SystemPrompt, t.Params.Workspace, t.Log, nil); err != nil {
		return err
	}
	return b.turn(ctx, c, t, level)
}

// scratchPrefix names a level 1 chat's scratch directories among the
// user's run directories (agenthome.Runs); each chat sweeps those of dead
// owners before it makes its own.
const scratchPrefix = agenthome.HostCodexScratch

// notSignedIn is agenthome.ErrNotSignedIn in the words of the backend's
// configuration (hello.config, or agent-host --acp --config).
const notSignedIn = "codex is not signed in on this machine (no credential and no model provider; run codex login, or set the codex configuration's configFile to a config.toml that names a model provider)"

// load starts the chat's thread on sh, or resumes it there; a thread that
// cannot be resumed is replaced by a new one, with a warning. With turns
// set, the chat's thread must be resumed, and *turns is given the thread
// as codex reports it, its turns included.
func (b *Backend) load(ctx context.Context, c *chat, sh *shared, g *grant.Grant, level int, model, instructions, workspace string, logf func(level, msg string), turns *gjson.Result) error {
	dir := b.cfg.Workspace
	if workspace != "" {
		dir = workspace
	}
	if g.Scratch {
		if c.scratch == "" {
			runs := agenthome.NewRuns()
			runs.Sweep(scratchPrefix)
			var err error
			if c.scratch, err = runs.Dir(scratchPrefix); err != nil {
				return host.Failed(protocol.CodeBackendUnavailable, err.Error(), false)
			}
		}
		dir = c.scratch
	}
	c.dir = dir
	srv := sh.srv
	fail := func(err error) error {
		if !srv.alive() {
			return serverError(srv, err)
		}
		return host.Failed(protocol.CodeBackendFailed, "codex: "+err.Error(), false)
	}
	// Every command of the thread carries the chat's mark (see stopMarked).
	config := map[string]any{"shell_environment_policy.set." + markVar: c.mark}
	if level >= 2 {
		config["sandbox_workspace_write.network_access"] = true
	}
	if len(c.servers) > 0 {
		config["mcp_servers"] = mcpConfig(c.servers)
	}
	if len(c.dirs) > 0 && level >= 2 {
		config["sandbox_workspace_write.writable_roots"] = c.dirs
	}
	if c.mode.questions {
		config[featureQuestions] = true
		config["suppress_unstable_features_warning"] = true
	}
	p := threadStartParams{Cwd: dir, ApprovalPolicy: approvalPolicy(c.asks), Sandbox: sandboxMode(level), Model: model,
		DeveloperInstructions: instructions, Config: config}
	b.mu.Lock()
	thread := c.thread
	b.mu.Unlock()
	if c.fork != "" && thread == "" {
		res, err := srv.call(ctx, "thread/fork", threadForkParams{ThreadID: c.fork, Cwd: p.Cwd, ApprovalPolicy: p.ApprovalPolicy,
			Sandbox: p.Sandbox, Model: p.Model, DeveloperInstructions: p.DeveloperInstructions, Config: p.Config})
		if err != nil {
			return fail(err)
		}
		b.mu.Lock()
		c.thread, c.fork = res.Get("thread.id").Str, ""
		b.mu.Unlock()
		c.on = sh
		return nil
	}
	if thread != "" {
		res, err := srv.call(ctx, "thread/resume", threadResumeParams{ThreadID: thread, ExcludeTurns: turns == nil, Cwd: p.Cwd,
			ApprovalPolicy: p.ApprovalPolicy, Sandbox: p.Sandbox, Model: p.Model, DeveloperInstructions: p.DeveloperInstructions, Config: p.Config})
		if err == nil {
			if turns != nil {
				*turns = res.Get("thread")
			}
			c.on = sh
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
	c.on = sh
	return nil
}

func sandboxMode(level int) string {
	if level == 1 {
		return "read-only"
	}
	return "workspace-write"
}

// turn runs one turn/start on the chat's server and translates until
// turn/completed.
func (b *Backend) turn(ctx context.Context, c *chat, t *host.Turn, level int) error {
	sh := c.on
	srv := sh.srv
	b.mu.Lock()
	thread := c.thread
	b.mu.Unlock()
	policy := approvalPolicy(asks(t))
	in := sh.subscribe(thread)
	defer sh.unsubscribe(thread, in)
	res, err := srv.call(ctx, "turn/start", turnStartParams{ThreadID: thread, Input: inputOf(t.Params),
		ApprovalPolicy: policy, Model: t.Params.Model, Effort: t.Params.ReasoningEffort})
	if err != nil {
		if !srv.alive() || errors.Is(err, errServerGone) {
			c.on = nil
			return host.Failed(protocol.CodeBackendFailed, "codex app-server died: "+srv.stderr.LastLine(), true)
		}
		return host.Failed(protocol.CodeBackendFailed, "codex: "+err.Error(), false)
	}
	x := &translator{t: t, srv: srv, thread: thread, turn: res.Get("turn.id").Str, inputs: map[string]json.RawMessage{},
		level: level, roots: confine.Roots(slices.DeleteFunc(append([]string{c.dir}, c.dirs...), func(d string) bool { return d == "" }))}
	interrupted := t.Interrupted
	for {
		select {
		case m, ok := <-in:
			if !ok {
				// It died mid-turn: this run fails, the next turn starts
				// another and resumes the thread.
				c.on = nil
				x.cut("the codex app-server died")
				return host.Failed(protocol.CodeBackendFailed, "codex app-server died mid-turn: "+srv.stderr.LastLine(), true)
			}
			done, err := x.handle(m)
			if !done {
				continue
			}
			if errors.Is(err, host.ErrInterrupted) {
				// codex's turn ended; what it ran for the turn may not
				// have: it goes before the turn is said to be over.
				stopMarked(srv.child.PID(), c.mark)
			}
			b.mu.Lock()
			c.turns++
			c.in = x.usage.InputTokens
			b.mu.Unlock()
			return err
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
			// The host gave up waiting: what the server runs for the chat
			// goes, and the server too when no other chat's turn is on
			// it; the next turn loads the thread again.
			x.cut("interrupted")
			stopMarked(srv.child.PID(), c.mark)
			sh.unsubscribe(thread, in)
			if sh.busy() == 0 {
				srv.kill()
			}
			c.on = nil
			return host.ErrInterrupted
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

// WarmSession starts the shared app-server the chat's first turn will
// run on, at the backend's level; the thread waits for the turn, which
// knows its workspace.
func (b *Backend) WarmSession(ctx context.Context, chatID string) error {
	_, _, err := b.server(ctx, b.cfg.Level)
	return err
}

// ResetSession forgets the chat: what its server still runs for it ends,
// and its thread is unsubscribed.
func (b *Backend) ResetSession(ctx context.Context, chatID string) (bool, error) {
	b.mu.Lock()
	c, ok := b.chats[chatID]
	delete(b.chats, chatID)
	b.mu.Unlock()
	if ok {
		c.mu.Lock()
		b.mu.Lock()
		thread := c.thread
		b.mu.Unlock()
		if c.on != nil && c.on.up() {
			stopMarked(c.on.srv.child.PID(), c.mark)
		}
		c.on.unload(thread)
		c.on = nil
		c.removeScratch()
		c.mu.Unlock()
	}
	return ok, nil
}

// EnforcesPolicy: under a policy (Turn.AskAll) a turn runs codex at
// "untrusted", which asks for every command and file change, and puts
// each to Turn.Ask (host.PolicyEnforcer).
func (b *Backend) EnforcesPolicy() bool { return true }

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

// Close ends every shared app-server (stdin closed, then SIGTERM, then
// SIGKILL) and removes what was made for it and for the chats.
func (b *Backend) Close() error {
	b.mu.Lock()
	if !b.closed {
		close(b.closing)
	}
	b.closed = true
	servers := slices.Collect(maps.Values(b.servers))
	chats := slices.Collect(maps.Values(b.chats))
	b.mu.Unlock()
	var wg sync.WaitGroup
	for _, sh := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-sh.ready
			sh.close(2 * time.Second)
		}()
	}
	wg.Wait()
	for _, c := range chats {
		c.mu.Lock()
		c.removeScratch()
		c.mu.Unlock()
	}
	return nil
}

func (c *chat) removeScratch() {
	if c.scratch != "" {
		os.RemoveAll(c.scratch)
		c.scratch = ""
	}
}
