package acp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/agentry/agentry/lib/ndjson"
)

// JSON-RPC 2.0 error codes ACP uses.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
	codeAuthRequired   = -32000
	codeNotFound       = -32002
)

// rpcError is a JSON-RPC error object; it is also the error a method
// handler returns to answer with a given code.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return e.Message }

func errorf(code int, format string, args ...any) *rpcError {
	return &rpcError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// incoming is one line from the client, as JSON-RPC sees it.
type incoming struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcError       `json:"error"`
}

// hasID reports whether the message carries an id (null counts as none:
// JSON-RPC forbids it on requests).
func (m *incoming) hasID() bool {
	return len(m.ID) > 0 && !bytes.Equal(m.ID, []byte("null"))
}

// kinds of incoming lines.
const (
	lineRequest = iota
	lineNotification
	lineResponse
	lineInvalid
)

// classify tells a request, a notification, a response, or a line that is
// none of them, and parses it; err is set for a line that is not JSON.
func classify(line []byte) (*incoming, int, error) {
	if ndjson.Check(line) != ndjson.Valid {
		return nil, lineInvalid, errors.New("not JSON")
	}
	var m incoming
	if err := json.Unmarshal(line, &m); err != nil {
		// Valid JSON that is not an object, or with ill-typed members.
		return &m, lineInvalid, nil
	}
	if m.ID != nil && !validID(m.ID) {
		return &m, lineInvalid, nil
	}
	switch {
	case m.Method != nil && m.hasID():
		return &m, lineRequest, nil
	case m.Method != nil:
		return &m, lineNotification, nil
	case m.hasID() && (m.Result != nil || m.Error != nil):
		return &m, lineResponse, nil
	}
	return &m, lineInvalid, nil
}

// validID: JSON-RPC ids are strings, numbers or null.
func validID(id json.RawMessage) bool {
	switch id[0] {
	case '"', '-', 'n':
		return true
	}
	return id[0] >= '0' && id[0] <= '9'
}

// wire writes whole lines to the client and matches the responses to the
// requests the agent sends it.
type wire struct {
	w *ndjson.Writer

	mu      sync.Mutex
	next    int64
	pending map[string]chan *incoming
	broken  error // the first failed write: the client is gone
	gone    chan struct{}
}

func newWire(w *ndjson.Writer) *wire {
	return &wire{w: w, pending: map[string]chan *incoming{}, gone: make(chan struct{})}
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type outRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

type notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

// send writes one message; after a failed write nothing more is written.
func (c *wire) send(v any) error {
	c.mu.Lock()
	if c.broken != nil {
		err := c.broken
		c.mu.Unlock()
		return err
	}
	c.mu.Unlock()
	line, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := c.w.WriteLine(line); err != nil {
		c.fail(err)
		return err
	}
	return nil
}

// fail records that the client cannot be written to: every request
// waiting for its answer gives up.
func (c *wire) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return
	}
	c.broken = err
	close(c.gone)
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
}

// reply answers request id with result, or with err when it is not nil.
func (c *wire) reply(id json.RawMessage, result any, err error) {
	if id == nil {
		id = json.RawMessage("null")
	}
	if err != nil {
		var re *rpcError
		if !errors.As(err, &re) {
			re = &rpcError{Code: codeInternal, Message: err.Error()}
		}
		_ = c.send(response{JSONRPC: "2.0", ID: id, Error: re})
		return
	}
	if result == nil {
		result = struct{}{}
	}
	_ = c.send(response{JSONRPC: "2.0", ID: id, Result: result})
}

func (c *wire) notify(method string, params any) {
	_ = c.send(notification{JSONRPC: "2.0", Method: method, Params: params})
}

// request sends a request to the client and returns the channel its
// response comes on (closed, with nothing, when the client is gone), and
// a function to stop waiting.
func (c *wire) request(method string, params any) (<-chan *incoming, func()) {
	c.mu.Lock()
	c.next++
	id := c.next
	key := strconv.FormatInt(id, 10)
	ch := make(chan *incoming, 1)
	if c.broken != nil {
		close(ch)
		c.mu.Unlock()
		return ch, func() {}
	}
	c.pending[key] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, key)
		c.mu.Unlock()
	}
	if err := c.send(outRequest{JSONRPC: "2.0", ID: id, Method: method, Params: params}); err != nil {
		forget()
	}
	return ch, forget
}

// response hands a client's response to the request waiting for it; one
// nobody waits for (the turn ended first) is dropped.
func (c *wire) response(m *incoming) {
	key := string(bytes.Trim(m.ID, `"`))
	c.mu.Lock()
	ch := c.pending[key]
	delete(c.pending, key)
	c.mu.Unlock()
	if ch != nil {
		ch <- m
	}
}
