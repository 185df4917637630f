package svccmd

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/svc"
	"github.com/agentry/agentry/lib/svc/logfile"
)

// TailOptions are svc tail's.
type TailOptions struct {
	Lines      int    // the last N rows of each service; -1: 10, or every row after Since
	Since      string // a row number, a duration back from now, or a time
	Follow     bool
	Timestamps bool // prefix each row with the time it was received
	Color      bool // colour the service names
	// Gone, when set, is told of rows asked for that log rotation
	// removed before they were read: first to last of a service.
	Gone func(name string, first, last int64)
}

// since is --since resolved for one service: the row after which to
// print, or -1 when not given.
type since func(d svc.Dir) (int64, error)

// parseSince reads --since: a row number, a duration (5m: rows received
// in the last five minutes) or a time (RFC 3339).
func parseSince(s string, now time.Time) (since, error) {
	if s == "" {
		return func(svc.Dir) (int64, error) { return -1, nil }, nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
		return func(svc.Dir) (int64, error) { return n, nil }, nil
	}
	var t time.Time
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		t = now.Add(-d)
	} else if t, err = time.Parse(time.RFC3339Nano, s); err != nil {
		return nil, cli.Usagef("--since takes a row number, a duration (5m) or a time (2026-12-01T10:00:00Z), not %q", s)
	}
	return func(d svc.Dir) (int64, error) { return logfile.RowAt(d.Path(), t) }, nil
}

// tailStart is the row after which a service's tail starts printing: the
// last n rows (10 when n < 0) when since < 0; else the rows after since,
// the last n of them when n >= 0.
func tailStart(d svc.Dir, n int, since int64) (int64, error) {
	if since >= 0 && n < 0 {
		return since, nil
	}
	if n < 0 {
		n = 10
	}
	last, err := logfile.LastRow(d.Path())
	if err != nil {
		return 0, err
	}
	return max(since, last-int64(n), 0), nil
}

// Tail prints the rows of one or more services. One service prints its
// rows as they are; several are interleaved in the order their rows were
// received, each prefixed by its name. Following several ends when all
// have ended and are drained.
func Tail(ctx context.Context, w io.Writer, ds []svc.Dir, o TailOptions, asJSON bool) error {
	sinceOf, err := parseSince(o.Since, time.Now())
	if err != nil {
		return err
	}
	p := newRowPrinter(w, ds, o, asJSON)
	from := make([]int64, len(ds))
	for i, d := range ds {
		s, err := sinceOf(d)
		if err != nil {
			return err
		}
		if from[i], err = tailStart(d, o.Lines, s); err != nil {
			return err
		}
		p.after[d.Name] = from[i]
	}
	if len(ds) == 1 {
		print := func(r svc.Row) error { return p.print(ds[0].Name, r) }
		if o.Follow {
			return svc.Follow(ctx, ds[0], from[0], print, p.flush)
		}
		_, err := svc.ReadRows(ds[0], from[0], print)
		if ferr := p.flush(); err == nil {
			err = ferr
		}
		return err
	}
	last, err := merge(ds, from, p)
	if ferr := p.flush(); err == nil {
		err = ferr
	}
	if err != nil || !o.Follow {
		return err
	}
	return followAll(ctx, ds, last, p)
}

// merge prints the rows of every service after from, in the order they
// were received (a row with no recorded time goes with its service's
// previous one; of rows received at once, the service listed first goes
// first), reading each log as a stream of batches: memory is a few
// batches a service, whatever the logs' size. It returns the last row
// printed of each. Services take turns in runs: the earliest service
// prints every row that comes before the next one's current row, so a
// row costs a comparison with one other service, not with all of them.
func merge(ds []svc.Dir, from []int64, p *rowPrinter) ([]int64, error) {
	ss := make([]*batches, len(ds))
	last := append([]int64(nil), from...)
	done := make(chan struct{})
	defer close(done)
	names := make([]string, len(ds))
	for i, d := range ds {
		ss[i], names[i] = readBatches(d, from[i], done), d.Name
	}
	return mergeRuns(ss, names, last, p)
}

// mergeRuns is merge's loop over services' batches, named by names; last
// holds the row to start after, and is returned with the last printed.
func mergeRuns(ss []*batches, names []string, last []int64, p *rowPrinter) ([]int64, error) {
	for {
		pick, next := earliest(ss)
		if pick < 0 {
			return last, nil
		}
		s := ss[pick]
		for {
			n := len(s.cur) - s.i
			if next >= 0 {
				n = s.lead(ss[next].at, pick < next)
			}
			rows := s.cur[s.i : s.i+n]
			if err := p.printRows(names[pick], rows); err != nil {
				return last, err
			}
			last[pick] = rows[n-1].N
			s.i += n
			if s.i < len(s.cur) || !s.ok() || next >= 0 && !comesFirst(s.at, ss[next].at, pick < next) {
				break
			}
		}
	}
}

// earliest is the service whose current row comes first, and the one
// that comes after it (-1 for none); on a tie, the one listed first.
func earliest(ss []*batches) (pick, next int) {
	pick, next = -1, -1
	for i, s := range ss {
		if !s.ok() {
			continue
		}
		switch {
		case pick < 0 || s.at.Before(ss[pick].at):
			pick, next = i, pick
		case next < 0 || s.at.Before(ss[next].at):
			next = i
		}
	}
	return pick, next
}

// comesFirst reports whether a row at a goes before one at t: when it is
// earlier, or at the same time from a service listed first (tie).
func comesFirst(a, t time.Time, tie bool) bool {
	return a.Before(t) || tie && a.Equal(t)
}

// batches is one service's rows, read ahead by a goroutine in batches.
type batches struct {
	ch   <-chan *rowBatch // nil once the log is read to its end
	free chan<- *rowBatch // batches printed, for the reader to fill again
	b    *rowBatch
	cur  []svc.Row
	i    int
	at   time.Time // the time of the current row, or of the last one that had one
}

// rowBatch is a batch of rows and the bytes of their lines.
type rowBatch struct {
	rows  []svc.Row
	arena []byte
}

const batchRows = 2048

func readBatches(d svc.Dir, since int64, done <-chan struct{}) *batches {
	ch := make(chan *rowBatch, 1)
	free := make(chan *rowBatch, 2)
	go func() {
		defer close(ch)
		fresh := func() *rowBatch {
			select {
			case b := <-free:
				b.rows, b.arena = b.rows[:0], b.arena[:0]
				return b
			default:
				return &rowBatch{rows: make([]svc.Row, 0, batchRows), arena: make([]byte, 0, 128*batchRows)}
			}
		}
		b := fresh()
		send := func() bool {
			select {
			case ch <- b:
				return true
			case <-done:
				return false
			}
		}
		stop := fmt.Errorf("stopped")
		svc.ReadRows(d, since, func(r svc.Row) error {
			start := len(b.arena)
			b.arena = append(b.arena, r.Line...)
			r.Line = b.arena[start:len(b.arena):len(b.arena)]
			b.rows = append(b.rows, r)
			if len(b.rows) == batchRows {
				if !send() {
					return stop
				}
				b = fresh()
			}
			return nil
		})
		if len(b.rows) > 0 {
			send()
		}
	}()
	return &batches{ch: ch, free: free}
}

// ok reports whether there is a current row, reading the next batch when
// this one is used up, and keeps at current.
func (b *batches) ok() bool {
	for b.i >= len(b.cur) {
		if b.ch == nil {
			return false
		}
		if b.b != nil {
			select {
			case b.free <- b.b: // every row of it is printed
			default:
			}
			b.b, b.cur = nil, nil
		}
		next, open := <-b.ch
		if !open {
			b.ch, b.cur = nil, nil
			return false
		}
		b.b, b.cur, b.i = next, next.rows, 0
	}
	if t := b.cur[b.i].At; !t.IsZero() {
		b.at = t
	}
	return true
}

// lead counts the rows of the current batch, from the current one (which
// is known to come first), that come before a row at t, keeping at. A row
// without a time goes with the one before it, so it always does.
func (b *batches) lead(t time.Time, tie bool) int {
	n := 1
	for j := b.i + 1; j < len(b.cur); j++ {
		if at := b.cur[j].At; !at.IsZero() {
			if !comesFirst(at, t, tie) {
				break
			}
			b.at = at
		}
		n++
	}
	return n
}

// followAll follows every service at once, printing rows as they come.
func followAll(ctx context.Context, ds []svc.Dir, from []int64, p *rowPrinter) error {
	var wg sync.WaitGroup
	errs := make([]error, len(ds))
	for i, d := range ds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = svc.Follow(ctx, d, from[i], func(r svc.Row) error { return p.print(d.Name, r) }, p.flush)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// rowPrinter prints rows as text or JSON, with the service's name when
// there are several, and the time received on request, through a buffer
// that flush empties. It is safe for concurrent use.
type rowPrinter struct {
	mu     sync.Mutex
	w      *bufio.Writer
	json   bool
	times  bool
	names  bool
	width  int
	color  bool
	colors map[string]string
	buf    []byte
	// after is the last row of each service printed (first, the one
	// the tail starts after): rows are numbered without a gap, and one
	// is rotation's (gone).
	after map[string]int64
	gone  func(name string, first, last int64)
}

func newRowPrinter(w io.Writer, ds []svc.Dir, o TailOptions, asJSON bool) *rowPrinter {
	p := &rowPrinter{w: bufio.NewWriterSize(w, 64<<10), json: asJSON, times: o.Timestamps, names: len(ds) > 1, color: o.Color, colors: map[string]string{},
		after: map[string]int64{}, gone: o.Gone}
	palette := []string{"36", "33", "35", "32", "34", "31", "96", "93", "95", "92"}
	for i, d := range ds {
		p.width = max(p.width, utf8.RuneCountInString(d.Name))
		p.colors[d.Name] = palette[i%len(palette)]
	}
	return p
}

func (p *rowPrinter) flush() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.w.Flush()
}

// timeLayout is how -t prints a row's time: local, to the millisecond.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

func (p *rowPrinter) print(name string, r svc.Row) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.row(name, r)
}

// printRows prints rows of one service.
func (p *rowPrinter) printRows(name string, rows []svc.Row) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range rows {
		if err := p.row(name, r); err != nil {
			return err
		}
	}
	return nil
}

// row prints one row; the caller holds mu.
func (p *rowPrinter) row(name string, r svc.Row) error {
	if p.gone != nil {
		if first := p.after[name] + 1; r.N > first {
			if err := p.w.Flush(); err != nil { // the rows before it first
				return err
			}
			p.gone(name, first, r.N-1)
		}
		p.after[name] = r.N
	}
	if p.json {
		return p.printJSON(name, r)
	}
	b := p.buf[:0]
	if p.names {
		if p.color {
			b = append(b, "\x1b["+p.colors[name]+"m"...)
		}
		b = append(b, name...)
		for i := utf8.RuneCountInString(name); i < p.width; i++ {
			b = append(b, ' ')
		}
		if p.color {
			b = append(b, "\x1b[0m"...)
		}
		b = append(b, " | "...)
	}
	if p.times {
		if r.At.IsZero() {
			b = append(b, '-') // a row from before times were kept
		} else {
			b = r.At.AppendFormat(b, timeLayout)
		}
		b = append(b, ' ')
	}
	b = append(append(b, r.Line...), '\n')
	p.buf = b
	_, err := p.w.Write(b)
	return err
}

// printJSON prints {"row":N,"line":"…","ts":"…"}, with "name" when there
// are several services. JSON strings hold only UTF-8: a line that is not
// keeps its exact bytes in "base64" too, next to a readable "line".
func (p *rowPrinter) printJSON(name string, r svc.Row) error {
	var raw []byte
	if !utf8.Valid(r.Line) {
		raw = r.Line
	}
	var ts *time.Time
	if !r.At.IsZero() {
		ts = &r.At
	}
	if !p.names {
		name = ""
	}
	b, _ := json.Marshal(struct {
		Row    int64      `json:"row"`
		Line   string     `json:"line"`
		TS     *time.Time `json:"ts,omitempty"`
		Base64 []byte     `json:"base64,omitempty"`
		Name   string     `json:"name,omitempty"`
	}{r.N, string(r.Line), ts, raw, name})
	_, err := p.w.Write(append(b, '\n'))
	return err
}
