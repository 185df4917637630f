package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/ndjson"
	"github.com/agentry/agentry/lib/proc"
)

// conn is one agent process and the JSON-RPC 2.0 spoken to it on its
// stdio, one message a line each way (ACP's stdio transport). Calls are
// matched to their responses by id; the agent's requests are each served
// on a goroutine of their own by serve (a terminal's wait_for_exit blocks,
// a permission request waits for its answer), its notifications are
// handed to notify in order, on the reading goroutine.
type conn struct {
	child  *proc.Child
	stdin  io.WriteCloser
	out    *ndjson.Writer
	stderr *proc.Tail

	mu    sync.Mutex
	next  int64
	calls map[int64]chan reply

	exited chan struct{} // closed once the process is reaped, with its group
}

// message is a line from the agent, as JSON-RPC sees it.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *RPCError       `json:"error"`
}

// RPCError is a JSON-RPC error, the agent's or the one agentry answers an
// agent's request with.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

// JSON-RPC error codes agentry answers the agent's requests with.
const (
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
	// codeRefused is a request the level does not allow (a write at
	// level 1, a path outside the working copy, a terminal at level 1).
	codeRefused = -32000
)

type reply struct {
	result json.RawMessage
	err    error
}

// errGone is what a call gets when the agent ended before it answered.
var errGone = errors.New("the agent ended")

// handlers are what the agent's messages are given to.
type handlers struct {
	// serve answers one request of the agent: a result, or an error.
	serve func(method string, params json.RawMessage) (any, error)
	// notify takes one notification, in the order they came.
	notify func(method string, params json.RawMessage)
	warn   func(string)
}

// start starts cmd in a process group of its own, as env says, and reads
// its stdout.
func start(cmd *exec.Cmd, env host.Env, h handlers) (*conn, error) {
	child, err := proc.StartPiped(cmd, proc.Pipes{StdinPipe: true, Stderr: env.StderrOr(), Options: env.Start()})
	if err != nil {
		return nil, err
	}
	stdout := child.Stdout
	c := &conn{child: child.Child, stdin: child.Stdin, out: ndjson.NewWriter(child.Stdin), stderr: child.Stderr,
		calls: map[int64]chan reply{}, exited: make(chan struct{})}
	read := make(chan struct{})
	go func() {
		defer close(read)
		defer stdout.Close()
		skipped := func(*ndjson.TooLongError) { h.warn("acp: skipped an over-long line from the agent") }
		_ = ndjson.Lines(stdout, 0, skipped, func(line []byte) bool { c.receive(line, h); return true })
	}()
	go func() {
		child.End()
		_ = stdout.SetReadDeadline(time.Now().Add(time.Second))
		<-read
		c.mu.Lock()
		calls := c.calls
		c.calls = map[int64]chan reply{}
		c.mu.Unlock()
		for _, ch := range calls {
			ch <- reply{err: errGone}
		}
		close(c.exited)
	}()
	return c, nil
}

// receive routes one line from the agent.
func (c *conn) receive(line []byte, h handlers) {
	var m message
	if ndjson.Check(line) != ndjson.Valid || json.Unmarshal(line, &m) != nil {
		h.warn(fmt.Sprintf("acp: skipped a line from the agent that is not JSON-RPC: %.80q", line))
		return
	}
	hasID := len(m.ID) > 0 && string(m.ID) != "null"
	switch {
	case m.Method != "" && hasID:
		go func() {
			result, err := h.serve(m.Method, m.Params)
			c.answer(m.ID, result, err)
		}()
	case m.Method != "":
		h.notify(m.Method, m.Params)
	case hasID:
		n, err := strconv.ParseInt(string(m.ID), 10, 64)
		if err != nil {
			return // not an id of ours
		}
		c.mu.Lock()
		ch := c.calls[n]
		delete(c.calls, n)
		c.mu.Unlock()
		if ch == nil {
			return
		}
		if m.Error != nil {
			ch <- reply{err: m.Error}
			return
		}
		ch <- reply{result: m.Result}
	}
}

func (c *conn) write(v any) error { return c.out.Encode(v) }

// answer replies to a request of the agent.
func (c *conn) answer(id json.RawMessage, result any, err error) {
	if err != nil {
		var re *RPCError
		if !errors.As(err, &re) {
			re = &RPCError{Code: codeInternal, Message: err.Error()}
		}
		_ = c.write(map[string]any{"jsonrpc": "2.0", "id": id, "error": re})
		return
	}
	if result == nil {
		result = struct{}{}
	}
	_ = c.write(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

// call sends a request and waits for its response, ctx, or the agent's
// end.
func (c *conn) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	ch, id, err := c.send(method, params)
	if err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("%s: %w", method, r.err)
		}
		return r.result, nil
	case <-ctx.Done():
		c.forget(id)
		return nil, ctx.Err()
	}
}

// send sends a request and returns the channel its response comes on.
func (c *conn) send(method string, params any) (chan reply, int64, error) {
	ch := make(chan reply, 1)
	c.mu.Lock()
	select {
	case <-c.exited:
		c.mu.Unlock()
		return nil, 0, errGone
	default:
	}
	c.next++
	id := c.next
	c.calls[id] = ch
	c.mu.Unlock()
	if err := c.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		c.forget(id)
		return nil, 0, fmt.Errorf("%s: %w", method, errGone)
	}
	return ch, id, nil
}

func (c *conn) forget(id int64) {
	c.mu.Lock()
	delete(c.calls, id)
	c.mu.Unlock()
}

func (c *conn) notify(method string, params any) error {
	return c.write(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

func (c *conn) alive() bool { return c.child.Running() }

// stop ends the agent: its stdin closed, then SIGTERM, then SIGKILL, each
// after grace; whatever its group left running is killed with it.
func (c *conn) stop(grace time.Duration) {
	c.child.Finish(c.stdin, grace)
	<-c.exited
}

// kill ends the agent and its group at once.
func (c *conn) kill() {
	_ = c.child.Signal(syscall.SIGKILL)
	<-c.exited
}
