// Package logfile is a service's log: the monitor's writer, which rotates
// at line boundaries and never truncates, and the readers that number
// rows across every generation and every run.
//
// The files live in the service's directory: log.NNNNNNNNNNNN, one per
// generation, named by the row of its first line (rows count from 1), and
// "log", a symlink to the newest. A row is a complete line; a last line
// without its newline is not a row until it has one.
package logfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// Log generations are files log.NNNNNNNNNNNN named by the row of their
// first line (rows count from 1 across every generation and every run);
// "log" is a symlink to the newest.
const genDigits = 12

type generation struct {
	first int64
	path  string
}

func generations(dir string) ([]generation, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var gens []generation
	for _, e := range entries {
		n := e.Name()
		if !strings.HasPrefix(n, "log.") || len(n) != 4+genDigits {
			continue
		}
		first, err := strconv.ParseInt(n[4:], 10, 64)
		if err != nil {
			continue
		}
		gens = append(gens, generation{first, filepath.Join(dir, n)})
	}
	sort.Slice(gens, func(i, j int) bool { return gens[i].first < gens[j].first })
	return gens, nil
}

func genName(first int64) string { return fmt.Sprintf("log.%0*d", genDigits, first) }

// Writer is the monitor's side of the log: the only writer. It appends,
// rotates by renaming at a line boundary once the file reaches the size
// cap, keeps a number of generations, and never truncates.
type Writer struct {
	dir   string
	max   int64
	keep  int
	f     *os.File
	size  int64
	first int64 // row of the current file's first line
	rows  int64 // complete lines in the current file
	mid   bool  // the last byte written was not a newline
	err   error // logging stopped, and why
	// rowLen is how much of the current row is in the file; dropped how
	// much more of it there was. A row is kept up to max bytes: one
	// longer line cannot hold more disk than the log's cap.
	rowLen, dropped int64

	now       func() time.Time
	times     *os.File // the generation's receipt times; nil if it cannot be written
	stamped   bool     // a record was written to times
	lastStamp int64
}

// Open opens the newest generation for appending, or starts the first.
// A generation whose last line was cut off (a monitor killed mid-line) is
// ended with a newline first, so rows stay lines.
func Open(dir string, max int64, keep int) (*Writer, error) {
	if max <= 0 {
		max = 16 << 20
	}
	if keep < 1 {
		keep = 1
	}
	w := &Writer{dir: dir, max: max, keep: keep, first: 1, now: time.Now}
	gens, err := generations(dir)
	if err != nil {
		return nil, err
	}
	if len(gens) == 0 {
		return w, w.open(1)
	}
	last := gens[len(gens)-1]
	rows, mid, size, err := countLines(last.path)
	if err != nil {
		return nil, err
	}
	w.first, w.rows, w.size = last.first, rows, size
	if w.f, err = os.OpenFile(last.path, os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0o600); err != nil {
		return nil, err
	}
	w.openTimes()
	if mid {
		w.Write([]byte{'\n'})
	}
	return w, w.link()
}

func countLines(path string) (rows int64, mid bool, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false, 0, err
	}
	defer f.Close()
	buf := make([]byte, 256<<10)
	var last byte = '\n'
	for {
		n, err := f.Read(buf)
		rows += int64(bytes.Count(buf[:n], []byte{'\n'}))
		size += int64(n)
		if n > 0 {
			last = buf[n-1]
		}
		if err == io.EOF {
			return rows, last != '\n', size, nil
		}
		if err != nil {
			return 0, false, 0, err
		}
	}
}

func (w *Writer) open(first int64) error {
	f, err := os.OpenFile(filepath.Join(w.dir, genName(first)), os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	w.f, w.first, w.rows, w.size = f, first, 0, 0
	w.openTimes()
	return w.link()
}

// link points "log" at the current generation, atomically.
func (w *Writer) link() error {
	link := filepath.Join(w.dir, "log")
	tmp := link + ".tmp"
	os.Remove(tmp)
	if err := os.Symlink(genName(w.first), tmp); err != nil {
		return err
	}
	return os.Rename(tmp, link)
}

// Err says whether logging stopped (disk full, say), and why.
func (w *Writer) Err() error { return w.err }

// NextRow is the row the next complete line will have.
func (w *Writer) NextRow() int64 { return w.first + w.rows }

// Write appends p, received now, rotating at line boundaries. A row
// longer than the cap is kept up to the cap, and ends with a note of how
// many bytes of it were not kept. Once a write fails, logging stops and
// Err says why; Write still reports success so the service's output keeps
// draining.
func (w *Writer) Write(p []byte) (int, error) {
	n := len(p)
	now := w.now()
	for len(p) > 0 && w.err == nil {
		if w.size >= w.max && !w.mid {
			if err := w.rotate(); err != nil {
				w.err = err
				break
			}
		}
		chunk := w.nextChunk(p)
		if len(chunk) == 0 {
			p = w.dropRow(p, now)
			continue
		}
		w.write(chunk, now)
		p = p[len(chunk):]
	}
	return n, nil
}

// nextChunk is what of p is written next: up to and including the first
// newline past the generation's cap (so a rotation always falls between
// lines), and never more of a row than the cap; empty when the current row
// is already at the cap.
func (w *Writer) nextChunk(p []byte) []byte {
	if w.mid && w.rowLen >= w.max {
		if w.dropped == 0 && p[0] == '\n' {
			return p[:1] // the row was exactly the cap
		}
		return nil
	}
	chunk := p
	if room := w.max - w.size; room < int64(len(chunk)) {
		at := max(room, 0)
		if i := bytes.IndexByte(chunk[at:], '\n'); i >= 0 {
			chunk = chunk[:at+int64(i)+1]
		}
	}
	if w.rowLen+int64(len(chunk)) <= w.max {
		return chunk // no row in it can be over the cap
	}
	// Row by row, up to the first that would go over the cap.
	rowLen := w.rowLen
	for i := 0; i < len(chunk); {
		j := bytes.IndexByte(chunk[i:], '\n')
		end := len(chunk)
		if j >= 0 {
			end = i + j
		}
		if rowLen+int64(end-i) > w.max {
			return chunk[:i+int(max(w.max-rowLen, 0))]
		}
		if j < 0 {
			break
		}
		i, rowLen = end+1, 0
	}
	return chunk
}

// dropRow discards what of the current row p holds past the cap; at the
// row's newline it writes the note of what was dropped, and the newline.
func (w *Writer) dropRow(p []byte, now time.Time) []byte {
	i := bytes.IndexByte(p, '\n')
	if i < 0 {
		w.dropped += int64(len(p))
		return nil
	}
	w.dropped += int64(i)
	w.endDropped(now)
	return p[i+1:]
}

// endDropped ends a row cut at the cap: the note, then the newline.
func (w *Writer) endDropped(now time.Time) {
	note := fmt.Appendf(nil, " … [%d more bytes of this line not kept: a line is kept up to the log's size cap]\n", w.dropped)
	w.dropped = 0
	w.rowLen = 0 // the note is not held against the cap
	w.write(note, now)
	w.rowLen = 0
}

// write writes chunk to the current generation and counts it.
func (w *Writer) write(chunk []byte, now time.Time) {
	if bytes.IndexByte(chunk, '\n') >= 0 {
		w.stamp(w.first+w.rows, now)
	}
	m, err := w.f.Write(chunk)
	w.size += int64(m)
	w.rows += int64(bytes.Count(chunk[:m], []byte{'\n'}))
	if m > 0 {
		w.mid = chunk[m-1] != '\n'
		if i := bytes.LastIndexByte(chunk[:m], '\n'); i >= 0 {
			w.rowLen = int64(m - i - 1)
		} else {
			w.rowLen += int64(m)
		}
	}
	if err != nil {
		w.err = err
	}
}

func (w *Writer) rotate() error {
	if err := w.f.Close(); err != nil {
		return err
	}
	if err := w.open(w.first + w.rows); err != nil {
		return err
	}
	gens, err := generations(w.dir)
	if err != nil {
		return err
	}
	for len(gens) > w.keep {
		os.Remove(gens[0].path)
		os.Remove(filepath.Join(w.dir, timesName(gens[0].first)))
		gens = gens[1:]
	}
	return nil
}

// Close ends a last line that has no newline, and closes the file.
func (w *Writer) Close() error {
	if w.dropped > 0 && w.err == nil {
		w.endDropped(w.now())
	} else if w.mid && w.err == nil {
		w.Write([]byte{'\n'})
	}
	if w.times != nil {
		w.times.Close()
	}
	return w.f.Close()
}

// LastRow is the row of the last complete line in the log, 0 if none.
func LastRow(dir string) (int64, error) {
	gens, err := generations(dir)
	if err != nil || len(gens) == 0 {
		return 0, err
	}
	last := gens[len(gens)-1]
	rows, _, _, err := countLines(last.path)
	return last.first + rows - 1, err
}

// Unfinished is what the log holds after its last complete line: output
// whose newline has not come yet (a prompt, a progress line), at most its
// last most bytes; cut says that it had more. It is not a row: once its
// line ends it is the next row, whole.
func Unfinished(dir string, most int) (text []byte, cut bool, err error) {
	gens, err := generations(dir)
	if err != nil || len(gens) == 0 {
		return nil, false, err
	}
	f, err := os.Open(gens[len(gens)-1].path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	// Read back from the end, a block at a time, to the last newline or
	// most bytes, whichever comes first.
	var got []byte
	for end := fi.Size(); end > 0 && len(got) <= most; {
		n := min(end, 4096)
		block := make([]byte, n)
		if _, err := f.ReadAt(block, end-n); err != nil {
			return nil, false, err
		}
		if i := bytes.LastIndexByte(block, '\n'); i >= 0 {
			got = append(block[i+1:], got...)
			break
		}
		got = append(block, got...)
		end -= n
	}
	// Whole characters only: one cut at the front by most, or not yet
	// written whole at the end, is left out rather than shown broken.
	if len(got) > most {
		got, cut = got[len(got)-most:], true
		for len(got) > 0 && !utf8.RuneStart(got[0]) {
			got = got[1:]
		}
	}
	if i := lastRuneStart(got); i >= 0 && !utf8.FullRune(got[i:]) {
		got = got[:i]
	}
	return got, cut, nil
}

// lastRuneStart is the index of the last byte of b that starts a
// character, -1 if none.
func lastRuneStart(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return -1
}

// Row is one complete line of the log: its number, when the monitor
// received it (zero if the log did not keep it), and its text without the
// newline. Size is the text's whole length: more than len(Line) when the
// reader was asked for at most so many bytes of a row.
type Row struct {
	N    int64
	At   time.Time
	Line []byte
	Size int64
}

// ReadRows calls fn for every complete line after row since, in order, and
// returns the last row it saw (since, when none). The row's Line is valid
// only during the call.
func ReadRows(dir string, since int64, fn func(Row) error) (int64, error) {
	return ReadRowsUpTo(dir, since, 0, fn)
}

// ReadRowsUpTo is ReadRows holding at most most bytes of a row (0: the
// whole row): a longer row's Line is its first most bytes, its Size the
// whole, and the rest is read past, never held.
func ReadRowsUpTo(dir string, since int64, most int, fn func(Row) error) (int64, error) {
	gens, err := generations(dir)
	if err != nil {
		return since, err
	}
	c := newClock(dir)
	defer c.close()
	last := since
	for i, g := range gens {
		if i+1 < len(gens) && gens[i+1].first <= since+1 {
			continue // wholly before since
		}
		f, err := os.Open(g.path)
		if errors.Is(err, os.ErrNotExist) {
			continue // rotated away meanwhile
		}
		if err != nil {
			return last, err
		}
		r := bufio.NewReaderSize(f, 64<<10)
		row := g.first
		for {
			line, size, err := readRow(r, most)
			if err != nil {
				break // EOF, or an unfinished last line: not a row yet
			}
			if row > since {
				if ferr := fn(Row{N: row, At: c.at(g.first, row), Line: line, Size: size}); ferr != nil {
					f.Close()
					return last, ferr
				}
				last = row
			}
			row++
		}
		f.Close()
	}
	return last, nil
}

// readRow reads one line, and returns it without its newline (at most its
// first most bytes, when most > 0) and its whole length.
func readRow(r *bufio.Reader, most int) ([]byte, int64, error) {
	line, err := r.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		if err != nil {
			return nil, 0, err
		}
		body := line[:len(line)-1]
		size := int64(len(body))
		if most > 0 && len(body) > most {
			body = body[:most]
		}
		return body, size, nil
	}
	// A long line: gathered whole, or up to most and read past after.
	full := append([]byte(nil), line...)
	size := int64(len(line))
	for err == bufio.ErrBufferFull {
		line, err = r.ReadSlice('\n')
		size += int64(len(line))
		if most <= 0 || len(full) < most {
			full = append(full, line...)
		}
	}
	if err != nil {
		return nil, 0, err
	}
	size-- // the newline
	full = full[:min(int64(len(full)), size)]
	if most > 0 && len(full) > most {
		full = full[:most]
	}
	return full, size, nil
}
