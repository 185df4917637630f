// Package claude is the agent-host backend for Claude Code: one
// long-lived claude process per chat in streaming mode
// (--input-format stream-json --output-format stream-json --verbose
// --include-partial-messages), with the grant lib/grant gives the chat's
// level. A turn writes one user message line and ends at the CLI's result.
//
// The translation: stream_event text deltas → text_delta; each assistant
// content block → text, thinking or tool_call; user tool_result blocks →
// tool_result; result → usage, then completed, or error when is_error
// (retryable for 429 and 5xx); system/init → the chat's session id, and a
// warning when an MCP server failed. An interrupt is the stream-json
// control request; the CLI ends the turn with an aborted result. A CLI
// that exits between turns is started again with --resume; one that dies
// mid-turn ends that run with backend_failed.
package claude

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/agentstream"
	"github.com/agentry/agentry/lib/confine"
	"github.com/agentry/agentry/lib/grant"
	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/ndjson"
	"github.com/agentry/agentry/lib/policy"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/protocol"
	"github.com/tidwall/gjson"
)

// Config is the backend's configuration: hello.config's "claude" object.
type Config struct {
	// Program is the claude binary (default: claude on PATH, or
	// $AGENT_HOST_CLAUDE_BIN).
	Program string `json:"program"`
	// Level is the default permission level for chats (default 2).
	Level int `json:"level"`
	// Workspace is the default working directory.
	Workspace string `json:"workspace"`
	// Models is the model catalog list_models answers with.
	Models []protocol.ModelInfo `json:"models"`
	// ModelsFile is a JSON file holding the catalog, when Models is empty.
	ModelsFile string `json:"modelsFile"`
	// MaxLine caps lines read from the CLI (default 64 MiB).
	MaxLine int `json:"maxLine"`
	// Env is added to the CLI's environment.
	Env []string `json:"env"`
}

// Backend hosts claude chats.
type Backend struct {
	cfg Config
	env host.Env

	mu    sync.Mutex
	chats map[string]*chat
	// version is the CLI's, asked once: each claude --version is a
	// start of a 400 MB binary, and hello asks twice (its log line and
	// ready).
	version func() string
}

// New makes the backend from hello.config; its CLIs run in env.
func New(config json.RawMessage, env host.Env) (*Backend, error) {
	var c struct {
		Claude Config `json:"claude"`
	}
	if len(config) > 0 {
		if err := json.Unmarshal(config, &c); err != nil {
			return nil, fmt.Errorf("claude: bad config: %v", err)
		}
	}
	cfg := c.Claude
	prog, err := grant.Program(grant.Claude, cfg.Program, env.Getenv("AGENT_HOST_CLAUDE_BIN"))
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, grant.InstallAdvice(grant.Claude, "AGENT_HOST_CLAUDE_BIN"))
	}
	cfg.Program = prog
	if cfg.Level == 0 {
		cfg.Level = 2
	}
	if cfg.Level < 1 || cfg.Level > 3 {
		return nil, fmt.Errorf("claude: level %d: the levels are 1, 2 and 3", cfg.Level)
	}
	if len(cfg.Models) == 0 && cfg.ModelsFile != "" {
		b, err := os.ReadFile(cfg.ModelsFile)
		if err != nil {
			return nil, fmt.Errorf("claude: the models file: %v", err)
		}
		if err := json.Unmarshal(b, &cfg.Models); err != nil {
			return nil, fmt.Errorf("claude: the models file is not a JSON array of models: %v", err)
		}
	}
	b := &Backend{cfg: cfg, env: env, chats: map[string]*chat{}}
	b.version = sync.OnceValue(b.askVersion)
	return b, nil
}

// OneShot is a single claude -p run with the one-shot parameters, the
// prompt on stdin; its tool calls are reported as log notices, and its
// answer as the run's completed event.
func (b *Backend) OneShot(ctx context.Context, t *host.Turn) (*protocol.Usage, error) {
	p := t.OneShot
	if t.AskAll || t.Question != nil {
		return b.oneShotAsking(ctx, t)
	}
	g, err := grant.For(grant.Options{Level: b.cfg.Level, Harness: grant.Claude, Program: b.cfg.Program, Model: p.Model})
	if err != nil {
		return nil, refused(err)
	}
	argv := g.Argv
	if p.SystemPrompt != "" {
		dir, err := privateDir()
		if err != nil {
			return nil, host.Failed(protocol.CodeBackendUnavailable, "could not write the system prompt: "+err.Error(), false)
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "system-prompt.md")
		if err := writePrivate(path, p.SystemPrompt); err != nil {
			return nil, host.Failed(protocol.CodeBackendUnavailable, "could not write the system prompt: "+err.Error(), false)
		}
		argv = append(argv, "--system-prompt-file", path)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = p.Workspace
	if cmd.Dir == "" {
		cmd.Dir = b.cfg.Workspace
	}
	cmd.Env = append(append([]string{}, b.env.Environ...), b.cfg.Env...)
	child, err := proc.StartPiped(cmd, proc.Pipes{Stdin: strings.NewReader(p.Prompt), Stderr: b.env.StderrOr(), Options: b.env.Start()})
	if err != nil {
		return nil, host.Failed(protocol.CodeBackendUnavailable, "could not start claude: "+err.Error(), false)
	}
	stdout, errTail := child.Stdout, child.Stderr
	defer stdout.Close()
	var usage *protocol.Usage
	sink := &host.Turn{Log: t.Log, Emit: oneShotEmit(t, &usage)}
	x := &translator{t: sink, c: &chat{}, b: b}
	var result error
	done := false
	stopKill := context.AfterFunc(ctx, func() { _ = child.Signal(syscall.SIGKILL) })
	defer stopKill()
	_ = ndjson.Lines(stdout, b.cfg.MaxLine, nil, func(line []byte) bool {
		done, result = x.line(line)
		return !done
	})
	child.End()
	if !done {
		return nil, host.Failed(protocol.CodeBackendFailed, "claude ended without a result: "+errTail.LastLine(), false)
	}
	return usage, result
}

// oneShotEmit is how a one-shot reports: its tool calls as log notices,
// its usage kept in usage, its answer as the run's completed event.
func oneShotEmit(t *host.Turn, usage **protocol.Usage) func(protocol.AgentEvent) {
	label := t.OneShot.ContextLabel
	if label == "" {
		label = "one-shot"
	}
	return func(e protocol.AgentEvent) {
		switch e.Type {
		case protocol.EvToolCall:
			t.Log("info", fmt.Sprintf("%s: calling %s", label, e.Name))
		case protocol.EvUsage:
			*usage = e.Usage
		case protocol.EvCompleted:
			t.Emit(e)
		}
	}
}

// oneShotAsking is a one-shot whose calls are asked (a policy's) or
// whose agent may ask questions: claude -p cannot ask, so the prompt is
// one turn of a CLI in streaming mode, in a chat of its own that ends
// with it.
func (b *Backend) oneShotAsking(ctx context.Context, t *host.Turn) (*protocol.Usage, error) {
	c := &chat{level: b.cfg.Level, workspace: b.cfg.Workspace}
	defer c.removePrivate()
	var usage *protocol.Usage
	sink := *t
	sink.Emit = oneShotEmit(t, &usage)
	sink.Params.SystemPrompt = t.OneShot.SystemPrompt
	err := b.turn(ctx, c, &sink)
	if c.cli != nil {
		c.cli.stop(2 * time.Second)
	}
	return usage, err
}

func (b *Backend) Name() string { return "claude" }

// AsksPermissions: a turn may put its tool calls to the daemon.
func (b *Backend) AsksPermissions() bool { return true }

// EnforcesPolicy: a policy's turn (Turn.AskAll) has every call asked,
// through a PreToolUse hook, with its policy.Call (calls.go).
func (b *Backend) EnforcesPolicy() bool { return true }

// ImageTypes are the images a turn takes: those the Messages API takes.
func (b *Backend) ImageTypes() []string {
	return []string{"image/png", "image/jpeg", "image/gif", "image/webp"}
}

// userContent is a turn's user message content: the prompt as a string,
// or, with images, the images as Messages API image blocks, then the
// prompt's text (an empty text block is one the API refuses).
func userContent(p protocol.ChatRunParams) any {
	if len(p.Attachments) == 0 {
		return p.Prompt
	}
	var blocks []any
	for _, at := range p.Attachments {
		blocks = append(blocks, map[string]any{"type": "image",
			"source": map[string]string{"type": "base64", "media_type": at.MimeType, "data": at.Data}})
	}
	if p.Prompt != "" {
		blocks = append(blocks, map[string]string{"type": "text", "text": p.Prompt})
	}
	return blocks
}

// Version is the CLI's version, asked of it the first time.
func (b *Backend) Version() string {
	if b.version == nil {
		return b.askVersion()
	}
	return b.version()
}

func (b *Backend) askVersion() string {
	cmd := exec.Command(b.cfg.Program, "--version")
	cmd.Env = b.env.Environ
	out, err := proc.Output(cmd, b.env.Start())
	f := strings.Fields(string(out))
	if err != nil || len(f) == 0 {
		return "claude (version unknown)"
	}
	return "claude " + f[0]
}

// chat is one conversation and its CLI process.
type chat struct {
	id        string
	mu        sync.Mutex // one turn at a time, and process changes
	cli       *cli
	asks      bool   // cli was started to ask the daemon (params.permissions ask)
	questions bool   // cli was started offering AskUserQuestion
	prompts   bool   // cli was started asking on stdio (--permission-prompt-tool stdio)
	cliLevel  int    // the level whose grant cli was started with
	cliEffort string // the --effort cli was started with ("": the CLI's own)
	cliModel  string // the --model cli was started with ("": the CLI's own)
	session   string
	turns     int
	context   int
	model     string
	servers   map[string]json.RawMessage
	level     int
	workspace string
	dirs      []string // --add-dir: directories beyond the workspace
	// fork: the CLI starts as a fork of session (--fork-session), until
	// it says the new session's id; under Backend.mu.
	fork bool
	// private is the chat's private directory (mcp.json), made when its
	// CLI is first started with MCP servers; removed with the chat.
	private string
}

func (b *Backend) chat(id string) *chat {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.chats[id]
	if c == nil {
		c = &chat{id: id, level: b.cfg.Level, workspace: b.cfg.Workspace}
		b.chats[id] = c
	}
	return c
}

// cli is a running claude process.
type cli struct {
	child  *proc.Child
	stdin  io.WriteCloser
	lines  chan []byte   // stdout, line by line; closed at the end
	exited chan struct{} // closed once it is reaped, with what it left in its group
	stderr *proc.Tail
	out    *ndjson.Writer // on stdin: one line per message, never interleaved
	// allowed is what its flags let run unasked: a call of it is
	// Ask.Granted; so is one the daemon allowed for the session.
	allowed allowed
	session sessionGrants
	// roots are where its level lets it write: its working copy and the
	// directories added to it (--add-dir), their symlinks resolved. A
	// write elsewhere, or in a .git of theirs, is beyond the level (never
	// Ask.Granted).
	roots []string
	// cost is the total_cost_usd it last reported: its running total,
	// which a turn's own cost is reckoned from when its result says
	// nothing more exact (turnCost).
	cost float64
}

func (c *cli) send(v any) error { return c.out.Encode(v) }

// outside is why a file call writes beyond the CLI's roots: nil when
// every path it writes lies in one of them and in no .git of theirs
// (confine.Writable; a relative one from the call's directory, else the
// first root), else confine.ErrOutside or confine.ErrGitDir.
func (c *cli) outside(call policy.Call) error {
	if len(c.roots) == 0 {
		return nil
	}
	for _, w := range call.Writes {
		if !filepath.IsAbs(w) {
			base := call.Dir
			if base == "" {
				base = c.roots[0]
			}
			w = filepath.Join(base, w)
		}
		var why error = confine.ErrOutside
		for _, r := range c.roots {
			_, err := confine.Writable(r, w)
			if err == nil {
				why = nil
				break
			}
			if errors.Is(err, confine.ErrGitDir) {
				why = err
			}
		}
		if why != nil {
			return why
		}
	}
	return nil
}

// warmID is the request id of the control request a CLI started ahead of
// its first turn is sent to prepare for it.
const warmID = "agent-host-warm"

// warm has a CLI started ahead of its first turn do that turn's
// preparation now: asked for its context's usage in summary, it builds
// what a request to the model holds (system prompt, tools) and answers
// from local estimates, sending the model's API nothing. The answer is
// not read (response takes initialize's only). Turn 1's first chunk then
// comes sooner: 173 ms against 185, the medians of 20 processes each of
// the pinned CLI, a 2 s gap after the start.
func (c *cli) warm() {
	_ = c.send(map[string]any{"type": "control_request", "request_id": warmID,
		"request": map[string]any{"subtype": "get_context_usage", "detail": "summary"}})
}

// launch is what a CLI is started with: a turn's params (its level,
// model, effort and workspace), whether it asks the daemon, offers
// AskUserQuestion, and has every call asked (a policy's run).
type launch struct {
	params    protocol.ChatRunParams
	asks      bool
	questions bool
	askAll    bool
	// oneShot: the params are a one-shot's, whose system prompt replaces
	// claude's (a chat's is not claude's to take).
	oneShot bool
	log     func(level, msg string)
}

// launchOf is what a turn starts the CLI with; nil is a start ahead of
// any turn, with the chat's defaults.
func launchOf(t *host.Turn) launch {
	if t == nil {
		return launch{log: func(string, string) {}}
	}
	return launch{params: t.Params, asks: asksOf(t), questions: t.Question != nil, askAll: t.AskAll, oneShot: t.OneShot != nil, log: t.Log}
}

// launchFor is what a turn of params p will want, for a start ahead of
// it: a policy of its own has every call asked (the host's --policy is
// not in p: a turn under it finds the CLI asking on stdio where p asks
// the daemon or takes questions, and starts it again where not).
func launchFor(p protocol.ChatRunParams) launch {
	return launch{params: p, asks: p.Permissions == protocol.PermissionsAsk, questions: p.Questions == protocol.QuestionsAsk,
		askAll: p.Policy != "", log: func(string, string) {}}
}

// asksOf: the turn's CLI asks the daemon for what the level does not
// allow. A turn under a policy has an Ask whatever its permissions, to
// check every call; the level's grant is then the daemon's only where
// params.permissions is ask.
func asksOf(t *host.Turn) bool {
	if t.AskAll {
		return t.Ask != nil && t.Params.Permissions == protocol.PermissionsAsk
	}
	return t.Ask != nil
}

// start runs the chat's CLI, resuming its session when it has one.
func (b *Backend) start(c *chat, l launch) (*cli, error) {
	level := c.level
	if l.params.Level > 0 {
		level = l.params.Level
	}
	if l.params.Model != "" {
		c.model = l.params.Model
	}
	b.mu.Lock()
	session, fork := c.session, c.fork
	b.mu.Unlock()
	asks, effort := l.asks, l.params.ReasoningEffort
	files, err := c.filesDir()
	if err != nil {
		return nil, host.Failed(protocol.CodeBackendUnavailable, "could not make the chat's private directory: "+err.Error(), false)
	}
	g, err := grant.For(grant.Options{Level: level, Harness: grant.Claude, Program: b.cfg.Program, Model: c.model,
		Resume: session, MCPServers: c.servers, Stream: true, Ask: asks, Effort: effort, FilesDir: files,
		Questions: l.questions, AskAll: l.askAll})
	if err != nil {
		return nil, refused(err)
	}
	if err := writeFiles(g); err != nil {
		return nil, host.Failed(protocol.CodeBackendUnavailable, "could not write claude's MCP configuration: "+err.Error(), false)
	}
	argv := g.Argv
	if l.params.SystemPrompt != "" && l.oneShot {
		path, err := c.writeSystemPrompt(l.params.SystemPrompt)
		if err != nil {
			return nil, host.Failed(protocol.CodeBackendUnavailable, "could not write the system prompt: "+err.Error(), false)
		}
		argv = append(argv[:len(argv):len(argv)], "--system-prompt-file", path)
	}
	if fork && session != "" {
		argv = append(argv[:len(argv):len(argv)], "--fork-session")
	}
	if len(c.dirs) > 0 {
		argv = append(append(argv[:len(argv):len(argv)], "--add-dir"), c.dirs...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = c.workspace
	if l.params.Workspace != "" {
		cmd.Dir = l.params.Workspace
	}
	cmd.Env = append(append([]string{}, b.env.Environ...), b.cfg.Env...)
	// The host's stderr is the backend's.
	child, err := proc.StartPiped(cmd, proc.Pipes{StdinPipe: true, Stderr: b.env.StderrOr(), Options: b.env.Start()})
	if err != nil {
		return nil, host.Failed(protocol.CodeBackendUnavailable, "could not start claude: "+err.Error(), false)
	}
	stdout := child.Stdout
	p := &cli{child: child.Child, stdin: child.Stdin, out: ndjson.NewWriter(child.Stdin), lines: make(chan []byte, 256), exited: make(chan struct{}), stderr: child.Stderr,
		allowed: allowedOf(g), roots: confine.Roots(append([]string{cmd.Dir}, c.dirs...))}
	c.asks, c.cliLevel, c.cliEffort, c.cliModel = asks, level, effort, c.model
	c.questions, c.prompts = l.questions, asks || l.questions || l.askAll
	// The CLI's answer says what slash commands it offers (see
	// translator.response). The policy's hook is registered whatever the
	// turn (calls.go): it decides nothing but in a policy's turn, which
	// then needs no other process than one that asks on stdio.
	_ = p.send(map[string]any{"type": "control_request", "request_id": initializeID,
		"request": map[string]any{"subtype": "initialize", "hooks": hooks()}})
	go func() {
		defer stdout.Close()
		defer close(p.lines)
		skipped := func(*ndjson.TooLongError) {
			l.log("warn", "claude: skipped an over-long line from the CLI")
		}
		_ = ndjson.Lines(stdout, b.cfg.MaxLine, skipped, func(line []byte) bool {
			p.lines <- append([]byte(nil), line...)
			return true
		})
	}()
	go func() {
		child.End()
		// The rest of stdout is read, bounded in case an escaped process
		// holds it.
		_ = stdout.SetReadDeadline(time.Now().Add(time.Second))
		close(p.exited)
	}()
	return p, nil
}

// refused is a turn the grant refuses, in the protocol's words: a bad
// effort is the turn's params.reasoningEffort.
func refused(err error) error {
	var o *grant.OptionError
	if errors.As(err, &o) && o.Option == "Effort" {
		return host.Failed(protocol.CodeBadRequest, fmt.Sprintf("reasoningEffort %q: claude takes %s", o.Value, strings.Join(o.Takes, ", ")), false)
	}
	return host.Failed(protocol.CodeBadRequest, err.Error(), false)
}

// stop ends a CLI: its stdin closed so it can flush its session, then
// SIGTERM, then SIGKILL.
func (p *cli) stop(grace time.Duration) {
	p.child.Finish(p.stdin, grace)
	<-p.exited
}

func (p *cli) alive() bool { return p.child.Running() }

var errLostSession = host.Failed(protocol.CodeBackendFailed, "the chat's session could not be resumed", true)

// RunTurn runs one turn on the chat's CLI. When the CLI cannot resume the
// chat's session — it died before saving it — the turn runs again in a new
// session, with a warning.
func (b *Backend) RunTurn(ctx context.Context, t *host.Turn) error {
	c := b.chat(t.Params.ChatID)
	c.mu.Lock()
	defer c.mu.Unlock()
	err := b.turn(ctx, c, t)
	if err == errLostSession {
		b.mu.Lock()
		lost := c.session
		c.session = ""
		b.mu.Unlock()
		t.Log("warn", fmt.Sprintf("claude could not resume session %s (its process died before saving it); this turn starts a new session", lost))
		if c.cli != nil {
			c.cli.stop(2 * time.Second)
			c.cli = nil
		}
		err = b.turn(ctx, c, t)
	}
	return err
}

func (b *Backend) turn(ctx context.Context, c *chat, t *host.Turn) error {
	if c.cli != nil && !c.cli.alive() {
		c.cli = nil // it exited between turns: --resume below
	}
	level := c.level
	if t.Params.Level > 0 {
		level = t.Params.Level
	}
	if c.cli != nil && (c.asks != asksOf(t) || !b.sameGrant(c.cliLevel, level, c.asks) || c.cliEffort != t.Params.ReasoningEffort ||
		(t.Params.Model != "" && t.Params.Model != c.cliModel) || (t.Question != nil && !c.questions) || (t.AskAll && !c.prompts)) {
		// Asking, the level's grant and the effort are flags of the
		// process: this turn wants others, so the CLI starts again,
		// resuming the session. A level whose grant is the same (level 3
		// is level 2's today) keeps the process, and what it was
		// allowed for the session. A CLI that offers questions, or asks
		// on stdio, serves a turn that wants neither: nobody is there to
		// answer, the hook leaves each call to the CLI, and what the CLI
		// asks of a turn that does not ask is denied, as the CLI itself
		// would.
		c.cli.stop(2 * time.Second)
		c.cli = nil
	}
	if c.cli == nil {
		p, err := b.start(c, launchOf(t))
		if err != nil {
			return err
		}
		c.cli = p
	}
	p := c.cli
	if err := p.send(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": userContent(t.Params)}}); err != nil {
		c.cli = nil
		return host.Failed(protocol.CodeBackendFailed, "claude is not taking input: "+p.stderr.LastLine(), true)
	}
	tr := &translator{t: t, c: c, b: b, p: p}
	interrupted := t.Interrupted
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				// The CLI died mid-turn: this run fails, the host lives, and
				// the next turn starts it again with --resume.
				c.cli = nil
				<-p.exited
				return host.Failed(protocol.CodeBackendFailed, "claude died mid-turn: "+p.stderr.LastLine(), true)
			}
			if done, err := tr.line(line); done {
				return err
			}
		case <-interrupted:
			interrupted = nil
			_ = p.send(map[string]any{"type": "control_request", "request_id": fmt.Sprintf("interrupt-%d", time.Now().UnixNano()),
				"request": map[string]any{"subtype": "interrupt"}})
		case <-ctx.Done():
			// The host gave up waiting: kill the CLI; the next turn resumes.
			_ = p.child.Signal(syscall.SIGKILL)
			<-p.exited
			c.cli = nil
			return host.ErrInterrupted
		}
	}
}

// sameGrant: whether levels x and y give the CLI the same flags.
func (b *Backend) sameGrant(x, y int, asks bool) bool {
	if x == y {
		return true
	}
	flags := func(level int) string {
		g, err := grant.For(grant.Options{Level: level, Harness: grant.Claude, Program: b.cfg.Program, Stream: true, Ask: asks})
		if err != nil {
			return fmt.Sprint("level ", level, ": ", err)
		}
		return strings.Join(g.Argv, "\x00")
	}
	return flags(x) == flags(y)
}

// translator turns the CLI's lines into agent events.
type translator struct {
	t    *host.Turn
	c    *chat
	b    *Backend
	p    *cli
	last string
	// lostSession: the CLI could not resume the chat's session (it died
	// before saving it); the turn is run again in a new session.
	lostSession bool
	// dirs are the shell's directories the policy hook was told of, by
	// tool call id, for the can_use_tool that follows (Bash's cd carries
	// from one call to the next).
	dirs map[string]string
}

// line handles one line; done is set at the turn's result.
func (x *translator) line(line []byte) (done bool, err error) {
	if ndjson.Check(line) != ndjson.Valid {
		x.t.Log("warn", fmt.Sprintf("claude: skipped a line that is not JSON: %.80q", line))
		return false, nil
	}
	s := string(line)
	switch gjson.Get(s, "type").Str {
	case "system":
		if gjson.Get(s, "subtype").Str == "init" {
			x.b.mu.Lock()
			id := gjson.Get(s, "session_id").Str
			if x.c.fork && id != "" && id != x.c.session {
				x.c.fork = false // the fork has a session of its own now
			}
			x.c.session = id
			x.b.mu.Unlock()
			gjson.Get(s, "mcp_servers").ForEach(func(_, srv gjson.Result) bool {
				if srv.Get("status").Str == "failed" {
					x.t.Log("warn", fmt.Sprintf("MCP server %q failed to connect; the run goes on without it", srv.Get("name").Str))
				}
				return true
			})
		}
	case "assistant":
		for _, e := range agentstream.Claude(s) {
			if e.Type == protocol.EvText {
				x.last = e.Text
			}
			x.t.Emit(e)
		}
	case "stream_event", "user":
		for _, e := range agentstream.Claude(s) {
			x.t.Emit(e)
		}
	case "control_request":
		x.control(s)
	case "control_response":
		x.response(s)
	case "result":
		return true, x.result(s)
	}
	return false, nil
}

// initializeID is the request id of the initialize control request a CLI
// is sent when it starts.
const initializeID = "agent-host-initialize"

// response takes the CLI's answer to a control request: the answer to
// initialize is the slash commands it offers, as a commands event.
func (x *translator) response(s string) {
	r := gjson.Get(s, "response")
	if r.Get("request_id").Str != initializeID || r.Get("subtype").Str != "success" {
		return
	}
	ev := protocol.AgentEvent{Type: protocol.EvCommands, Commands: []protocol.Command{}}
	r.Get("response.commands").ForEach(func(_, c gjson.Result) bool {
		if name := c.Get("name").Str; name != "" {
			ev.Commands = append(ev.Commands, protocol.Command{Name: name, Description: c.Get("description").Str, Hint: c.Get("argumentHint").Str})
		}
		return true
	})
	x.t.Emit(ev)
}

// control answers a control request of the CLI. can_use_tool goes to the
// daemon (Turn.Ask), or, for AskUserQuestion, to the run's person
// (Turn.Question), each in a goroutine of its own so that the turn reads
// on while they decide; the CLI waits for the answer. A policy hook's
// callback is answered at once. Anything else is refused, so that the CLI
// never waits on us for ever.
func (x *translator) control(s string) {
	reqID := gjson.Get(s, "request_id").Str
	req := gjson.Get(s, "request")
	switch req.Get("subtype").Str {
	case "can_use_tool":
		if req.Get("tool_name").Str == grant.QuestionTool {
			go x.question(reqID, req)
		} else {
			x.canUse(reqID, req)
		}
	case "hook_callback":
		x.hook(reqID, req)
	default:
		_ = x.p.send(map[string]any{"type": "control_response", "response": map[string]any{
			"subtype": "error", "request_id": reqID, "error": "agent-host does not serve " + req.Get("subtype").Str}})
	}
}

// hook answers the policy hook's callback for a call, keeping the
// directory it says the shell is in for the can_use_tool that follows.
func (x *translator) hook(reqID string, req gjson.Result) {
	if id, cwd := req.Get("input.tool_use_id").Str, req.Get("input.cwd").Str; id != "" && cwd != "" {
		if x.dirs == nil {
			x.dirs = map[string]string{}
		}
		x.dirs[id] = cwd
	}
	_ = x.p.send(map[string]any{"type": "control_response", "response": map[string]any{
		"subtype": "success", "request_id": reqID, "response": hookAnswer(x.t.AskAll)}})
}

// canUse puts a tool call to Turn.Ask, in a goroutine of its own, and
// answers the CLI's request reqID with the decision.
func (x *translator) canUse(reqID string, req gjson.Result) {
	ask := x.t.Ask
	if ask == nil {
		// Only a CLI started to ask asks; refuse rather than hang.
		ask = func(host.Ask) host.Answer { return host.Answer{Decision: protocol.DecisionDeny} }
	}
	q := canUseTool(req)
	q.Granted = x.p.allowed.granted(q.Tool) || x.p.session.has(q.Tool, q.Input)
	if dir, ok := x.dirs[q.ToolCallID]; ok {
		q.Call.Dir = dir
		delete(x.dirs, q.ToolCallID)
	}
	if q.Granted {
		if why := x.p.outside(q.Call); why != nil {
			// The level writes in the working copy only: a write elsewhere
			// (or in its .git) is the daemon's to allow, and nobody's when
			// none asks.
			q.Granted = false
			q.Description = strings.TrimSpace(q.Description + " (" + why.Error() + ")")
		}
	}
	if q.Granted && !x.t.AskAll {
		// The level allows it, and no policy applies: nobody is asked (an
		// Edit in the working copy, which the CLI asks for at an ask
		// level, agentry confining it there).
		_ = x.p.send(map[string]any{"type": "control_response", "response": map[string]any{
			"subtype": "success", "request_id": reqID, "response": permissionResult(req, host.Answer{Decision: protocol.DecisionAllow, By: host.ByLevel})}})
		return
	}
	go func() {
		a := ask(q)
		if a.Decision == protocol.DecisionAllowSession {
			x.p.session.add(q.Tool, q.Input)
		}
		_ = x.p.send(map[string]any{"type": "control_response", "response": map[string]any{
			"subtype": "success", "request_id": reqID, "response": permissionResult(req, a)}})
	}()
}

// canUseTool is a can_use_tool request as the daemon is asked it.
func canUseTool(req gjson.Result) host.Ask {
	q := host.Ask{Tool: req.Get("tool_name").Str, Input: json.RawMessage(req.Get("input").Raw),
		Description: req.Get("description").Str, ToolCallID: req.Get("tool_use_id").Str,
		Choices: []string{protocol.DecisionAllow, protocol.DecisionDeny}}
	q.Call = callOf(q.Tool, req.Get("input"))
	if p := req.Get("blocked_path").Str; p != "" {
		q.Description = strings.TrimSpace(q.Description + " (writes " + p + ")")
	}
	if len(req.Get("permission_suggestions").Array()) > 0 {
		q.Choices = []string{protocol.DecisionAllow, protocol.DecisionAllowSession, protocol.DecisionDeny}
	}
	return q
}

// permissionResult is Claude Code's answer for a: allow runs the call (as
// the daemon rewrote it, if it did); allow_session also adds the CLI's own
// suggested rules for the rest of the session; deny tells the model why,
// and when the run is being interrupted, stops the turn.
func permissionResult(req gjson.Result, a host.Answer) map[string]any {
	if !a.Allowed() {
		msg := a.Message
		if msg == "" {
			msg = "The host denied this tool call."
		}
		res := map[string]any{"behavior": "deny", "message": msg}
		if a.By == protocol.ResolvedByInterrupt || a.By == protocol.ResolvedByShutdown {
			res["interrupt"] = true
		}
		return res
	}
	input := a.Input
	if len(input) == 0 {
		input = json.RawMessage(req.Get("input").Raw)
	}
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	res := map[string]any{"behavior": "allow", "updatedInput": input}
	if a.Decision == protocol.DecisionAllowSession {
		var rules []map[string]any
		for _, s := range req.Get("permission_suggestions").Array() {
			var m map[string]any
			if json.Unmarshal([]byte(s.Raw), &m) == nil {
				m["destination"] = "session"
				rules = append(rules, m)
			}
		}
		res["updatedPermissions"] = rules
	}
	return res
}

func (x *translator) result(s string) error {
	if gjson.Get(s, "is_error").Bool() && strings.Contains(gjson.Get(s, "errors").Raw, "No conversation found") {
		x.lostSession = true
		return errLostSession
	}
	u := agentstream.ClaudeUsage(s)
	u.CostUSD = turnCost(s, x.p)
	x.t.Emit(protocol.AgentEvent{Type: protocol.EvUsage, Usage: u})
	x.b.mu.Lock()
	if id := gjson.Get(s, "session_id").Str; id != "" {
		x.c.session = id
	}
	x.c.turns++
	if ctxTokens := u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens; ctxTokens > 0 {
		x.c.context = int(ctxTokens)
	}
	session := x.c.session
	x.b.mu.Unlock()
	if !gjson.Get(s, "is_error").Bool() {
		text := gjson.Get(s, "result").Str
		if text == "" {
			text = x.last
		}
		x.t.Emit(protocol.AgentEvent{Type: protocol.EvCompleted, Text: text, Usage: u, SessionID: session})
		return nil
	}
	reason := gjson.Get(s, "terminal_reason").Str
	if strings.HasPrefix(reason, "aborted") {
		return host.ErrInterrupted
	}
	msg := gjson.Get(s, "result").Str
	if msg == "" {
		msg = "claude: " + gjson.Get(s, "subtype").Str
	}
	status := gjson.Get(s, "api_error_status").Int()
	retryable := status == 429 || status >= 500
	return host.Failed(protocol.CodeBackendFailed, msg, retryable)
}

// WarmSession starts the chat's CLI ahead of its first turn.
func (b *Backend) WarmSession(ctx context.Context, chatID string) error {
	c := b.chat(chatID)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cli != nil && c.cli.alive() {
		return nil
	}
	p, err := b.start(c, launchOf(nil))
	if err != nil {
		return err
	}
	p.warm()
	c.cli = p
	return nil
}

// StartChat starts the chat's CLI ahead of its first turn, as a turn of
// params p (its level, workspace, model, effort; asking when
// p.Permissions is ask) will want it, so that the turn finds it ready. A
// chat whose CLI runs already is left as it is.
func (b *Backend) StartChat(ctx context.Context, p protocol.ChatRunParams) error {
	c := b.chat(p.ChatID)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cli != nil && c.cli.alive() {
		return nil
	}
	cli, err := b.start(c, launchFor(p))
	if err != nil {
		return err
	}
	cli.warm()
	c.cli = cli
	return nil
}

// ForkSession makes the chat a fork of Claude Code's session sessionID,
// working in workspace: its CLI starts with --resume sessionID
// --fork-session, so that it has the session's history in a session of
// its own, and the session forked from goes on unchanged.
func (b *Backend) ForkSession(ctx context.Context, chatID, sessionID, workspace string) error {
	if !sessionIDRE(sessionID) {
		return host.Failed(protocol.CodeBadRequest, "a claude session id is a UUID, not "+sessionID, false)
	}
	c := b.chat(chatID)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cli != nil {
		c.cli.stop(2 * time.Second)
		c.cli = nil
	}
	b.mu.Lock()
	c.session, c.fork = sessionID, true
	b.mu.Unlock()
	if workspace != "" {
		c.workspace = workspace
	}
	return nil
}

// SetDirectories gives the chat's CLI directories beyond its workspace
// (--add-dir), from its next start: a CLI running with others is ended
// between turns and started again, resuming the session.
func (b *Backend) SetDirectories(ctx context.Context, chatID string, dirs []string) error {
	c := b.chat(chatID)
	c.mu.Lock()
	defer c.mu.Unlock()
	if slices.Equal(c.dirs, dirs) {
		return nil
	}
	c.dirs = slices.Clone(dirs)
	if c.cli != nil {
		c.cli.stop(5 * time.Second)
		c.cli = nil
	}
	return nil
}

// StopIdle ends the chat's CLI between turns, keeping its session: the
// next turn starts it again with --resume, its history whole. A chat
// whose turn runs (or whose CLI is being started) is left alone: false.
func (b *Backend) StopIdle(ctx context.Context, chatID string) (bool, error) {
	b.mu.Lock()
	c := b.chats[chatID]
	b.mu.Unlock()
	if c == nil || !c.mu.TryLock() {
		return false, nil
	}
	defer c.mu.Unlock()
	if c.cli == nil {
		return false, nil
	}
	c.cli.stop(2 * time.Second)
	c.cli = nil
	return true, nil
}

// SessionInfo reports what the backend knows of the chat.
func (b *Backend) SessionInfo(ctx context.Context, chatID string) (*protocol.SessionInfo, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.chats[chatID]
	if c == nil {
		return nil, nil
	}
	return &protocol.SessionInfo{ChatID: chatID, SessionID: c.session, Turns: c.turns, ContextTokens: c.context, ContextWindow: b.window(c.model)}, nil
}

func (b *Backend) window(model string) int {
	for _, m := range b.cfg.Models {
		if m.ID == model && m.ContextWindow > 0 {
			return m.ContextWindow
		}
	}
	return 200000
}

// ResetSession ends the chat's process and forgets its session.
func (b *Backend) ResetSession(ctx context.Context, chatID string) (bool, error) {
	b.mu.Lock()
	c := b.chats[chatID]
	delete(b.chats, chatID)
	b.mu.Unlock()
	if c == nil {
		return false, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cli != nil {
		c.cli.stop(2 * time.Second)
		c.cli = nil
	}
	c.removePrivate()
	return true, nil
}

// SetMCPServers gives the chat a new MCP configuration: the CLI is ended
// between turns (never mid-turn: this waits for the turn) and started
// again with --resume and the new --mcp-config on the next turn.
func (b *Backend) SetMCPServers(ctx context.Context, chatID string, servers map[string]json.RawMessage) (*protocol.ToolRefresh, error) {
	c := b.chat(chatID)
	c.mu.Lock()
	defer c.mu.Unlock()
	r := host.ServersChanged(c.servers, servers)
	// The CLI only connects at its next turn; an HTTP server that cannot
	// be reached now is reported now, by name.
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		if err := probeMCP(ctx, servers[name]); err != nil {
			r.Errors[name] = err.Error()
		}
	}
	c.servers = servers
	if c.cli != nil {
		c.cli.stop(5 * time.Second)
		c.cli = nil
	}
	return r, nil
}

// RefreshTools restarts the chat's CLI with its current servers.
func (b *Backend) RefreshTools(ctx context.Context, chatID string) (*protocol.ToolRefresh, error) {
	c := b.chat(chatID)
	c.mu.Lock()
	servers := c.servers
	c.mu.Unlock()
	if servers == nil {
		servers = map[string]json.RawMessage{}
	}
	r, err := b.SetMCPServers(ctx, chatID, servers)
	if r != nil {
		r.Added, r.Removed = []string{}, []string{}
	}
	return r, err
}

// ListModels answers from the configured catalog.
func (b *Backend) ListModels(ctx context.Context, filter string) ([]protocol.ModelInfo, int, error) {
	var out []protocol.ModelInfo
	for _, m := range b.cfg.Models {
		if filter == "free" && !m.Free {
			continue
		}
		out = append(out, m)
	}
	return out, len(b.cfg.Models), nil
}

// Close ends every chat's CLI: stdin closed (it flushes its session), then
// SIGTERM, then SIGKILL.
func (b *Backend) Close() error {
	b.mu.Lock()
	chats := b.chats
	b.chats = map[string]*chat{}
	b.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range chats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.cli != nil {
				c.cli.stop(5 * time.Second)
				c.cli = nil
			}
			c.removePrivate()
		}()
	}
	wg.Wait()
	return nil
}

// turnCost is the cost of the turn a result line ends. total_cost_usd
// is the session's running total: within one CLI it grows turn by turn,
// and a CLI started with --resume carries on from the session's earlier
// total, so it over-reports every turn but a session's first. The
// result's model_usage_since_last_result is the turn's own (its costUSD
// per model); where a CLI does not say it, the turn's cost is the total
// less what this CLI (p, nil for none) reported before.
func turnCost(s string, p *cli) float64 {
	total := gjson.Get(s, "total_cost_usd").Float()
	var prev float64
	if p != nil {
		prev, p.cost = p.cost, total
	}
	since := gjson.Get(s, "model_usage_since_last_result")
	if !since.IsObject() {
		return max(total-prev, 0)
	}
	var own float64
	since.ForEach(func(_, m gjson.Result) bool {
		own += m.Get("costUSD").Float()
		return true
	})
	return own
}

// Efforts are the efforts a turn takes (params.reasoningEffort): the
// CLI's --effort, which it is started again with when a turn asks for
// another.
func (b *Backend) Efforts() []string { return grant.Efforts[grant.Claude] }
