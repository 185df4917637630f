// Package acp is agent-host's Agent Client Protocol face: ACP v1 (JSON-RPC
// 2.0, one message a line) served as an agent on a pair of streams, with
// any agent-host backend behind it.
//
// It is a face over the same backends as the v1 protocol, through the same
// rules: every turn runs in a lib/host Host (in process, through
// lib/hostclient), so a turn's updates come in order and end with exactly
// one prompt response, a cancel is the host's interrupt ladder, a
// permission request is the host's, with its deadline, resolved once, and
// ending the face ends every backend process. An ACP session is a chat of
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
	// StateDir is where sessions are kept for session/load and
	// session/list (one small file each: the CLI's session id, cwd, title);
	// "" keeps none.
	StateDir string
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
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go a.read(in, lines, readErr)
	for {
		select {
		case line := <-lines:
			a.handle(line)
			continue
		case err = <-readErr:
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
func (a *agent) read(in io.Reader, lines chan<- []byte, done chan<- error) {
	r := ndjson.NewReader(in, a.opts.Host.MaxLine)
	for {
		line, err := r.Next()
		var tl *ndjson.TooLongError
		switch {
		case errors.As(err, &tl):
			a.opts.Warn(fmt.Sprintf("line %d is %d bytes, over the %d-byte cap; skipped", tl.Line, tl.Size, tl.Max))
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
		lines <- append([]byte(nil), line...)
	}
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
	models   []protocol.ModelInfo
	modelsOK bool
	work     sync.WaitGroup // requests being served
}

// caps is what the backend can do, asked of the backend itself.
type caps struct {
	name  string
	asks  bool // it can put tool calls to the client
	tools bool // it takes MCP servers
	loads bool // it can take up a session of its CLI (session/load)
	// efforts are the reasoning efforts it honours, if any.
	efforts []string
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
	if e, ok := b.(host.Efforter); ok {
		c.efforts = e.Efforts()
	}
	ctx, stop := context.WithCancel(context.Background())
	a := &agent{opts: opts, w: newWire(ndjson.NewWriter(out)), caps: c, ctx: ctx, stop: stop, backend: b,
		sessions: map[string]*session{}}
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
	if _, err := a.hc.Hello(ctx, "acp", opts.Config); err != nil {
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
		if m.Method == nil && m.hasID() {
			a.opts.Warn(fmt.Sprintf("dropped a response to no request: %.80s", line))
			return
		}
		var id json.RawMessage
		if m.hasID() {
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
	// Version negotiation: a client asking for another version is told
	// the one this agent speaks, and decides.
	var resume *empty
	if a.caps.loads {
		resume = &empty{}
	}
	res := initializeResult{
		ProtocolVersion: ProtocolVersion,
		AgentCapabilities: agentCapabilities{
			LoadSession:         a.caps.loads,
			PromptCapabilities:  promptCapabilities{EmbeddedContext: true},
			MCPCapabilities:     mcpCapabilities{HTTP: a.caps.tools, SSE: a.caps.tools},
			SessionCapabilities: sessionCapabilities{List: &empty{}, Resume: resume, Close: &empty{}},
		},
		AuthMethods: []authMethod{},
		AgentInfo:   &implementation{Name: "agent-host", Title: "agent-host (" + a.caps.name + ")", Version: a.opts.Host.Version},
	}
	return res, nil
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
