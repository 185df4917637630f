package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentry/agentry/lib/policy"
	"github.com/agentry/agentry/lib/protocol"
)

// Options configure a Host.
type Options struct {
	// Backend is the backend used unless hello.config names another.
	Backend string
	Factory Factory
	// Version is the host's version, reported in ready.
	Version string
	// MaxLine is the input line cap, reported in ready.limits.
	MaxLine int
	// MaxConcurrentRuns bounds runs in flight (default 64).
	MaxConcurrentRuns int
	// MaxPendingPermissions bounds the permission requests a run may
	// have pending at once; its agent asking past it ends the run
	// (default DefaultMaxPendingPermissions).
	MaxPendingPermissions int
	// DrainTimeout bounds how long shutdown waits for in-flight runs
	// before interrupting them (default 30s).
	DrainTimeout time.Duration
	// InterruptGrace is how long an interrupted run may take to stop
	// before the host ends it itself (default 5s).
	InterruptGrace time.Duration
	// LogLevel is the lowest level of log notice sent: debug, info, warn
	// or error (default info).
	LogLevel string
	// Policy is the host's own policy (agent-host --policy): it applies to
	// every run, beside a run's params.policy. Nil: none.
	Policy *policy.Policy
	// Stopper, when set, is given the host New makes, so that a program
	// can end its runs at once (a second signal) before it kills what
	// they run.
	Stopper *Stopper
}

// Stopper ends a host's runs at once from outside it (see Options).
type Stopper struct {
	mu sync.Mutex
	h  *Host
}

// StopRuns tells the host that the program is about to kill what its
// runs run: a run that then fails is reported interrupted, not a
// failure of its backend. It neither waits nor stops anything itself.
// Nothing when no host is served yet.
func (s *Stopper) StopRuns() {
	s.mu.Lock()
	h := s.h
	s.mu.Unlock()
	if h != nil {
		h.killed.Store(true)
	}
}

func (s *Stopper) set(h *Host) {
	s.mu.Lock()
	s.h = h
	s.mu.Unlock()
}

// Host applies the protocol's rules between a stream of requests and a
// Backend. Make one with New; it is safe for concurrent use.
type Host struct {
	opts     Options
	out      func(protocol.Msg)
	instance string
	logLevel int

	ctx    context.Context // cancelled when the host has stopped
	cancel context.CancelFunc

	mu        sync.Mutex
	backend   Backend
	ready     bool
	closing   bool
	byeSent   bool
	inflight  map[string]bool // request ids awaiting their reply
	runs      map[string]*run // by run id
	busy      map[string]*run // by chat id
	runsDone  sync.WaitGroup
	requests  sync.WaitGroup // requests other than runs being served
	asks      int64          // permission requests asked, for their ids
	questions int64          // question requests asked, for their ids
	byeID     string         // the shutdown that bye answers
	lateByes  []string       // shutdowns that came while draining
	bye       chan struct{}
	// inputEnded: the daemon's input has ended, and no answer can come.
	inputEnded atomic.Bool
	// answering counts the answers being served, which InputEnded waits
	// for: they never wait on anything themselves.
	answering sync.WaitGroup
	// killed: the program is killing what the runs run (Stopper).
	killed atomic.Bool
}

// New makes a host that writes every outgoing message through out. out is
// called from many goroutines, and must write each message whole.
func New(opts Options, out func(protocol.Msg)) *Host {
	if opts.MaxConcurrentRuns <= 0 {
		opts.MaxConcurrentRuns = 64
	}
	if opts.MaxPendingPermissions <= 0 {
		opts.MaxPendingPermissions = DefaultMaxPendingPermissions
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = 30 * time.Second
	}
	if opts.InterruptGrace <= 0 {
		opts.InterruptGrace = 5 * time.Second
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	ctx, cancel := context.WithCancel(context.Background())
	h := &Host{
		opts: opts, out: out, instance: hex.EncodeToString(id[:]), logLevel: levelOf(opts.LogLevel),
		ctx: ctx, cancel: cancel,
		inflight: map[string]bool{}, runs: map[string]*run{}, busy: map[string]*run{},
		bye: make(chan struct{}),
	}
	if opts.Stopper != nil {
		opts.Stopper.set(h)
	}
	return h
}

// Done is closed once the host has said bye.
func (h *Host) Done() <-chan struct{} { return h.bye }

func levelOf(s string) int {
	switch s {
	case "debug":
		return 0
	case "warn":
		return 2
	case "error":
		return 3
	}
	return 1
}

// Log sends a log notice when level is at or above the host's.
func (h *Host) Log(level, component, msg string) {
	if levelOf(level) < h.logLevel {
		return
	}
	h.send(&protocol.Log{Level: level, Component: component, Msg: msg})
}

// send writes a message unless the host has already said bye.
func (h *Host) send(m protocol.Msg) {
	h.mu.Lock()
	done := h.byeSent
	h.mu.Unlock()
	if !done {
		h.out(m)
	}
}

// reply answers request id with m, exactly once.
func (h *Host) reply(id string, m protocol.Msg) {
	h.send(m)
	h.mu.Lock()
	delete(h.inflight, id)
	h.mu.Unlock()
}

func errReply(id, code, msg string, retryable bool) *protocol.Error {
	return &protocol.Error{ID: id, Error: protocol.ErrorInfo{Code: code, Message: msg, Retryable: retryable}}
}

// Deliver takes one message from the daemon. It returns at once; the
// reply comes through out.
func (h *Host) Deliver(m protocol.Msg) {
	switch m := m.(type) {
	case *protocol.Unknown:
		h.deliverUnknown(m)
		return
	case *protocol.BadMessage:
		if m.ID == "" {
			h.Log("warn", "host", fmt.Sprintf("dropped a %s message with no id: %s", m.Type, m.Err))
			return
		}
		h.send(errReply(m.ID, protocol.CodeBadRequest, fmt.Sprintf("bad %s: %s", m.Type, m.Err), false))
		return
	}
	id := protocol.RequestID(m)
	kind, _ := protocol.KindOf(m.MsgType())
	if kind != protocol.Request {
		h.Log("warn", "host", fmt.Sprintf("dropped a %q message: it is a %s, and a host takes only requests", m.MsgType(), kind))
		return
	}
	h.mu.Lock()
	switch {
	case h.byeSent:
		h.mu.Unlock()
		return
	case h.inflight[id]:
		h.mu.Unlock()
		h.send(errReply(id, protocol.CodeDuplicateID, "a request with id "+id+" is still in flight", false))
		return
	}
	h.inflight[id] = true
	ready := h.ready
	h.mu.Unlock()

	switch m := m.(type) {
	case *protocol.Hello:
		h.hello(m) // in order: nothing else is served until it is done
	case *protocol.Ping:
		h.reply(id, &protocol.OK{ID: id})
	case *protocol.Shutdown:
		// Closing now, in input order: no run read after this line starts.
		if h.beginDrain(id) {
			timeout := h.opts.DrainTimeout
			if m.DrainMs != nil {
				timeout = time.Duration(max(*m.DrainMs, 0)) * time.Millisecond
			}
			go h.drain(timeout)
		}
	default:
		if !ready {
			h.reply(id, errReply(id, protocol.CodeNotReady, "say hello first", false))
			return
		}
		// Runs are admitted here, in input order, so that a drain that
		// starts after this line was read waits for them.
		switch m := m.(type) {
		case *protocol.RunTurn:
			h.mu.Lock()
			b := h.backend
			h.mu.Unlock()
			if refuse := checkPermissions(m.ID, m.Params, b); refuse != nil {
				h.reply(m.ID, refuse)
				return
			}
			if refuse := checkQuestions(m.ID, m.Params); refuse != nil {
				h.reply(m.ID, refuse)
				return
			}
			policies, refuse := h.policies(m.ID, m.Params)
			if refuse == nil {
				refuse = checkPolicy(m.ID, len(policies) > 0, b)
			}
			if refuse != nil {
				h.reply(m.ID, refuse)
				return
			}
			if refuse := checkAttachments(m.ID, m.Params, b); refuse != nil {
				h.reply(m.ID, refuse)
				return
			}
			h.startRun(m.ID, m.RunID, m.Params.ChatID, &Turn{RunID: m.RunID, Params: m.Params}, policies)
			return
		case *protocol.OneShot:
			p := m.Params
			t := &Turn{RunID: m.RunID, OneShot: &p, Params: protocol.ChatRunParams{
				Prompt: p.Prompt, SystemPrompt: p.SystemPrompt, Workspace: p.Workspace, Model: p.Model, ReasoningEffort: p.ReasoningEffort}}
			policies, _ := h.policies(m.ID, t.Params)
			h.mu.Lock()
			b := h.backend
			h.mu.Unlock()
			if refuse := checkPolicy(m.ID, len(policies) > 0, b); refuse != nil {
				h.reply(m.ID, refuse)
				return
			}
			h.startRun(m.ID, m.RunID, "", t, policies)
			return
		case *protocol.AnswerPermission, *protocol.AnswerQuestion:
			// Counted here, in input order, so that an answer read before
			// the input ended is taken before the end resolves what is
			// pending (InputEnded waits for it). Served on a goroutine as
			// the rest: an in-process client's reply comes back through
			// the same call.
			h.answering.Add(1)
			h.requests.Add(1)
			go func() {
				defer h.requests.Done()
				defer h.answering.Done()
				h.serve(m)
			}()
			return
		}
		h.requests.Add(1)
		go func() {
			defer h.requests.Done()
			h.serve(m)
		}()
	}
}

func (h *Host) deliverUnknown(m *protocol.Unknown) {
	switch {
	case m.Reason == protocol.ReasonTooLong:
		h.Log("warn", "host", "skipped a line over the line cap")
	case m.ID != "":
		h.send(errReply(m.ID, protocol.CodeUnknownType, fmt.Sprintf("unknown message type %q", m.Type), false))
	default:
		h.Log("warn", "host", fmt.Sprintf("dropped a line (%s): %.80q", m.Reason, m.Raw))
	}
}

// SkippedLine reports a line over the cap that the reader skipped.
func (h *Host) SkippedLine(line, size int64) {
	h.Log("warn", "host", fmt.Sprintf("line %d is %d bytes, over the %d-byte cap; skipped", line, size, h.opts.MaxLine))
}

func (h *Host) hello(m *protocol.Hello) {
	if m.Protocol != protocol.Version {
		h.reply(m.ID, errReply(m.ID, protocol.CodeProtocolMismatch,
			fmt.Sprintf("this host speaks protocol %d, not %d", protocol.Version, m.Protocol), false))
		return
	}
	h.mu.Lock()
	already := h.ready
	h.mu.Unlock()
	if already {
		h.reply(m.ID, errReply(m.ID, protocol.CodeBadRequest, "hello was already said", false))
		return
	}
	name := h.opts.Backend
	if n := backendName(m.Config); n != "" {
		name = n
	}
	b, err := h.opts.Factory(name, m.Config)
	if err != nil {
		h.reply(m.ID, errReply(m.ID, protocol.CodeBackendUnavailable, err.Error(), false))
		return
	}
	h.mu.Lock()
	h.backend, h.ready = b, true
	h.mu.Unlock()
	h.Log("info", "host", fmt.Sprintf("ready: protocol %d, backend %s %s, daemon %q", protocol.Version, b.Name(), b.Version(), m.Daemon))
	h.reply(m.ID, &protocol.Ready{
		ID: m.ID, Protocol: protocol.Version, Host: "agent-host " + h.opts.Version,
		Backend: b.Name(), SDK: b.Version(), Instance: h.instance,
		Limits: protocol.Limits{MaxLineBytes: h.opts.MaxLine, MaxConcurrentRuns: h.opts.MaxConcurrentRuns},
	})
}

// serve answers one request other than hello, ping and shutdown.
func (h *Host) serve(m protocol.Msg) {
	id := protocol.RequestID(m)
	defer func() {
		if r := recover(); r != nil {
			h.Log("error", "host", fmt.Sprintf("backend panicked serving %s: %v\n%s", m.MsgType(), r, debug.Stack()))
			h.reply(id, errReply(id, protocol.CodeBackendFailed, fmt.Sprintf("backend failed: %v", r), false))
		}
	}()
	h.mu.Lock()
	b := h.backend
	h.mu.Unlock()
	ctx := h.ctx
	switch m := m.(type) {
	case *protocol.Interrupt:
		h.reply(id, &protocol.OK{ID: id, Interrupted: ptr(h.interrupt(m.ChatID, m.RunID))})
	case *protocol.AnswerPermission:
		h.answerPermission(m)
	case *protocol.AnswerQuestion:
		h.answerQuestion(m)
	case *protocol.WarmSession:
		sk, ok := b.(SessionKeeper)
		if !ok {
			h.reply(id, &protocol.OK{ID: id}) // nothing to warm
			return
		}
		h.answer(id, sk.WarmSession(ctx, m.ChatID), &protocol.OK{ID: id})
	case *protocol.SessionInfoReq:
		if sk, ok := b.(SessionKeeper); ok {
			info, err := sk.SessionInfo(ctx, m.ChatID)
			h.answer(id, err, &protocol.Session{ID: id, Session: info})
			return
		}
		h.reply(id, &protocol.Session{ID: id})
	case *protocol.ResetSession:
		if sk, ok := b.(SessionKeeper); ok {
			cleared, err := sk.ResetSession(ctx, m.ChatID)
			h.answer(id, err, &protocol.OK{ID: id, Cleared: ptr(cleared)})
			return
		}
		h.reply(id, &protocol.OK{ID: id, Cleared: ptr(false)})
	case *protocol.SetMCPServers:
		ts, ok := b.(ToolSetter)
		if !ok {
			h.unsupported(id, b, m.MsgType())
			return
		}
		tools, err := ts.SetMCPServers(ctx, m.ChatID, m.Servers)
		h.answer(id, err, &protocol.OK{ID: id, Tools: tools})
	case *protocol.RefreshTools:
		ts, ok := b.(ToolSetter)
		if !ok {
			h.unsupported(id, b, m.MsgType())
			return
		}
		tools, err := ts.RefreshTools(ctx, m.ChatID)
		h.answer(id, err, &protocol.OK{ID: id, Tools: tools})
	case *protocol.ListModels:
		ml, ok := b.(ModelLister)
		if !ok {
			h.reply(id, &protocol.Models{ID: id, Models: []protocol.ModelInfo{}, Total: 0})
			return
		}
		models, total, err := ml.ListModels(ctx, m.Filter)
		if models == nil {
			models = []protocol.ModelInfo{}
		}
		h.answer(id, err, &protocol.Models{ID: id, Models: models, Total: total})
	case *protocol.PlanUsageReq:
		if pu, ok := b.(PlanUsager); ok {
			u, err := pu.PlanUsage(ctx)
			h.answer(id, err, &protocol.UsageReply{ID: id, Usage: u})
			return
		}
		h.reply(id, &protocol.UsageReply{ID: id})
	default:
		h.reply(id, errReply(id, protocol.CodeUnsupported, "unsupported request "+m.MsgType(), false))
	}
}

// answer replies with ok, or with the error a backend returned.
func (h *Host) answer(id string, err error, ok protocol.Msg) {
	if err != nil {
		info := errorInfo(err, protocol.CodeBackendFailed)
		h.reply(id, &protocol.Error{ID: id, Error: *info})
		return
	}
	h.reply(id, ok)
}

func (h *Host) unsupported(id string, b Backend, what string) {
	h.reply(id, errReply(id, protocol.CodeUnsupported, fmt.Sprintf("the %s backend does not support %s", b.Name(), what), false))
}

// errorInfo turns an error into protocol terms.
func errorInfo(err error, code string) *protocol.ErrorInfo {
	var info *protocol.ErrorInfo
	if errors.As(err, &info) {
		c := *info
		return &c
	}
	return &protocol.ErrorInfo{Code: code, Message: err.Error()}
}

func ptr[T any](v T) *T { return &v }
