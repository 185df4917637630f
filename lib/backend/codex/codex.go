// Package codex is the agent-host backend for Codex: a turn is one
// `codex exec --json` run (the first) or `codex exec … resume THREAD -`
// (the next), with the argv and the per-run CODEX_HOME lib/grant and
// lib/agentrun give the chat's level, the prompt on stdin.
//
// The translation: thread.started → the chat's session (thread) id;
// agent_message → text; reasoning → thinking; mcp_tool_call,
// command_execution and file_change → tool_call when they start and
// tool_result when they complete; turn.completed → usage (codex reports it
// cumulative for the thread: the per-turn difference is reported) and
// completed; turn.failed → a terminal error. An interrupt is SIGINT to the
// codex process group; codex then exits with no terminal event, and the
// run ends as interrupted.
package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/agentrun"
	"github.com/agentry/agentry/lib/agentstream"
	"github.com/agentry/agentry/lib/grant"
	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/ndjson"
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
	thread string
	turns  int
	// cumulative usage at the end of the last turn
	in, out, cached int64
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
		return nil, err
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
	out, err := cmd.Output()
	if err != nil {
		return "codex (version unknown)"
	}
	f := strings.Fields(string(out))
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

// RunTurn runs one codex exec for the turn.
func (b *Backend) RunTurn(ctx context.Context, t *host.Turn) error {
	c := b.chat(t.Params.ChatID)
	level := b.cfg.Level
	if t.Params.Level > 0 {
		level = t.Params.Level
	}
	b.mu.Lock()
	thread := c.thread
	b.mu.Unlock()
	g, err := grant.For(grant.Options{Level: level, Harness: grant.Codex, Program: b.cfg.Program, Model: t.Params.Model, Resume: thread})
	if err != nil {
		return host.Failed(protocol.CodeBadRequest, err.Error(), false)
	}
	env := b.env.Environ
	home, err := agentrun.PrepareCodexHome(g, agentrun.CodexSource{Config: b.cfg.ConfigFile}, env)
	if err != nil {
		return host.Failed(protocol.CodeBackendUnavailable, err.Error(), false)
	}
	defer home.Remove()
	cmd := exec.Command(g.Argv[0], g.Argv[1:]...)
	cmd.Dir = b.cfg.Workspace
	if t.Params.Workspace != "" {
		cmd.Dir = t.Params.Workspace
	}
	if g.Scratch {
		scratch, err := agentrun.RunDir("agent-host-codex")
		if err != nil {
			return err
		}
		defer os.RemoveAll(scratch)
		cmd.Dir = scratch
	}
	cmd.Env = append(env, "CODEX_HOME="+home.Dir)
	cmd.Stdin = strings.NewReader(t.Params.Prompt)
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer stdout.Close()
	errTail := proc.NewTail(4096)
	cmd.Stdout, cmd.Stderr = stdoutW, io.MultiWriter(b.env.StderrOr(), errTail)
	cmd.WaitDelay = time.Second
	child, err := proc.Start(cmd, proc.Options{})
	stdoutW.Close()
	if err != nil {
		return host.Failed(protocol.CodeBackendUnavailable, "could not start codex: "+err.Error(), false)
	}
	x := &translator{t: t, b: b, c: c}
	read := make(chan struct{})
	go func() {
		defer close(read)
		skipped := func(*ndjson.TooLongError) { t.Log("warn", "codex: skipped an over-long line") }
		_ = ndjson.Lines(stdout, 0, skipped, func(line []byte) bool { x.line(line); return true })
	}()
	interrupted := false
	select {
	case <-child.Exited():
	case <-t.Interrupted:
		interrupted = true
		_ = child.Signal(syscall.SIGINT)
		select {
		case <-child.Exited():
		case <-ctx.Done():
			_ = child.Signal(syscall.SIGKILL)
		}
	case <-ctx.Done():
		interrupted = true
		_ = child.Signal(syscall.SIGKILL)
	}
	exit := child.End() // with what it left running in its group
	// All of stdout is read, bounded in case an escaped process holds it.
	_ = stdout.SetReadDeadline(time.Now().Add(time.Second))
	<-read
	switch {
	case x.failed != "":
		return host.Failed(protocol.CodeBackendFailed, x.failed, false)
	case x.completed:
		return nil
	case interrupted:
		return host.ErrInterrupted
	case !exit.OK():
		return host.Failed(protocol.CodeBackendFailed, fmt.Sprintf("codex ended without finishing its turn (%s): %s", exit, errTail.LastLine()), false)
	}
	return host.Failed(protocol.CodeBackendFailed, "codex ended without finishing its turn", false)
}

// translator turns codex's --json lines into agent events.
type translator struct {
	t         *host.Turn
	b         *Backend
	c         *chat
	last      string
	completed bool
	failed    string
}

func (x *translator) line(line []byte) {
	if ndjson.Check(line) != ndjson.Valid {
		return
	}
	s := string(line)
	switch gjson.Get(s, "type").Str {
	case "thread.started":
		x.b.mu.Lock()
		x.c.thread = gjson.Get(s, "thread_id").Str
		x.b.mu.Unlock()
	case "item.started", "item.completed":
		for _, e := range agentstream.Codex(s) {
			if e.Type == protocol.EvText {
				x.last = e.Text
			}
			x.t.Emit(e)
		}
	case "turn.completed":
		in, out, cached := gjson.Get(s, "usage.input_tokens").Int(), gjson.Get(s, "usage.output_tokens").Int(), gjson.Get(s, "usage.cached_input_tokens").Int()
		x.b.mu.Lock()
		u := &protocol.Usage{InputTokens: in - x.c.in, OutputTokens: out - x.c.out, CacheReadTokens: cached - x.c.cached}
		x.c.in, x.c.out, x.c.cached = in, out, cached
		x.c.turns++
		thread := x.c.thread
		x.b.mu.Unlock()
		x.t.Emit(protocol.AgentEvent{Type: protocol.EvUsage, Usage: u})
		x.t.Emit(protocol.AgentEvent{Type: protocol.EvCompleted, Text: x.last, Usage: u, SessionID: thread})
		x.completed = true
	case "turn.failed":
		x.failed = gjson.Get(s, "error.message").Str
		if x.failed == "" {
			x.failed = "codex: the turn failed"
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

// WarmSession has nothing to warm: codex starts per turn.
func (b *Backend) WarmSession(ctx context.Context, chatID string) error { return nil }

// ResetSession forgets the chat's thread.
func (b *Backend) ResetSession(ctx context.Context, chatID string) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.chats[chatID]
	delete(b.chats, chatID)
	return ok, nil
}
