package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
)

// drain keeps a stdio client's requests in the order it wrote them where
// order matters, and holds back the end of its input until every request
// read has been answered.
//
// The SDK runs each request as soon as it is read, concurrently, and ends
// the session at the end of its input, dropping the calls still running.
// A script that pipes its requests in (printf … | svc mcp) would get no
// answer to any that had not finished, and a stop, status, output, list
// or who written after a start would run before the start had made its
// service, find nothing, and leave the service the start then made
// running. So a request that names a service (or lists them all) is not
// passed on while a start or run read before it that may make that
// service is unanswered (a start without a name may make any), nor a
// start or run while a stop read before it of the service it may make is:
// start, stop, start leaves it running.
//
// A request is a line with an id and a method; its answer, a line written
// with the same id and no method. A request the client cancels (MCP's
// notifications/cancelled) is not waited for, whether or not it is
// answered.
type drain struct {
	mu      sync.Mutex
	pending map[string]bool  // ids of requests read and not answered
	touch   map[string]touch // of those, the starts, runs and stops
	changed chan struct{}    // closed, and made anew, when an answer or a cancel comes
	in, out []byte           // partial lines
}

func newDrain() *drain {
	return &drain{pending: map[string]bool{}, touch: map[string]touch{}, changed: make(chan struct{})}
}

// touch is a start, run or stop under way: the service it names ("":
// any, for a start or run without a name), and whether it may make it.
type touch struct {
	name  string
	maker bool
}

// message is what drain reads of a JSON-RPC line.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"`
		// A tool call's tool, and the service it names.
		Name      string `json:"name"`
		Arguments struct {
			Name string `json:"name"`
		} `json:"arguments"`
	} `json:"params"`
}

// cancel is the notification that withdraws a request.
const cancel = "notifications/cancelled"

// The tools that may make a service, and those that read one (or all).
var (
	makers  = map[string]bool{"start": true, "run": true}
	readers = map[string]bool{"stop": true, "status": true, "output": true, "send": true}
	lookers = map[string]bool{"list": true, "who": true}
)

// parse is a line's message, when it is a request or a cancel.
func parse(line []byte) (message, bool) {
	var m message
	if json.Unmarshal(line, &m) == nil && (has(m.ID) || m.Method == cancel && has(m.Params.RequestID)) {
		return m, true
	}
	return m, false
}

// lines calls f with each whole line of p, keeping the rest in *part.
func lines(part *[]byte, p []byte, f func(message)) {
	*part = append(*part, p...)
	for {
		i := bytes.IndexByte(*part, '\n')
		if i < 0 {
			return
		}
		if m, ok := parse((*part)[:i]); ok {
			f(m)
		}
		*part = (*part)[i+1:]
	}
}

func has(id json.RawMessage) bool { return len(id) > 0 && string(id) != "null" }

func (d *drain) read(p []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	lines(&d.in, p, func(m message) {
		switch {
		case m.Method == cancel:
			d.done(string(m.Params.RequestID))
		case m.Method != "":
			d.pending[string(m.ID)] = true
			if tool := m.Params.Name; m.Method == "tools/call" && (makers[tool] || tool == "stop") {
				d.touch[string(m.ID)] = touch{name: m.Params.Arguments.Name, maker: makers[tool]}
			}
		}
	})
}

// done forgets a request answered or cancelled, and wakes those waiting;
// d.mu is held.
func (d *drain) done(id string) {
	delete(d.pending, id)
	delete(d.touch, id)
	close(d.changed)
	d.changed = make(chan struct{})
}

func (d *drain) wrote(p []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	lines(&d.out, p, func(m message) {
		if m.Method == "" {
			d.done(string(m.ID))
		}
	})
}

// until returns once ok holds (checked with d.mu held), or ctx is done.
func (d *drain) until(ctx context.Context, ok func() bool) {
	for {
		d.mu.Lock()
		yes, changed := ok(), d.changed
		d.mu.Unlock()
		if yes {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// wait returns once nothing read is unanswered, or ctx is done.
func (d *drain) wait(ctx context.Context) {
	d.until(ctx, func() bool { return len(d.pending) == 0 })
}

// hold returns once line may be passed on: it is no tool call that reads
// what an unanswered start or run may be making, nor a start or run of
// what an unanswered stop is stopping.
func (d *drain) hold(ctx context.Context, line []byte) {
	m, ok := parse(bytes.TrimSuffix(line, []byte("\n")))
	if !ok || m.Method != "tools/call" {
		return
	}
	tool, name := m.Params.Name, m.Params.Arguments.Name
	var waits func(t touch) bool
	switch {
	case makers[tool]:
		waits = func(t touch) bool { return !t.maker && (name == "" || t.name == name) }
	case readers[tool]:
		waits = func(t touch) bool { return t.maker && (t.name == "" || t.name == name) }
	case lookers[tool]:
		waits = func(t touch) bool { return t.maker }
	default:
		return
	}
	d.until(ctx, func() bool {
		for _, t := range d.touch {
			if waits(t) {
				return false
			}
		}
		return true
	})
}

// drainReader is the client's input, passed on a line at a time (held
// back as drain says), whose end waits for the answers.
type drainReader struct {
	ctx  context.Context
	r    *bufio.Reader
	c    io.Closer
	d    *drain
	line []byte // what is left of the line being passed on
	err  error  // what ended the input, once line is passed on
	// reject answers a line that is no JSON at all, which is not passed
	// on: the SDK ends the session at one.
	reject func(line []byte)
}

func newDrainReader(ctx context.Context, r io.ReadCloser, d *drain, reject func([]byte)) *drainReader {
	return &drainReader{ctx: ctx, r: bufio.NewReader(r), c: r, d: d, reject: reject}
}

func (r *drainReader) Read(p []byte) (int, error) {
	if len(r.line) == 0 {
		if r.err != nil {
			return 0, r.end()
		}
		line, err := r.r.ReadBytes('\n')
		r.err = err
		for len(line) > 0 && r.reject != nil && !json.Valid(line) && len(bytes.TrimSpace(line)) > 0 && err == nil {
			// A parse error is answered, and the next line read: one
			// garbled line does not end the session with all in flight.
			r.reject(line)
			line, err = r.r.ReadBytes('\n')
			r.err = err
		}
		if len(line) == 0 {
			return 0, r.end()
		}
		r.d.hold(r.ctx, line)
		r.d.read(line)
		r.line = line
	}
	n := copy(p, r.line)
	r.line = r.line[n:]
	return n, nil
}

// end is the input's end: at EOF, once every request read is answered.
func (r *drainReader) end() error {
	if r.err == io.EOF {
		r.d.wait(r.ctx)
	}
	return r.err
}

func (r *drainReader) Close() error { return r.c.Close() }

// drainWriter is the output to the client, whose answers it counts.
type drainWriter struct {
	w  io.WriteCloser
	d  *drain
	mu *sync.Mutex // one message whole at a time: the SDK's, or a parse error's
}

func (w drainWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	n, err := w.w.Write(p)
	w.mu.Unlock()
	w.d.wrote(p[:n])
	return n, err
}

// parseError writes the JSON-RPC answer to a line that is no JSON: id
// null, code -32700, as the specification has it.
func (w drainWriter) parseError(line []byte) {
	text, _ := json.Marshal("Parse error: the line is not JSON: " + snippet(line))
	msg := `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":` + string(text) + "}}\n"
	w.mu.Lock()
	_, _ = io.WriteString(w.w, msg)
	w.mu.Unlock()
}

// snippet is the start of a line, for a message.
func snippet(line []byte) string {
	s := strings.TrimSpace(string(line))
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return s
}

func (w drainWriter) Close() error { return w.w.Close() }
