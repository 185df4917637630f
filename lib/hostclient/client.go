// Package hostclient is the daemon's side of agent-host: one Client
// interface, and two ways to get one — InProcess, which serves requests
// with a Backend in this process, and Subprocess, which starts agent-host
// and speaks the protocol to it. Both go through lib/host's rules, so a
// daemon cannot tell them apart, except that a subprocess can die: then
// every pending call and open run fails at once (runs end with stopReason
// "lost"), and the client can start a fresh host.
package hostclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/agentry/agentry/lib/protocol"
)

// Client is one method per protocol request.
type Client interface {
	// Hello must come first; Ready.Instance is new for every host start.
	Hello(ctx context.Context, daemon string, config json.RawMessage) (*protocol.Ready, error)
	// RunTurn starts a chat turn; its events come on the Run.
	RunTurn(ctx context.Context, runID string, p protocol.ChatRunParams) (*Run, error)
	// Interrupt stops the chat's running turn (runID's only, when given)
	// and reports whether there was one.
	Interrupt(ctx context.Context, chatID, runID string) (bool, error)
	RunOneShot(ctx context.Context, runID string, p protocol.OneShotParams) (*Run, error)
	WarmSession(ctx context.Context, chatID string) error
	SetMCPServers(ctx context.Context, chatID string, servers map[string]json.RawMessage) (*protocol.ToolRefresh, error)
	RefreshTools(ctx context.Context, chatID string) (*protocol.ToolRefresh, error)
	ListModels(ctx context.Context, filter string) ([]protocol.ModelInfo, int, error)
	PlanUsage(ctx context.Context) (*protocol.PlanUsage, error)
	SessionInfo(ctx context.Context, chatID string) (*protocol.SessionInfo, error)
	ResetSession(ctx context.Context, chatID string) (bool, error)
	// AnswerPermission answers a permission request of a run that asked
	// for them (params.permissions "ask"; the requests come on
	// Run.Asks). A request that is no longer pending is a *RemoteError
	// of code unknown_request.
	AnswerPermission(ctx context.Context, runID, requestID string, a Answer) error
	// AnswerQuestion answers a question request of a run that asked for
	// them (params.questions "ask"; the requests come on Run.Questions).
	// A request that is no longer pending is a *RemoteError of code
	// unknown_request; answers to questions it did not ask, or several
	// to a single-choice one, are bad_request, and it stays pending.
	AnswerQuestion(ctx context.Context, runID, requestID string, a QuestionAnswer) error
	// Shutdown drains the host and waits for its bye.
	Shutdown(ctx context.Context) error
	// Ping checks the host is alive; a subprocess that does not answer by
	// ctx's deadline is treated as dead.
	Ping(ctx context.Context) error
	// Close stops the host at once: runs in flight are interrupted and the
	// backend's processes stopped, nothing is left running; whatever else
	// is pending fails.
	Close() error
}

// Answer is a daemon's decision on a permission request: allow,
// allow_session or deny; Input replaces the tool's input (allow), Message
// is what the model is told (deny).
type Answer struct {
	Decision string
	Input    json.RawMessage
	Message  string
}

// QuestionAnswer is a daemon's answer to a question request: Answers maps
// a question's id (protocol.Question.ID) to the labels chosen, or a free
// answer's text; or Decline says nobody will answer, and the agent is
// told so.
type QuestionAnswer struct {
	Answers map[string][]string
	Decline bool
}

// ErrHostDied is wrapped by every error that comes of the host process
// ending or hanging.
var ErrHostDied = errors.New("agent-host died")

// RemoteError is an error reply from the host.
type RemoteError struct{ protocol.ErrorInfo }

func (e *RemoteError) Error() string { return e.Code + ": " + e.Message }

// conn is one conversation with one host: it numbers requests, matches
// replies to them by id, and routes events to runs by run id. receive is
// called with every message from the host, in the order the host sent
// them.
type conn struct {
	send   func(protocol.Msg) error
	notice func(protocol.Msg)

	mu      sync.Mutex
	next    int64
	pending map[string]chan protocol.Msg
	runs    map[string]*Run // by run id
	runReq  map[string]*Run // by the id of the request that started it
	dead    error
	deadCh  chan struct{}
}

func newConn(send func(protocol.Msg) error, notice func(protocol.Msg)) *conn {
	return &conn{send: send, notice: notice, pending: map[string]chan protocol.Msg{},
		runs: map[string]*Run{}, runReq: map[string]*Run{}, deadCh: make(chan struct{})}
}

func (c *conn) newID() string {
	c.next++
	return "q" + strconv.FormatInt(c.next, 10)
}

// run is the run in flight with id runID, or nil.
func (c *conn) run(runID string) *Run {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs[runID]
}

// receive takes one message from the host.
func (c *conn) receive(m protocol.Msg) {
	switch m := m.(type) {
	case *protocol.Event:
		if r := c.run(m.RunID); r != nil {
			r.push(m.Event)
		}
		return
	case *protocol.PermissionRequest:
		if r := c.run(m.RunID); r != nil {
			r.asks.add(r, m)
		}
		return
	case *protocol.PermissionResolved:
		if r := c.run(m.RunID); r != nil {
			r.asks.settle(r, m.RequestID, m)
		}
		return
	case *protocol.QuestionRequest:
		if r := c.run(m.RunID); r != nil {
			r.questions.add(r, m)
		}
		return
	case *protocol.QuestionResolved:
		if r := c.run(m.RunID); r != nil {
			r.questions.settle(r, m.RequestID, m)
		}
		return
	case *protocol.Log, *protocol.Metric, *protocol.Unknown, *protocol.BadMessage:
		if c.notice != nil {
			c.notice(m)
		}
		return
	}
	id := protocol.RequestID(m)
	c.mu.Lock()
	if r := c.runReq[id]; r != nil {
		delete(c.runReq, id)
		delete(c.runs, r.ID)
		c.mu.Unlock()
		switch m := m.(type) {
		case *protocol.RunDone:
			r.end(m, nil)
		case *protocol.Error:
			r.end(nil, &RemoteError{m.Error})
		default:
			r.end(nil, fmt.Errorf("agent-host answered run %s with %s", r.ID, m.MsgType()))
		}
		return
	}
	ch := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if ch != nil {
		ch <- m
	}
}

// fail ends the conversation: every pending call and run fails with err.
func (c *conn) fail(err error) {
	c.mu.Lock()
	if c.dead != nil {
		c.mu.Unlock()
		return
	}
	c.dead = err
	pending, runs := c.pending, c.runReq
	c.pending, c.runs, c.runReq = map[string]chan protocol.Msg{}, map[string]*Run{}, map[string]*Run{}
	close(c.deadCh)
	c.mu.Unlock()
	for _, ch := range pending {
		close(ch)
	}
	for _, r := range runs {
		r.end(&protocol.RunDone{RunID: r.ID, StopReason: protocol.StopLost, Events: r.count()}, err)
	}
}

// call sends a request and waits for its reply.
func (c *conn) call(ctx context.Context, build func(id string) protocol.Msg) (protocol.Msg, error) {
	c.mu.Lock()
	if c.dead != nil {
		c.mu.Unlock()
		return nil, c.dead
	}
	id := c.newID()
	ch := make(chan protocol.Msg, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.send(build(id)); err != nil {
		c.forget(id)
		return nil, err
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return nil, c.err()
		}
		if e, isErr := m.(*protocol.Error); isErr {
			return nil, &RemoteError{e.Error}
		}
		return m, nil
	case <-ctx.Done():
		c.forget(id)
		return nil, ctx.Err()
	}
}

func (c *conn) forget(id string) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

func (c *conn) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dead
}

// start sends a run_turn or one_shot; the Run gets its events and end.
func (c *conn) start(runID string, build func(id string) protocol.Msg) (*Run, error) {
	c.mu.Lock()
	if c.dead != nil {
		c.mu.Unlock()
		return nil, c.dead
	}
	if c.runs[runID] != nil {
		c.mu.Unlock()
		return nil, fmt.Errorf("run %s is already in flight on this client", runID)
	}
	id := c.newID()
	r := newRun(runID)
	c.runs[runID] = r
	c.runReq[id] = r
	c.mu.Unlock()
	if err := c.send(build(id)); err != nil {
		c.mu.Lock()
		delete(c.runs, runID)
		delete(c.runReq, id)
		c.mu.Unlock()
		return nil, err
	}
	return r, nil
}
