// Package operands reads a command's file operands, in order, as one
// stream of lines, and says which file and line of it a line of the
// stream is (and, before any is read, how large they are: Size).
//
// Each file is decompressed when its first bytes are gzip's (1f 8b) or
// zstd's (28 b5 2f fd) magic numbers: the name is never looked at. "-" is
// the standard input (decompressed the same way). A file that does not end
// in a newline is given one, so its last line never runs into the next
// file's first (the last file's missing newline is left for the reader of
// the stream to see), and a UTF-8 byte order mark at the start of any file but
// the first is dropped (the reader of the stream handles the first's). A
// file that cannot be opened, or fails part way (a truncated gzip
// member), is an *Error, handed to OnError as it happens and kept for
// Errors; the stream goes on with the next file, so one bad file costs
// only its own lines.
package operands

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"

	"compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Stdin is the operand that names the standard input.
const Stdin = "-"

// Open opens a file operand by name; a command passes os.Open's.
type Open func(name string) (io.ReadCloser, error)

// Error is a file that could not be opened or read to its end.
type Error struct {
	Name string
	Err  error
}

func (e *Error) Error() string { return e.Name + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// MaxWindow is the largest zstd window read, and the largest frame
// decoded in one segment: what zstd(1) itself decodes without --memory
// (a window log of 27, which zstd --long and --ultra -22 write). The
// decoder holds a window's bytes however small the file, so a frame that
// declares more is refused before anything is decoded: a 32-byte file
// asking for a 512 MiB window would otherwise cost that much memory.
const MaxWindow = 128 << 20

// WindowError is a zstd frame that needs a window over MaxWindow.
type WindowError struct {
	Window uint64 // what the frame asks for; 0 when the decoder did not say
	Max    uint64
}

func (e *WindowError) Error() string {
	if e.Window == 0 {
		return fmt.Sprintf("a zstd frame needs a window over %s, the most read", mib(e.Max))
	}
	return fmt.Sprintf("the zstd window is %s, over the %s read", mib(e.Window), mib(e.Max))
}

// mib is a size in MiB, or in bytes below one.
func mib(n uint64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d bytes", n)
	}
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// zstdWindow is the window a zstd frame header asks for (a frame in one
// segment needs its whole content), 0 when the header cannot be read.
func zstdWindow(head []byte) uint64 {
	var h zstd.Header
	if h.Decode(head) != nil || h.Skippable {
		return 0
	}
	if h.WindowSize == 0 && h.SingleSegment && h.HasFCS {
		return h.FrameContentSize
	}
	return h.WindowSize
}

// zstdError is the decoder's error, a refused window as a *WindowError.
func zstdError(err error) error {
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) {
		return &WindowError{Max: MaxWindow}
	}
	return err
}

// Format names how a file was stored.
type Format int

const (
	Plain Format = iota
	Gzip
	Zstd
)

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
	bom       = []byte{0xef, 0xbb, 0xbf}
)

// Sniff tells a stream's format from its first bytes.
func Sniff(head []byte) Format {
	switch {
	case bytes.HasPrefix(head, gzipMagic):
		return Gzip
	case bytes.HasPrefix(head, zstdMagic):
		return Zstd
	}
	return Plain
}

// peekHead is the first bytes of br, as many as tell its format: a first
// byte that begins no magic number is enough, so that a stream's first
// line (a pipe's, a terminal's) is never held back waiting for more; a
// zstd stream's are its frame header, up to 18 bytes (fewer at the end of
// a short file).
func peekHead(br *bufio.Reader) []byte {
	head, _ := br.Peek(1)
	if len(head) == 0 || head[0] != gzipMagic[0] && head[0] != zstdMagic[0] {
		return head
	}
	if head, _ = br.Peek(len(zstdMagic)); Sniff(head) == Zstd {
		head, _ = br.Peek(18)
	} else if len(head) < len(gzipMagic) {
		head, _ = br.Peek(len(gzipMagic))
	}
	return head
}

// Size is what the files hold, summed, as they are stored: a gzip or zstd
// file counts at its compressed size. "-" is stdin, counted from where it
// is read from. known is false when a file is not a regular file (a pipe,
// a terminal) or cannot be looked at: its size is not known before it is
// read. stat is os.Stat's.
func Size(names []string, stdin io.Reader, stat func(name string) (fs.FileInfo, error)) (size int64, known bool) {
	for _, name := range names {
		var n int64
		var ok bool
		if name == Stdin {
			n, ok = readerSize(stdin)
		} else if fi, err := stat(name); err == nil && fi.Mode().IsRegular() {
			n, ok = fi.Size(), true
		}
		if !ok {
			return 0, false
		}
		size += n
	}
	return size, true
}

// readerSize is what is left to read of r, when it is a regular file.
func readerSize(r io.Reader) (int64, bool) {
	f, ok := r.(interface{ Stat() (fs.FileInfo, error) })
	if !ok {
		return 0, false
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return 0, false
	}
	n := fi.Size()
	if s, ok := r.(io.Seeker); ok {
		if at, err := s.Seek(0, io.SeekCurrent); err == nil {
			n -= min(at, n)
		}
	}
	return n, true
}

// Reader is the files, one after another, as one io.Reader.
type Reader struct {
	names []string
	stdin io.Reader
	open  Open
	// OnError, when set, is given each file's error as it happens.
	OnError func(*Error)

	next   int // index of the next file to open
	cur    io.Reader
	src    source // what cur reads, for Ready
	closer func()
	name   string
	first  bool // nothing of the current file read yet
	zstd   bool // the current file is zstd's
	last   byte // the current file's last byte so far
	nl     bool // a newline is owed before the next file

	count  bool    // count lines, to locate them (several files)
	lines  int64   // lines of the stream so far
	starts []int64 // lines before each opened file
	opened []string
	errs   []*Error
}

// New reads names in order, "-" being stdin; open opens the others.
func New(names []string, stdin io.Reader, open Open) *Reader {
	return &Reader{names: names, stdin: stdin, open: open, count: len(names) > 1}
}

// Errors are the files that failed, in order.
func (r *Reader) Errors() []*Error { return r.errs }

// Locate turns a line number of the stream (from 1) into the file and the
// line of it (from 1) it came from. Valid once the line has been read.
func (r *Reader) Locate(line int64) (string, int64) {
	if len(r.opened) == 0 {
		if len(r.names) > 0 {
			return r.names[0], line
		}
		return "", line
	}
	if !r.count {
		return r.opened[0], line
	}
	i := sort.Search(len(r.starts), func(i int) bool { return r.starts[i] >= line }) - 1
	if i < 0 {
		i = 0
	}
	return r.opened[i], line - r.starts[i]
}

func (r *Reader) fail(name string, err error) {
	e := &Error{Name: name, Err: err}
	r.errs = append(r.errs, e)
	if r.OnError != nil {
		r.OnError(e)
	}
}

// Read reads the stream.
func (r *Reader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if r.nl {
			r.nl = false
			r.lines++
			p[0] = '\n'
			return 1, nil
		}
		if r.cur == nil {
			if r.next >= len(r.names) {
				return 0, io.EOF
			}
			r.openNext()
			continue
		}
		n, err := r.cur.Read(p)
		if r.src.pipe > 0 && n >= r.src.pipe {
			// The pipe was full: its writer is faster than the walk, and
			// is let run ahead (see growPipe).
			growPipe(r.src.f)
			r.src.pipe = 0
		}
		if n > 0 {
			b := p[:n]
			if r.first {
				r.first = false
				if len(r.opened) > 1 && bytes.HasPrefix(b, bom) {
					copy(b, b[len(bom):])
					n -= len(bom)
					b = b[:n]
				}
			}
			if n > 0 {
				r.last = b[n-1]
				if r.count {
					r.lines += int64(bytes.Count(b, []byte{'\n'}))
				}
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				if r.zstd {
					err = zstdError(err)
				}
				r.fail(r.name, err)
			}
			r.endFile()
		}
		if n > 0 {
			return n, nil
		}
	}
}

// Ready tells whether a Read now would return without waiting for a
// writer: the file being read is a regular one with bytes left, or its
// plain bytes are buffered here or waiting in its pipe. ndjson's Chunker
// fills a chunk while it holds, and passes on the lines it has when it
// does not. Between files it is false (the next file is opened by the
// next read), and so it is for a compressed pipe: bytes waiting there may
// be part of a block the decompressor cannot finish without more.
func (r *Reader) Ready() bool {
	if r.nl {
		return true
	}
	if r.cur == nil {
		return false
	}
	s := r.src
	if !s.decoded && s.br.Buffered() > 0 {
		// Only the plain file's buffer: a zstd decoder reads it on a
		// goroutine of its own.
		return true
	}
	if s.size >= 0 {
		off, err := s.f.(io.Seeker).Seek(0, io.SeekCurrent)
		return err == nil && off < s.size
	}
	return !s.decoded && waiting(s.f)
}

// source is what a file is read from, as Ready sees it.
type source struct {
	f       io.Reader     // the file as opened
	br      *bufio.Reader // buffering f
	size    int64         // a regular file's size (it can seek); -1 for any other
	decoded bool          // read through a decompressor
	pipe    int           // a plain pipe's buffer, until a read finds it full
}

// regularSize is f's size when it is a regular file that can seek, else -1.
func regularSize(f io.Reader) int64 {
	sf, ok := f.(interface {
		Stat() (fs.FileInfo, error)
		io.Seeker
	})
	if !ok {
		return -1
	}
	fi, err := sf.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return -1
	}
	return fi.Size()
}

func (r *Reader) endFile() {
	if r.closer != nil {
		r.closer()
	}
	r.cur, r.closer = nil, nil
	if r.last != 0 && r.last != '\n' && r.next < len(r.names) {
		r.nl = true
	}
}

// openNext opens the next file, deciding its format by its first bytes.
func (r *Reader) openNext() {
	name := r.names[r.next]
	r.next++
	var f io.Reader
	var closeFile func()
	if name == Stdin {
		f = r.stdin
	} else {
		rc, err := r.open(name)
		if err != nil {
			r.fail(name, err)
			return
		}
		f, closeFile = rc, func() { rc.Close() }
	}
	br := bufio.NewReaderSize(f, 64<<10)
	src := source{f: f, br: br, size: regularSize(f)}
	head := peekHead(br)
	var cur io.Reader = br
	closer := closeFile
	switch Sniff(head) {
	case Gzip:
		zr, err := gzip.NewReader(br)
		if err != nil {
			r.fail(name, err)
			if closeFile != nil {
				closeFile()
			}
			return
		}
		cur = zr
	case Zstd:
		if w := zstdWindow(head); w > MaxWindow {
			r.fail(name, &WindowError{Window: w, Max: MaxWindow})
			if closeFile != nil {
				closeFile()
			}
			return
		}
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(2),
			zstd.WithDecoderMaxWindow(MaxWindow), zstd.WithDecoderMaxMemory(MaxWindow))
		if err != nil {
			r.fail(name, err)
			if closeFile != nil {
				closeFile()
			}
			return
		}
		cur = zr
		closer = func() {
			zr.Close()
			if closeFile != nil {
				closeFile()
			}
		}
	}
	r.cur, r.closer, r.name, r.first, r.last = cur, closer, name, true, 0
	r.zstd = Sniff(head) == Zstd
	if src.decoded = cur != io.Reader(br); !src.decoded {
		src.pipe = pipeBuffer(f)
	}
	r.src = src
	r.starts = append(r.starts, r.lines)
	r.opened = append(r.opened, name)
}
