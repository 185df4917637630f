package logfile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Each generation log.N has a companion times.N: when the monitor
// received its rows. It is a run of 16-byte records, (row, unix nanos),
// little-endian, in row order; a row's time is that of the last record at
// or before it. The writer adds a record only when a write completes a
// row and at least a millisecond has passed since the last, so a flood of
// output costs a record a millisecond, and the log file itself is exactly
// what the service wrote.
const recordSize = 16

// timeGranule is how close in time rows may share a record.
const timeGranule = time.Millisecond

func timesName(first int64) string { return "times" + genName(first)[3:] }

type record struct {
	row int64
	at  int64 // unix nanoseconds
}

func (r record) bytes() []byte {
	var b [recordSize]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(r.row))
	binary.LittleEndian.PutUint64(b[8:], uint64(r.at))
	return b[:]
}

// stamp records that row is received at now, unless a record of the
// current generation is recent enough to stand for it.
func (w *Writer) stamp(row int64, now time.Time) {
	if w.times == nil {
		return
	}
	ns := now.UnixNano()
	if w.stamped && ns-w.lastStamp < int64(timeGranule) {
		return
	}
	if _, err := w.times.Write(record{row, ns}.bytes()); err == nil {
		w.stamped, w.lastStamp = true, ns
	}
}

func (w *Writer) openTimes() {
	if w.times != nil {
		w.times.Close()
	}
	w.times, _ = os.OpenFile(filepath.Join(w.dir, timesName(w.first)), os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	w.stamped = false
}

// clock gives the times of rows asked for in increasing order, reading
// the times files along.
type clock struct {
	dir     string
	gen     int64 // first row of the generation whose times are open
	r       *bufio.Reader
	f       *os.File
	cur     record
	next    record
	hasNext bool
}

func newClock(dir string) *clock { return &clock{dir: dir, gen: -1} }

// at is when row (of the generation starting at gen) was received; zero
// when the log has no times for it (written before svc kept them).
func (c *clock) at(gen, row int64) time.Time {
	if gen != c.gen {
		c.open(gen)
	}
	for c.hasNext && c.next.row <= row {
		c.cur = c.next
		c.hasNext = c.read(&c.next)
	}
	if c.cur.at == 0 || c.cur.row > row {
		return time.Time{}
	}
	return time.Unix(0, c.cur.at)
}

func (c *clock) open(gen int64) {
	c.close()
	c.gen, c.cur, c.hasNext = gen, record{}, false
	f, err := os.Open(filepath.Join(c.dir, timesName(gen)))
	if err != nil {
		return
	}
	c.f, c.r = f, bufio.NewReaderSize(f, 4096)
	c.hasNext = c.read(&c.next)
}

func (c *clock) read(r *record) bool {
	var b [recordSize]byte
	if c.r == nil {
		return false
	}
	if _, err := io.ReadFull(c.r, b[:]); err != nil {
		return false
	}
	r.row, r.at = int64(binary.LittleEndian.Uint64(b[:8])), int64(binary.LittleEndian.Uint64(b[8:]))
	return true
}

func (c *clock) close() {
	if c.f != nil {
		c.f.Close()
		c.f, c.r = nil, nil
	}
}

// RowAt is the row after which the rows received at or after t begin: the
// last row received before t (0 when none was). Rows with no recorded
// time count as before t.
func RowAt(dir string, t time.Time) (int64, error) {
	gens, err := generations(dir)
	if err != nil {
		return 0, err
	}
	ns := t.UnixNano()
	for _, g := range gens {
		f, err := os.Open(filepath.Join(dir, timesName(g.first)))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, err
		}
		c := &clock{r: bufio.NewReader(f)}
		var rec record
		for c.read(&rec) {
			if rec.at >= ns {
				f.Close()
				return rec.row - 1, nil
			}
		}
		f.Close()
	}
	return LastRow(dir)
}
