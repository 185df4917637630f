package ndjson

import (
	"errors"
	"io"
)

// Reader reads one line at a time, by the framing rules of the package.
type Reader struct {
	c    *Chunker
	cur  *Chunk
	rest []byte
	line int64
}

// NewReader reads r with a line cap of maxLine bytes (DefaultMaxLine when
// maxLine <= 0).
func NewReader(r io.Reader, maxLine int) *Reader {
	return &Reader{c: NewChunker(r, maxLine)}
}

// Next returns the next line without its terminator. The slice is valid
// until the next call. A skipped over-long line comes back as a
// *TooLongError, after which Next may be called again; the end of the
// stream is io.EOF; a read error is returned after the lines before it.
// Blank lines are returned as empty lines: what they mean is the caller's
// business.
func (r *Reader) Next() ([]byte, error) {
	for {
		if len(r.rest) > 0 {
			var line []byte
			line, r.rest = Cut(r.rest)
			if len(r.rest) == 0 {
				r.rest = nil // an empty rest would still hold the chunk's buffer
			}
			r.line++
			return line, nil
		}
		if r.cur != nil {
			skipped := r.cur.Skipped
			r.c.Release(r.cur)
			r.cur = nil
			if skipped != nil {
				r.line++
				return nil, &TooLongError{Line: r.line, Size: skipped.Size, Max: r.c.max}
			}
		}
		ch, err := r.c.Next()
		if err != nil {
			return nil, err
		}
		r.cur, r.rest = ch, ch.Data
	}
}

// Line is the number of the line Next returned last, counting from 1.
func (r *Reader) Line() int64 { return r.line }

// Lines calls fn with every line of r in order, until fn returns false or
// the stream ends, and returns the read error that ended it, if any (nil
// at the end of the stream). An over-long line is skipped and, when
// tooLong is not nil, reported to it. The slice fn gets is valid only
// until fn returns.
func Lines(r io.Reader, maxLine int, tooLong func(*TooLongError), fn func(line []byte) bool) error {
	lr := NewReader(r, maxLine)
	for {
		line, err := lr.Next()
		var tl *TooLongError
		switch {
		case errors.As(err, &tl):
			if tooLong != nil {
				tooLong(tl)
			}
			continue
		case err == io.EOF:
			return nil
		case err != nil:
			return err
		}
		if !fn(line) {
			return nil
		}
	}
}
