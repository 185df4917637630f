package ndjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
)

// ErrEmbeddedNewline is returned for a line that would break the framing.
var ErrEmbeddedNewline = errors.New("ndjson: line contains a newline")

// Writer writes whole lines, each with one Write call under a lock, so
// goroutines sharing it never interleave partial lines.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

// NewWriter writes lines to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// WriteLine writes line followed by "\n" (line may already end in one). A
// line with a "\n" anywhere else is refused.
func (w *Writer) WriteLine(line []byte) error {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	if bytes.IndexByte(line, '\n') >= 0 {
		return ErrEmbeddedNewline
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(append(w.buf[:0], line...), '\n')
	_, err := w.w.Write(w.buf)
	if cap(w.buf) > 1<<20 {
		w.buf = nil // do not pin a huge line's memory
	}
	return err
}

// Encode writes v as one line of compact JSON.
func (w *Writer) Encode(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return w.WriteLine(b)
}
