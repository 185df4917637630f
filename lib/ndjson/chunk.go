// Package ndjson is newline-delimited JSON as every agentry program reads
// and writes it: the framing of lines, and the one JSON scanner, which
// checks a line, finds values on its way, and answers on a line it has
// checked (lookups, the steps of any other walk, a string's text).
//
// Framing rules, the same for every reader in the suite:
//
//   - lines end at "\n" and only there; U+2028 and U+2029 are ordinary
//     characters and never split a line;
//   - a "\r" just before the "\n" is dropped, so CRLF input reads like LF;
//   - a last line without a "\n" is still a line;
//   - a UTF-8 byte order mark at the very start of the stream is dropped;
//   - a line longer than the cap (counted without its "\n") is never held in
//     memory: it is skipped to the next "\n", reported with its line number
//     and size, and reading goes on with the line after it.
//
// Chunker cuts a stream into chunks of whole lines for parallel work; Reader
// gives one line at a time on top of it; Writer writes one whole line per
// call under a lock.
//
// A line's JSON is scanned here too, and only here: Check tells whether a
// line is valid JSON in valid UTF-8, and a Checker finds values on the way
// (Find, FindAll, Index); Lookup finds a value in a line already checked,
// from the check's bitmap of stops (Marks); a verb that walks a checked
// line on its own terms does it with the steps in value.go (SkipSpace,
// StringEnd, ValueEnd, Into, MemberAt, Past, a Member's key by its text),
// from the same bitmap; and AppendUnescaped gives a string's text. Where
// an object has a name more than once, the last member of that name is
// the one every lookup takes, as jq, Python's json, JavaScript and Miller
// do.
package ndjson

import (
	"bytes"
	"fmt"
	"io"
)

// DefaultMaxLine is the default line cap: 64 MiB.
const DefaultMaxLine = 64 << 20

// defaultChunkSize is the size of a chunk's buffer: a chunk holds as much
// as the reads that had it ready brought, up to this.
const defaultChunkSize = 256 << 10

// Chunk is a run of whole lines from the stream.
type Chunk struct {
	// Data holds whole lines, each ending in "\n", except that the last line
	// of the stream may have none. Use Cut to walk it.
	Data []byte
	// Skipped, when set, is an over-long line that came right after the
	// lines of Data and was skipped.
	Skipped *Skipped
	// BOM is set on the first chunk when a byte order mark was dropped.
	BOM bool

	buf []byte
}

// Skipped describes a line over the cap that was skipped without being held.
type Skipped struct {
	Size int64 // bytes in the line, without its "\n"
}

// Chunker cuts a stream into chunks of whole lines. Its zero value is not
// usable; call NewChunker. It is not safe for concurrent use, but the chunks
// it returns may be processed concurrently and released in any order.
type Chunker struct {
	r       io.Reader
	max     int
	size    int
	carry   []byte // a partial line read ahead of the last chunk
	err     error  // sticky: io.EOF or the read error
	started bool
	bulk    bool // a buffer has been filled: the stream is no short one
	free    chan []byte
}

// NewChunker reads r with a line cap of maxLine bytes (DefaultMaxLine when
// maxLine <= 0).
func NewChunker(r io.Reader, maxLine int) *Chunker {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	size := defaultChunkSize
	if size > maxLine+1 {
		// A chunk never holds more than maxLine+1 bytes, so a line that
		// ends inside one is within the cap by construction.
		size = maxLine + 1
	}
	return &Chunker{r: &bomReader{r: r}, max: maxLine, size: size, free: make(chan []byte, 32)}
}

// Release hands a chunk's memory back for reuse. Optional.
func (c *Chunker) Release(ch *Chunk) {
	if ch == nil || cap(ch.buf) != c.size {
		return
	}
	select {
	case c.free <- ch.buf[:cap(ch.buf)]:
	default:
	}
	ch.buf, ch.Data = nil, nil
}

func (c *Chunker) getBuf() []byte {
	select {
	case b := <-c.free:
		return b
	default:
		return c.newBuf()
	}
}

// newBuf is a new buffer for a chunk. Once the stream has filled one, its
// pages are mapped in at once: the reads will write it whole. Before, they
// fault in as the reads reach them, so that a short stream (an agent's
// few lines) touches a page or two of it, not all 64 (mapping them in
// costs 0.19 ms, more than the rest of reading such a stream).
func (c *Chunker) newBuf() []byte {
	b := make([]byte, c.size)
	if c.bulk {
		populate(b)
	}
	return b
}

// Next returns the next chunk: when its buffer is full of whole lines and
// the start of the next, when a line longer than one buffer has ended,
// and as soon as a read has completed at least one line and the reader
// has no more ready (a reader with a Ready method can say so;
// operands.Reader does): a slow producer's lines are passed on as they
// come, and a file's fill a whole chunk.
// At the end of the stream it returns io.EOF; a read error is returned after
// the lines before it.
func (c *Chunker) Next() (*Chunk, error) {
	if c.err != nil && len(c.carry) == 0 {
		return nil, c.err
	}
	buf := c.getBuf()
	if len(c.carry) >= len(buf) {
		// The carried partial line came from a grown buffer; it is within
		// the cap, so a buffer of the cap's size holds it.
		buf = make([]byte, min(len(c.carry)+c.size, c.max+1))
	}
	n := copy(buf, c.carry)
	c.carry = c.carry[:0]
	// What skip read past an over-long line may hold whole lines already.
	if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
		c.carry = append(c.carry, buf[i+1:n]...)
		return c.chunk(buf, i+1), nil
	}
	// A line longer than one buffer is read into more buffers, segs, and
	// made one only once it has ended within the cap: growing one buffer
	// by copies would leave a trail of garbage as long as the line, and an
	// over-long line is never made one at all.
	var segs [][]byte
	held := 0  // bytes in segs
	lines := 0 // the end of buf's whole lines, once a read has ended one
	for {
		if c.err != nil {
			// End of stream: whatever is left is the last line.
			if n == 0 && held == 0 {
				c.Release(&Chunk{buf: buf})
				return nil, c.err
			}
			if lines == 0 && held+n > c.max {
				return c.skipped(int64(held + n)), nil
			}
			return c.whole(segs, buf, n), nil
		}
		// Reads never take the chunk past max+1 bytes, so a line that
		// ends inside it is within the cap by construction.
		room := min(len(buf), c.max+1-held)
		if n == room {
			c.bulk = true
			if lines > 0 {
				return c.cut(segs, buf, lines, n), nil
			}
			if held+n > c.max {
				return c.skip(int64(held+n), segs, buf)
			}
			segs, held = append(segs, buf), held+n
			buf, n = c.newBuf(), 0
			room = min(len(buf), c.max+1-held)
		}
		m, err := c.r.Read(buf[n:room])
		if err != nil {
			c.err = err
		}
		if i := bytes.LastIndexByte(buf[n:n+m], '\n'); i >= 0 {
			lines = n + i + 1
		}
		n += m
		// A chunk with whole lines is passed on, unless the input has
		// more ready to fill it with: a slow writer's lines go on as
		// they come, a file's or a full pipe's make chunks of a whole
		// buffer (a chunk costs a hand-over and a worker's start).
		if lines > 0 && c.err == nil && (len(segs) > 0 || !c.ready()) {
			return c.cut(segs, buf, lines, n), nil
		}
		if m == 0 && err == nil {
			// A reader that returns 0, nil repeatedly would spin; io.Reader
			// says to treat it as nothing happened, so try again.
			continue
		}
	}
}

// cut is the chunk of segs and buf's whole lines, buf[:lines], with the
// rest of buf[:n], the start of a line, carried to the next.
func (c *Chunker) cut(segs [][]byte, buf []byte, lines, n int) *Chunk {
	c.carry = append(c.carry, buf[lines:n]...)
	return c.whole(segs, buf, lines)
}

// ready tells whether a read now would find more of the input without
// waiting for its writer, where the reader can tell (operands.Reader
// can); a reader that cannot is never ready.
func (c *Chunker) ready() bool {
	return c.r.(*bomReader).ready()
}

// whole is the chunk of segs and then buf[:n]: buf itself when there are
// no segs, else one buffer of exactly their length.
func (c *Chunker) whole(segs [][]byte, buf []byte, n int) *Chunk {
	if len(segs) == 0 {
		return c.chunk(buf, n)
	}
	size := n
	for _, s := range segs {
		size += len(s)
	}
	out := make([]byte, 0, size)
	for _, s := range segs {
		out = append(out, s...)
	}
	out = append(out, buf[:n]...)
	c.Release(&Chunk{buf: segs[0]})
	return c.first(&Chunk{Data: out, buf: out})
}

// chunk wraps buf[:n] as a chunk.
func (c *Chunker) chunk(buf []byte, n int) *Chunk {
	return c.first(&Chunk{Data: buf[:n], buf: buf})
}

// BOM tells whether a byte order mark was dropped from the stream's
// start: for one that held nothing else, which makes no chunk to mark.
// It is known once the stream is read.
func (c *Chunker) BOM() bool { return c.r.(*bomReader).seen }

// first marks the stream's first chunk with whether a BOM was dropped.
func (c *Chunker) first(ch *Chunk) *Chunk {
	if !c.started {
		c.started = true
		ch.BOM = c.r.(*bomReader).seen
	}
	return ch
}

// skipped reports an over-long line of size bytes.
func (c *Chunker) skipped(size int64) *Chunk {
	return c.first(&Chunk{Skipped: &Skipped{Size: size}})
}

// skip discards the rest of an over-long line whose first size bytes were
// read into segs and buf, reusing buf to read on.
func (c *Chunker) skip(size int64, segs [][]byte, buf []byte) (*Chunk, error) {
	if len(segs) > 0 {
		c.Release(&Chunk{buf: segs[0]})
	}
	ch := c.skipped(size)
	scratch := buf[:cap(buf)]
	defer c.Release(&Chunk{buf: scratch})
	for {
		m, err := c.r.Read(scratch)
		if i := bytes.IndexByte(scratch[:m], '\n'); i >= 0 {
			ch.Skipped.Size += int64(i)
			c.carry = append(c.carry, scratch[i+1:m]...)
			if err != nil {
				c.err = err
			}
			return ch, nil
		}
		ch.Skipped.Size += int64(m)
		if err != nil {
			c.err = err
			return ch, nil
		}
	}
}

// Cut returns the first line of data, without its "\n" or "\r\n", and the
// rest. It is how a Chunk's Data is walked:
//
//	for rest := ch.Data; len(rest) > 0; {
//		var line []byte
//		line, rest = ndjson.Cut(rest)
//		…
//	}
func Cut(data []byte) (line, rest []byte) {
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		line, rest = data, nil
	} else {
		line, rest = data[:i], data[i+1:]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, rest
}

// TooLongError reports a line over the cap that was skipped.
type TooLongError struct {
	Line int64 // its line number, from 1
	Size int64 // its size in bytes, without the "\n"
	Max  int   // the cap
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("line %d is %d bytes, over the %d-byte cap; skipped", e.Line, e.Size, e.Max)
}

var bom = []byte{0xEF, 0xBB, 0xBF}

// readier is a reader that can tell whether a read would return at once.
type readier interface {
	Ready() bool
}

func (b *bomReader) ready() bool {
	if len(b.head) > 0 {
		return true
	}
	r, ok := b.r.(readier)
	return ok && r.Ready()
}

// bomReader drops a UTF-8 byte order mark from the start of a stream.
type bomReader struct {
	r       io.Reader
	checked bool
	seen    bool
	head    []byte // bytes read while looking for the mark, not yet served
	err     error  // an error that came with head
}

func (b *bomReader) Read(p []byte) (int, error) {
	for !b.checked {
		// Read only while what came so far could still be a mark, so a
		// short first line is never held back waiting for more.
		var buf [3]byte
		n, err := b.r.Read(buf[:3-len(b.head)])
		b.head = append(b.head, buf[:n]...)
		switch {
		case bytes.Equal(b.head, bom):
			b.seen, b.checked, b.head = true, true, nil
		case !bytes.HasPrefix(bom, b.head) || err != nil:
			b.checked = true
		}
		if err != nil {
			if len(b.head) == 0 {
				return 0, err
			}
			b.err = err
		}
	}
	if len(b.head) > 0 {
		n := copy(p, b.head)
		b.head = b.head[n:]
		return n, nil
	}
	if b.err != nil {
		return 0, b.err
	}
	return b.r.Read(p)
}
