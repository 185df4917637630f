package ndjsontool

import (
	"bufio"
	"bytes"
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"unsafe"

	"github.com/agentry/agentry/lib/cli"
)

// SortOptions are sort's.
type SortOptions struct {
	Keys    []string // gjson paths, most significant first
	Reverse bool
	// Memory bounds the lines held at once; past it, sorted runs go to
	// temporary files that are merged at the end.
	Memory int64
	// Top, when > 0, keeps only the first Top lines of the order, in a heap.
	Top int
	// TempDir is where runs go (default: os.TempDir()).
	TempDir string
}

// DefaultSortMemory is sort's --memory.
const DefaultSortMemory = 256 << 20

// Sort prints the valid lines ordered by the values at the keys: numbers
// as numbers, strings by their text's bytes, then anything else by the
// bytes of its compact JSON; a line without a key, or with null there,
// comes last, -r or not. Equal lines keep their input order. Lines are
// printed as they came, byte for byte.
func Sort(ctx context.Context, st *Stream, o SortOptions) error {
	if len(o.Keys) == 0 {
		return cli.Usagef("sort needs at least one -k PATH")
	}
	if o.Memory <= 0 {
		o.Memory = DefaultSortMemory
	}
	if o.Top < 0 {
		return cli.Usagef("--top cannot be negative")
	}
	fps := make([]fastPath, len(o.Keys))
	for i, k := range o.Keys {
		fps[i] = parseFastPath(k)
	}
	s := &sorter{o: o}
	defer s.close()
	// What sort holds is live until it is spilled, so the collector's
	// usual headroom (as much again as is live) would double it: the
	// budget is kept as a soft limit on the whole heap, for the command's
	// life.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(o.Memory + 16<<20))
	// Workers validate each line and frame it with its sort key; the
	// ordered stage numbers them (for stability) and keeps, spills or
	// heaps them.
	sk, err := st.eachLineThen(ctx, finding{path: fps[0]}, func(out, line []byte, lv lineView) []byte {
		start := len(out)
		out = binary.AppendUvarint(out, 0)
		keyAt := len(out)
		for i, k := range o.Keys {
			var v value
			if i == 0 {
				v = lv.found(line, k, fps[0]) // the check looked for it
			} else {
				v = get(line, lv.marks, k, fps[i])
			}
			out = appendSortKey(out, v, o.Reverse)
		}
		out = frame(out, start, keyAt)
		out = binary.AppendUvarint(out, uint64(len(line)))
		return append(out, line...)
	}, func(framed []byte) []byte {
		for len(framed) > 0 && s.err == nil {
			key, rest := unframe(framed)
			line, rest2 := unframe(rest)
			framed = rest2
			s.add(key, line)
		}
		return nil
	})
	if err == nil {
		err = s.err
	}
	if err != nil {
		return err
	}
	if err := s.finish(st.Out); err != nil {
		return err
	}
	return sk.report(st)
}

// appendSortKey appends a key whose bytes order as the values do: a tag
// (number, string, other, missing), then the value in an order-keeping
// form; reversed, every byte but a missing value's is complemented, so a
// missing value stays last.
func appendSortKey(out []byte, v value, reverse bool) []byte {
	start := len(out)
	switch {
	case !v.ok || string(v.raw) == "null":
		return append(out, 0xff)
	case v.raw[0] == '-' || v.raw[0] >= '0' && v.raw[0] <= '9':
		// Past float64's range, ParseFloat gives ±Inf, which still orders.
		f, _ := strconv.ParseFloat(string(v.raw), 64)
		if f == 0 {
			f = 0 // -0 is 0
		}
		bits := math.Float64bits(f)
		if math.Signbit(f) {
			bits = ^bits
		} else {
			bits |= 1 << 63
		}
		out = binary.BigEndian.AppendUint64(append(out, 0x01), bits)
	case v.isString():
		out = appendTerminated(append(out, 0x02), appendUnescaped(nil, str(v.raw)))
	default:
		raw := v.raw
		if raw[0] == '{' || raw[0] == '[' {
			raw = compact(raw)
		}
		out = appendTerminated(append(out, 0x03), raw)
	}
	if reverse {
		for i := start; i < len(out); i++ {
			out[i] = ^out[i]
		}
	}
	return out
}

// appendTerminated appends b with 0x00 escaped as 0x00 0x01 and ends it
// with 0x00 0x00, so that a shorter text sorts before a longer one it
// begins, and the next key starts after it.
func appendTerminated(out, b []byte) []byte {
	for _, c := range b {
		out = append(out, c)
		if c == 0 {
			out = append(out, 1)
		}
	}
	return append(out, 0, 0)
}

// record is one line and the key it sorts by, the key ending in the
// line's number, which keeps equal keys in input order.
type record struct {
	key  []byte
	line []byte
}

// held is a record in the arena: offsets, so that holding a line costs
// its bytes and 16 more, and no allocation of its own.
type held struct {
	at, keyLen, lineLen uint32
}

// heldCost is what a held record costs beyond its bytes.
const heldCost = int64(unsafe.Sizeof(held{}))

type sorter struct {
	o     SortOptions
	seq   uint64
	arena []byte // keys and lines of the held records, back to back
	held  []held
	runs  []*os.File
	top   topHeap
	err   error
}

func (s *sorter) add(key, line []byte) {
	s.seq++
	if s.o.Top > 0 {
		k := binary.BigEndian.AppendUint64(append(make([]byte, 0, len(key)+8), key...), s.seq)
		s.keepTop(record{key: k, line: append([]byte(nil), line...)})
		return
	}
	// The arena takes 3/4 of the budget, the index of what it holds at
	// most 1/8, the rest is for reading; the arena is made once, at its full size (untouched capacity costs no
	// memory: pages come as they are written), and never grows: when a
	// record would not fit, what is held is spilled.
	need := len(key) + 8 + len(line)
	if s.arena == nil {
		s.arena = make([]byte, 0, max(int(s.o.Memory/4*3), need))
	}
	if len(s.held) > 0 && (len(s.arena)+need > cap(s.arena) || heldCost*int64(len(s.held)+1) > s.o.Memory/8) {
		if s.err = s.spill(); s.err != nil {
			return
		}
	}
	if need > cap(s.arena) {
		s.arena = make([]byte, 0, need) // one line over the budget: it still sorts
	}
	at := len(s.arena)
	s.arena = append(s.arena, key...)
	s.arena = binary.BigEndian.AppendUint64(s.arena, s.seq)
	s.arena = append(s.arena, line...)
	s.held = append(s.held, held{at: uint32(at), keyLen: uint32(len(key) + 8), lineLen: uint32(len(line))})
	if len(s.arena) > math.MaxUint32-(64<<20) {
		s.err = s.spill() // offsets are 32 bits
	}
}

func (s *sorter) key(h held) []byte  { return s.arena[h.at : h.at+h.keyLen] }
func (s *sorter) line(h held) []byte { return s.arena[h.at+h.keyLen : h.at+h.keyLen+h.lineLen] }

func (s *sorter) sortHeld() {
	slices.SortFunc(s.held, func(a, b held) int { return bytes.Compare(s.key(a), s.key(b)) })
}

// keepTop keeps r if it is among the first Top: a heap whose root is the
// last of those kept.
func (s *sorter) keepTop(r record) {
	if len(s.top) < s.o.Top {
		heap.Push(&s.top, r)
		return
	}
	if bytes.Compare(r.key, s.top[0].key) < 0 {
		s.top[0] = r
		heap.Fix(&s.top, 0)
	}
}

// spill sorts what is held and writes it as a run to a temporary file
// that is unlinked at once: it goes however the command ends.
func (s *sorter) spill() error {
	s.sortHeld()
	f, err := os.CreateTemp(s.o.TempDir, "ndjson-sort-*")
	if err != nil {
		return err
	}
	os.Remove(f.Name())
	w := bufio.NewWriterSize(f, 1<<20)
	var hdr [2 * binary.MaxVarintLen64]byte
	for _, h := range s.held {
		n := binary.PutUvarint(hdr[:], uint64(h.keyLen))
		n += binary.PutUvarint(hdr[n:], uint64(h.lineLen))
		w.Write(hdr[:n])
		if _, err := w.Write(s.arena[h.at : h.at+h.keyLen+h.lineLen]); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return err
	}
	s.runs = append(s.runs, f)
	s.held, s.arena = s.held[:0], s.arena[:0]
	if int64(cap(s.arena)) > s.o.Memory {
		s.arena = nil // made for one line over the budget: back to the budget's
	}
	return nil
}

// finish writes everything in order: what is held merged with the runs.
func (s *sorter) finish(out io.Writer) error {
	w := bufio.NewWriterSize(out, 1<<16)
	if s.o.Top > 0 {
		rs := []record(s.top)
		slices.SortFunc(rs, func(a, b record) int { return bytes.Compare(a.key, b.key) })
		for _, r := range rs {
			w.Write(r.line)
			w.WriteByte('\n')
		}
		return w.Flush()
	}
	s.sortHeld()
	srcs := []source{&heldSource{s: s}}
	for _, f := range s.runs {
		srcs = append(srcs, &runSource{r: bufio.NewReaderSize(f, 256<<10)})
	}
	m := &merge{}
	for _, src := range srcs {
		if r, ok, err := src.next(); err != nil {
			return err
		} else if ok {
			m.items = append(m.items, mergeItem{r, src})
		}
	}
	heap.Init(m)
	for len(m.items) > 0 {
		it := &m.items[0]
		w.Write(it.r.line)
		if err := w.WriteByte('\n'); err != nil {
			return err
		}
		r, ok, err := it.src.next()
		if err != nil {
			return err
		}
		if ok {
			it.r = r
			heap.Fix(m, 0)
		} else {
			heap.Pop(m)
		}
	}
	return w.Flush()
}

func (s *sorter) close() {
	for _, f := range s.runs {
		f.Close()
	}
}

// source gives records in order.
type source interface {
	next() (record, bool, error)
}

type heldSource struct {
	s *sorter
	i int
}

func (h *heldSource) next() (record, bool, error) {
	if h.i == len(h.s.held) {
		return record{}, false, nil
	}
	r := h.s.held[h.i]
	h.i++
	return record{key: h.s.key(r), line: h.s.line(r)}, true, nil
}

type runSource struct{ r *bufio.Reader }

func (s *runSource) next() (record, bool, error) {
	kl, err := binary.ReadUvarint(s.r)
	if errors.Is(err, io.EOF) {
		return record{}, false, nil
	}
	if err != nil {
		return record{}, false, err
	}
	ll, err := binary.ReadUvarint(s.r)
	if err != nil {
		return record{}, false, err
	}
	b := make([]byte, kl+ll)
	if _, err := io.ReadFull(s.r, b); err != nil {
		return record{}, false, err
	}
	return record{key: b[:kl], line: b[kl:]}, true, nil
}

type mergeItem struct {
	r   record
	src source
}

// merge is a min-heap of the sources' next records.
type merge struct{ items []mergeItem }

func (m *merge) Len() int           { return len(m.items) }
func (m *merge) Less(i, j int) bool { return bytes.Compare(m.items[i].r.key, m.items[j].r.key) < 0 }
func (m *merge) Swap(i, j int)      { m.items[i], m.items[j] = m.items[j], m.items[i] }
func (m *merge) Push(x any)         { m.items = append(m.items, x.(mergeItem)) }
func (m *merge) Pop() any {
	x := m.items[len(m.items)-1]
	m.items = m.items[:len(m.items)-1]
	return x
}

// topHeap is a max-heap: its root is the last record kept.
type topHeap []record

func (h topHeap) Len() int           { return len(h) }
func (h topHeap) Less(i, j int) bool { return bytes.Compare(h[i].key, h[j].key) > 0 }
func (h topHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *topHeap) Push(x any)        { *h = append(*h, x.(record)) }
func (h *topHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
