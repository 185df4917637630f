package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"
)

// drain holds back the end of a stdio client's input until every request
// read has been answered. The SDK ends the session at the end of its input
// and drops the calls still running, so a script that pipes requests in
// (printf … | svc mcp) would get no answer to any that had not finished.
// A request is a line with an id and a method; its answer, a line written
// with the same id and no method. A request the client cancels (MCP's
// notifications/cancelled) is not waited for, whether or not it is
// answered.
type drain struct {
	mu       sync.Mutex
	pending  map[string]bool // ids of requests read and not answered
	answered chan struct{}   // signalled when pending may have reached 0
	in, out  []byte          // partial lines
}

func newDrain() *drain {
	return &drain{pending: map[string]bool{}, answered: make(chan struct{}, 1)}
}

// message is what drain reads of a JSON-RPC line.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

// cancel is the notification that withdraws a request.
const cancel = "notifications/cancelled"

// lines calls f with each whole line of p, keeping the rest in *part.
func lines(part *[]byte, p []byte, f func(message)) {
	*part = append(*part, p...)
	for {
		i := bytes.IndexByte(*part, '\n')
		if i < 0 {
			return
		}
		var m message
		if json.Unmarshal((*part)[:i], &m) == nil && (has(m.ID) || m.Method == cancel && has(m.Params.RequestID)) {
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
			delete(d.pending, string(m.Params.RequestID))
		case m.Method != "":
			d.pending[string(m.ID)] = true
		}
	})
	d.signal()
}

// signal wakes wait when nothing is pending; d.mu is held.
func (d *drain) signal() {
	if len(d.pending) == 0 {
		select {
		case d.answered <- struct{}{}:
		default:
		}
	}
}

func (d *drain) wrote(p []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	lines(&d.out, p, func(m message) {
		if m.Method == "" {
			delete(d.pending, string(m.ID))
		}
	})
	d.signal()
}

// wait returns once nothing read is unanswered, or ctx is done.
func (d *drain) wait(ctx context.Context) {
	for {
		d.mu.Lock()
		n := len(d.pending)
		d.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-d.answered:
		case <-ctx.Done():
			return
		}
	}
}

// drainReader is the client's input, whose end waits for the answers.
type drainReader struct {
	ctx context.Context
	r   io.ReadCloser
	d   *drain
}

func (r drainReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.d.read(p[:n])
	if err == io.EOF {
		r.d.wait(r.ctx)
	}
	return n, err
}

func (r drainReader) Close() error { return r.r.Close() }

// drainWriter is the output to the client, whose answers it counts.
type drainWriter struct {
	w io.WriteCloser
	d *drain
}

func (w drainWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.d.wrote(p[:n])
	return n, err
}

func (w drainWriter) Close() error { return w.w.Close() }
