// Package acp is agent-host's Agent Client Protocol face: ACP v1 (JSON-RPC
// 2.0, one message a line) served as an agent on a pair of streams, with
// any agent-host backend behind it.
//
// It is a face over the same backends as the v1 protocol, through the same
// rules: every turn runs in a lib/host Host (in process, through
// lib/hostclient), so a turn's updates come in order and end with exactly
// one prompt response, a cancel is the host's interrupt ladder, a
// permission request is the host's, with its deadline, resolved once, as
// is an agent's question (an elicitation/create form, or a permission
// request a question, question.go), and ending the face ends every
// backend process. An ACP session is a chat of
// the host; its mode is the chat's level and whether it asks, applied from
// the next turn as exactly that level's grant.
//
// What is served, what is not, and why, is in agent-host-acp(7).
package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/hostclient"
	"github.com/agentry/agentry/lib/ndjson"
	"github.com/agentry/agentry/lib/protocol"
)

// Options configure the face.
type Options struct {
	// Host is the host the backends run in: Host.Backend names the
	// backend, Host.Factory makes it, Host.DrainTimeout bounds how long
	// the end of input waits for turns in flight, Host.MaxLine caps a line.
	Host host.Options
	// Warn receives what the face has to say outside the protocol (a
	// skipped line, a backend's notice of level warn or above).
	Warn func(msg string)
	// Config is the backend's configuration, as hello.config gives it in
	// protocol v1.
	Config json.RawMessage
	// PermissionTimeout is how long a permission request waits for the
	// client's answer before it is a rejection; 0 is the host's default.
	PermissionTimeout time.Duration
	// StateDir is where sessions are kept for session/load and
	// session/list (one small file each: the CLI's session id, cwd, title);
	// "" keeps none.
	StateDir string
	// IdleStop is how long a session's backend process may sit idle
	// between turns before it is stopped, where the backend can stop it
	// and take the session up again on the next prompt (claude: the CLI,
	// resumed with --resume); 0 keeps it until session/close or the end.
	IdleStop time.Duration
}

// starter is a backend that can start a session's process ahead of its
// first turn, as that turn will want it (claude).
type starter interface {
	StartChat(ctx context.Context, p protocol.ChatRunParams) error
}

// forker is a backend that can start a session as a fork of a session of
// its CLI (claude: --resume ID --fork-session).
type forker interface {
	ForkSession(ctx context.Context, chatID, sessionID, workspace string) error
}

// dirTaker is a backend whose sessions can reach directories beyond
// their cwd (claude: --add-dir).
type dirTaker interface {
	SetDirectories(ctx context.Context, chatID string, dirs []string) error
}

// idleStopper is a backend that can stop a session's process between
// turns, keeping the session for the next turn to take up (claude); false
// when there was none to stop, or a turn holds it.
type idleStopper interface {
	StopIdle(ctx context.Context, chatID string) (bool, error)
}

// ErrBackend wraps a backend that could not be made.
var ErrBackend = errors.New("backend unavailable")

// Serve speaks ACP over in and out until the end of in (turns in flight may
// end within the drain timeout, then are cancelled), until ctx ends (a
// signal: turns are cancelled at once) or until out cannot be written (the
// client is gone). Every backend process has ended when it returns.
func Serve(ctx context.Context, opts Options, in io.Reader, out io.Writer) error {
	a, err := newAgent(opts, out)
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- a.serve(ctx, in) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// A signal: the loop cancels every turn and returns once they are
	// answered, within the interrupt grace — unless a write to the client
	// blocks, because it reads nothing; then the answers are given up, and
	// every backend process is ended all the same.
	t := time.NewTimer(a.stuckAfter())
	defer t.Stop()
	select {
	case err := <-served:
		return err
	case <-t.C:
		a.opts.Warn("the client reads nothing of what is written to it; ending without the answers of the turns cancelled")
		a.w.fail(errors.New("the client reads nothing"))
		a.cancelAll()
		a.shut()
		return nil
	}
}

// serve is Serve's loop: it reads and serves lines until the end of in,
// ctx or the client gone, and ends the turns.
func (a *agent) serve(ctx context.Context, in io.Reader) error {
	opts := a.opts
	var err error
	lines := make(chan input)
	readErr := make(chan error, 1)
	go a.read(in, lines, readErr)
	for {
		select {
		case in := <-lines:
			a.handleInput(in)
			continue
		case err = <-readErr:
			a.w.inputEnded()
			a.drain(ctx, opts.Host.DrainTimeout)
		case <-ctx.Done():
			a.abort()
		case <-a.w.gone:
			a.abort()
		}
		break
	}
	return err
}

// read hands each line of in to the serving loop; it ends with the error
// that ended reading (nil at the end of input).
func (a *agent) read(in io.Reader, lines chan<- input, done chan<- error) {
	max := a.opts.Host.MaxLine
	if max <= 0 {
		max = ndjson.DefaultMaxLine
	}
	hs := newHeads(in, max)
	r := ndjson.NewReader(hs, max)
	for {
		line, err := r.Next()
		var tl *ndjson.TooLongError
		switch {
		case errors.As(err, &tl):
			a.opts.Warn(fmt.Sprintf("line %d is %d bytes, over the %d-byte cap; skipped", tl.Line, tl.Size, tl.Max))
			// A request is answered all the same, when its id comes
			// before the cut.
			if id, method, ok := idOf(hs.take(tl.Line)); ok && method != "" && !a.pass(lines, input{id: id, tooLong: tl}) {
				return
			}
			continue
		case err == io.EOF:
			done <- nil
			return
		case err != nil:
			done <- err
			return
		}
		if len(line) == 0 {
			continue
		}
		if !a.pass(lines, input{line: append([]byte(nil), line...)}) {
			return
		}
	}
}

// pass hands in to the serving loop; false once the face has stopped.
func (a *agent) pass(lines chan<- input, in input) bool {
	select {
	case lines <- in:
		return true
	case <-a.ctx.Done():
		return false
	}
}

// input is a line read, or a request over the line cap to be answered.
type input struct {
	line    []byte
	id      json.RawMessage
	tooLong *ndjson.TooLongError
}

// handleInput serves a line, or answers a request too long to be read.
func (a *agent) handleInput(in input) {
	if in.tooLong == nil {
		a.handle(in.line)
		return
	}
	a.w.reply(in.id, nil, &rpcError{Code: codeInvalidRequest, Message: fmt.Sprintf(
		"invalid request: the line is %d bytes, over agent-host's %d-byte cap (--max-line); not read", in.tooLong.Size, in.tooLong.Max)})
}

// agent is one connection's state.
type agent struct {
	opts Options
	w    *wire
	hc   hostclient.Client
	caps caps
	// backend is the host's backend itself, for what protocol v1 has no
	// request for (session/load).
	backend host.Backend
	store   store
	ctx     context.Context // ended when the face stops
	stop    context.CancelFunc
	token   int64

	mu       sync.Mutex
	sessions map[string]*session
	// prompts are the session/prompt requests in flight, by id, for
	// $/cancel_request.
	prompts  map[string]promptRef
	models   []protocol.ModelInfo
	modelsOK bool
	// peer is what the agent behind a peer backend can do.
	peer peerState
	// forms: the client said at initialize that it takes
	// elicitation/create forms, which the agent's questions are put as.
	forms bool
	work  sync.WaitGroup // requests being served
}

// elicits reports whether the client takes the agent's questions as
// forms.
func (a *agent) elicits() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.forms
}

// caps is what the backend can do, asked of the backend itself.
type caps struct {
	name  string
	asks  bool   // it can put tool calls to the client
	tools bool   // it takes MCP servers
	loads bool   // it can take up a session of its CLI (session/load)
	dirs  *empty // it takes additionalDirectories
	fork  *empty // it can fork a session (session/fork)
	// efforts are the reasoning efforts it honours, if any.
	efforts []string
	// images are the image types it takes in a prompt, if any.
	images []string
	// said is a prompt as its user wrote it, less what is for the
	// backend (host.Directed), for the session's title.
	said func(string) string
}

func newAgent(opts Options, out io.Writer) (*agent, error) {
	if opts.Warn == nil {
		opts.Warn = func(string) {}
	}
	b, err := opts.Host.Factory(opts.Host.Backend, opts.Config)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBackend, err)
	}
	c := caps{name: b.Name()}
	if pa, ok := b.(host.PermissionAsker); ok {
		c.asks = pa.AsksPermissions()
	}
	_, c.tools = b.(host.ToolSetter)
	_, c.loads = b.(host.SessionLoader)
	if _, ok := b.(dirTaker); ok {
		c.dirs = &empty{}
	}
	if _, ok := b.(forker); ok && c.loads {
		c.fork = &empty{}
	}
	if e, ok := b.(host.Efforter); ok {
		c.efforts = e.Efforts()
	}
	c.images = host.ImageTypes(b)
	c.said = func(p string) string { return p }
	if d, ok := b.(host.Directed); ok {
		c.said = d.Said
	}
	ctx, stop := context.WithCancel(context.Background())
	a := &agent{opts: opts, w: newWire(ndjson.NewWriter(out)), caps: c, ctx: ctx, stop: stop, backend: b,
		sessions: map[string]*session{}, prompts: map[string]promptRef{}}
	if opts.StateDir != "" {
		a.store = store{dir: filepath.Join(opts.StateDir, c.name)}
	}
	// The host runs this very backend, so that the face can ask it what
	// protocol v1 cannot.
	hostOpts := opts.Host
	var once sync.Once
	hostOpts.Factory = func(name string, config json.RawMessage) (host.Backend, error) {
		mine := false
		once.Do(func() { mine = name == opts.Host.Backend && bytes.Equal(config, opts.Config) })
		if mine {
			return b, nil
		}
		return opts.Host.Factory(name, config)
	}
	a.hc = hostclient.InProcess(hostOpts, a.notice)
	// The backend makes ready while the host's hello asks it its version
	// (codex's is a process of the CLI's, which the shared app-server's
	// start would otherwise wait for): an editor initializes at once.
	a.prestart()
	if _, err := a.hc.Hello(ctx, "acp", opts.Config); err != nil {
		if c, ok := b.(host.Closer); ok {
			_ = c.Close()
		}
		return nil, fmt.Errorf("%w: %v", ErrBackend, err)
	}
	return a, nil
}

// notice passes on the host's warnings; its info and metrics are for a
// daemon, not an editor.
func (a *agent) notice(m protocol.Msg) {
	if l, ok := m.(*protocol.Log); ok && (l.Level == "warn" || l.Level == "error") {
		a.opts.Warn(l.Component + ": " + l.Msg)
	}
}

// handle serves one line: requests other than a prompt's start are served
// on goroutines of their own, so a slow one holds up nothing; what must
// keep input order (a prompt's admission, a cancel) is done here.
func (a *agent) handle(line []byte) {
	m, kind, err := classify(line)
	switch {
	case err != nil:
		a.w.reply(nil, nil, &rpcError{Code: codeParseError, Message: "parse error: the line is not JSON"})
		return
	case kind == lineResponse:
		a.w.response(m)
		return
	case kind == lineInvalid:
		if m.Method == nil && (m.ID != nil || m.Result != nil || m.Error != nil) {
			// Shaped as a response: never answered, lest two peers
			// answer each other's answers without end.
			a.opts.Warn(fmt.Sprintf("dropped a response to no request: %.80s", line))
			return
		}
		var id json.RawMessage // null, unless the id is one JSON-RPC allows
		if m.hasID() && validID(m.ID) {
			id = m.ID
		}
		a.w.reply(id, nil, &rpcError{Code: codeInvalidRequest, Message: "invalid request: not a JSON-RPC 2.0 request, notification or response"})
		return
	case kind == lineNotification:
		a.notification(*m.Method, m.Params)
		return
	}
	id, method, params := m.ID, *m.Method, m.Params
	switch method {
	case "session/prompt":
		a.prompt(id, params) // admitted now, in input order
		return
	case "initialize":
		result, err := a.initialize(params) // answered before anything read after it
		a.w.reply(id, result, err)
		return
	case "session/set_mode", "session/set_config_option":
		// Taken in input order, so that a prompt read after the change
		// runs with it and one read before runs without it (quick: the
		// session's state is known, its model catalog asked already).
		result, err := a.methods()[method](params)
		a.w.reply(id, result, err)
		return
	}
	serve, ok := a.methods()[method]
	if !ok {
		a.w.reply(id, nil, &rpcError{Code: codeMethodNotFound, Message: "method not found: " + method,
			Data: map[string]string{"method": method}})
		return
	}
	a.work.Add(1)
	go func() {
		defer a.work.Done()
		result, err := serve(params)
		a.w.reply(id, result, err)
	}()
}

func (a *agent) methods() map[string]func(json.RawMessage) (any, error) {
	return map[string]func(json.RawMessage) (any, error){
		"initialize":                a.initialize,
		"authenticate":              a.authenticate,
		"session/new":               a.newSession,
		"session/set_mode":          a.setMode,
		"session/set_config_option": a.setConfigOption,
		"session/list":              a.listSessions,
		"session/close":             a.closeSession,
		"session/delete":            a.deleteSession,
		"session/fork":              a.forkSession,
		"session/load":              a.loadSession,
		"session/resume":            a.resumeSession,
	}
}

func (a *agent) notification(method string, params json.RawMessage) {
	switch method {
	case "session/cancel":
		var p sessionRef
		if json.Unmarshal(params, &p) != nil {
			a.opts.Warn("dropped a session/cancel without a sessionId")
			return
		}
		if s := a.session(p.SessionID); s != nil {
			a.cancel(s)
		}
	case "$/cancel_request":
		// A prompt in flight is cancelled as by session/cancel, and
		// answered cancelled; any other request is answered anyway.
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(params, &p) != nil || len(p.RequestID) == 0 {
			a.opts.Warn("dropped a $/cancel_request without a requestId")
			return
		}
		a.mu.Lock()
		ref, ok := a.prompts[string(p.RequestID)]
		a.mu.Unlock()
		if ok {
			a.cancelOne(ref.s, ref.seq)
		}
	default:
		// Notifications get no answer, not even an error.
		a.opts.Warn("ignored the notification " + method)
	}
}

// decode reads params into v, or is the invalid params error.
func decode(params json.RawMessage, v any) error {
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return errorf(codeInvalidParams, "invalid params: %v", err)
	}
	return nil
}

func (a *agent) initialize(params json.RawMessage) (any, error) {
	var p initializeParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion == nil {
		return nil, errorf(codeInvalidParams, "invalid params: protocolVersion is required")
	}
	a.mu.Lock()
	a.forms = p.ClientCapabilities.Elicitation != nil && p.ClientCapabilities.Elicitation.Form != nil
	a.mu.Unlock()
	// Version negotiation: a client asking for another version is told
	// the one this agent speaks, and decides.
	var resume *empty
	if a.caps.loads {
		resume = &empty{}
	}
	a.prestart()
	pc, err := a.peerCaps()
	if err != nil {
		return nil, err
	}
	res := initializeResult{
		ProtocolVersion: ProtocolVersion,
		AgentCapabilities: agentCapabilities{
			LoadSession:        a.caps.loads,
			PromptCapabilities: promptCapabilities{EmbeddedContext: true, Image: len(a.caps.images) > 0},
			MCPCapabilities:    mcpCapabilities{HTTP: a.caps.tools, SSE: a.caps.tools},
			SessionCapabilities: sessionCapabilities{List: &empty{}, Delete: &empty{}, AdditionalDirectories: a.caps.dirs, Resume: resume, Close: &empty{},
				Fork: a.caps.fork},
		},
		AuthMethods: []authMethod{},
		AgentInfo:   &implementation{Name: "agent-host", Title: "agent-host (" + a.caps.name + ")", Version: a.opts.Host.Version},
	}
	if pc != nil {
		// What the agent behind says it can do, agent-host can.
		ac := &res.AgentCapabilities
		ac.LoadSession = pc.LoadSession
		ac.SessionCapabilities.List, ac.SessionCapabilities.Resume = pc.SessionCapabilities.List, pc.SessionCapabilities.Resume
		ac.PromptCapabilities = promptCapabilities{Image: pc.PromptCapabilities.Image && ac.PromptCapabilities.Image,
			EmbeddedContext: pc.PromptCapabilities.EmbeddedContext}
		// Only the MCP transports the agent takes: an editor told http
		// would hand over servers the agent never gets.
		ac.MCPCapabilities = mcpCapabilities{HTTP: pc.MCPCapabilities.HTTP && ac.MCPCapabilities.HTTP,
			SSE: pc.MCPCapabilities.SSE && ac.MCPCapabilities.SSE}
	}
	return res, nil
}

// prestarter is a backend that can make ready for a first prompt ahead
// of it, in the background (codex starts its shared app-server).
type prestarter interface{ Prestart() }

// prestart has the backend make ready, at the face's start, initialize
// and session/new: an editor opens a session seconds before its first
// prompt.
func (a *agent) prestart() {
	if p, ok := a.backend.(prestarter); ok {
		p.Prestart()
	}
}

// authenticate succeeds and does nothing: agent-host has no login of its
// own, and the CLIs behind it use theirs (claude's and codex's login, or
// their API key variables), set up outside the editor. Some clients call it
// whatever authMethods says.
func (a *agent) authenticate(params json.RawMessage) (any, error) {
	return empty{}, nil
}

// call is a host call bounded by the face's life.
func (a *agent) callCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(a.ctx, 5*time.Minute)
}

// hostError is a host error in ACP's words.
func hostError(err error) error {
	var re *hostclient.RemoteError
	if errors.As(err, &re) {
		switch re.Code {
		case protocol.CodeBadRequest, protocol.CodeUnsupported:
			return errorf(codeInvalidParams, "%s", re.Message)
		}
		return errorf(codeInternal, "%s", re.Message)
	}
	return errorf(codeInternal, "%v", err)
}
