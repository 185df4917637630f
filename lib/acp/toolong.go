package acp

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
)

// headLen is how much of a line over the cap is kept: enough for the
// members JSON-RPC puts first (jsonrpc, id, method) in every SDK seen.
const headLen = 4 << 10

// heads passes a stream through, keeping the first headLen bytes of each
// line longer than max, by line number (from 1), so that a request the
// reader skips as over the cap can still be answered.
type heads struct {
	r   io.Reader
	max int

	mu    sync.Mutex
	line  int64 // the line being read
	size  int   // its bytes so far
	head  []byte
	saved map[int64][]byte
}

func newHeads(r io.Reader, max int) *heads {
	return &heads{r: r, max: max, line: 1, saved: map[int64][]byte{}}
}

func (h *heads) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.mu.Lock()
	defer h.mu.Unlock()
	for b := p[:n]; len(b) > 0; {
		i := bytes.IndexByte(b, '\n')
		part := b
		if i >= 0 {
			part = b[:i]
		}
		if len(h.head) < headLen {
			h.head = append(h.head, part[:min(len(part), headLen-len(h.head))]...)
		}
		h.size += len(part)
		if h.size > h.max && len(h.saved[h.line]) < len(h.head) {
			h.saved[h.line] = bytes.Clone(h.head)
		}
		if i < 0 {
			break
		}
		b = b[i+1:]
		h.line, h.size, h.head = h.line+1, 0, h.head[:0] // the buffer is reused: a line within the cap costs nothing
	}
	return n, err
}

// take is the head of line n, if it was over the cap, and forgets it and
// any kept of the lines before it (a line the reader took as within the
// cap after all, by a "\r").
func (h *heads) take(n int64) []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	head := h.saved[n]
	for k := range h.saved {
		if k <= n {
			delete(h.saved, k)
		}
	}
	return head
}

// idOf finds the top-level id and method in the start of a JSON object,
// reading only as far as it goes; ok is false when it has no id before it
// is cut (or the id is not one JSON-RPC allows).
func idOf(head []byte) (id json.RawMessage, method string, ok bool) {
	d := json.NewDecoder(bytes.NewReader(head))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, "", false
	}
	for d.More() {
		k, err := d.Token()
		if err != nil {
			break
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			break // cut off inside the value
		}
		switch k {
		case "id":
			if validID(v) && !bytes.Equal(v, []byte("null")) {
				id = v
			}
		case "method":
			_ = json.Unmarshal(v, &method)
		}
	}
	return id, method, id != nil
}
