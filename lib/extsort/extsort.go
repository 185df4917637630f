// Package extsort orders records larger than memory: each record is a key
// and a value, both bytes, ordered by the bytes of their keys, stably
// (records with equal keys come out in the order they were added in).
// What it holds stays within a budget; past it, the records held are
// sorted and written as a run to a temporary file, and the runs are merged
// as the records are read back. The merge keeps to the budget too: each
// run is read through a buffer of a share of it, as many runs at once as
// the budget has room for, and when there are more, merging goes in
// passes, each merging that many runs into one. The files are unlinked as
// soon as they are made, so they go however the program ends.
//
// A caller that orders by something other than bytes encodes its keys so
// that their bytes order as it wants (big-endian numbers, terminated
// text); extsort knows nothing of what the records are.
package extsort

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"slices"
	"unsafe"
)

// Options are a Sorter's.
type Options struct {
	// Memory bounds what the records held cost at once, in bytes; past
	// it, they go to a run on disk. 0 means DefaultMemory.
	Memory int64
	// Top, when > 0, keeps only the first Top records of the order, in a
	// heap: nothing goes to disk.
	Top int
	// TempDir is where runs go; "" means os.TempDir().
	TempDir string
	// Prefix begins the names of the runs' files, which say whose they
	// are for the moment they exist; "" means "extsort-".
	Prefix string
}

// DefaultMemory is the budget when Options.Memory is 0: 64 MiB, whose
// arena a large input fills and empties again and again. A larger one
// was slower as well as bigger: 256 MiB, on make bench's four corpora of
// 224-285 MB, took 1.2-1.4x 64 MiB's time (its arena, 192 MiB of fresh
// pages, cost more than writing and reading back the runs 48 MiB at a
// time), and held three times the memory.
const DefaultMemory = 64 << 20

// Sorter orders the records added to it. Its methods are not safe for
// concurrent use.
type Sorter struct {
	o     Options
	seq   uint64
	arena []byte // keys and values of the held records, back to back
	free  func() // gives the arena back, when it is newArena's
	peak  int    // the most of the arena written since it was made: its pages stay
	held  []held
	runs  []*os.File
	top   topHeap
}

// New returns a Sorter with nothing in it.
func New(o Options) *Sorter {
	if o.Memory <= 0 {
		o.Memory = DefaultMemory
	}
	if o.Prefix == "" {
		o.Prefix = "extsort-"
	}
	return &Sorter{o: o}
}

// record is one record, its key ending in its sequence number, which keeps
// equal keys in the order they were added in.
type record struct {
	key   []byte
	value []byte
}

// held is a record in the arena: offsets, so that holding a record costs
// its bytes and 24 more, and no allocation of its own; and the first 8
// bytes of its key, big-endian (zeros after a shorter key), which decide
// most comparisons without a look into the arena, where two keys compared
// are seldom near each other in memory.
type held struct {
	prefix               uint64
	at, keyLen, valueLen uint32
}

// keyPrefix is the first 8 bytes of key as a big-endian number, zeros
// after the end of a shorter one: two keys whose prefixes differ order as
// their prefixes do.
func keyPrefix(key []byte) uint64 {
	if len(key) >= 8 {
		return binary.BigEndian.Uint64(key)
	}
	var b [8]byte
	copy(b[:], key)
	return binary.BigEndian.Uint64(b[:])
}

// heldCost is what a held record costs beyond its bytes.
const heldCost = int64(unsafe.Sizeof(held{}))

// Add adds a record; key and value are copied. An error is one of writing
// a run, after which the Sorter is of no more use.
func (s *Sorter) Add(key, value []byte) error {
	s.seq++
	if s.o.Top > 0 {
		k := binary.BigEndian.AppendUint64(append(make([]byte, 0, len(key)+8), key...), s.seq)
		s.keepTop(record{key: k, value: append([]byte(nil), value...)})
		return nil
	}
	// The arena takes 3/4 of the budget, the index of what it holds at
	// most 1/8; the arena is made once, at its
	// full size (untouched capacity costs no memory: pages come as they
	// are written), and never grows: when a record would not fit, what is
	// held is spilled.
	need := len(key) + 8 + len(value)
	if s.arena == nil {
		s.newArena(max(int(s.o.Memory/4*3), need))
	}
	if len(s.held) > 0 && (len(s.arena)+need > cap(s.arena) || heldCost*int64(len(s.held)+1) > s.o.Memory/8) {
		if err := s.spill(); err != nil {
			return err
		}
	}
	if need > cap(s.arena) {
		s.newArena(need) // one record over the budget: it still sorts
	}
	at := len(s.arena)
	s.arena = append(s.arena, key...)
	s.arena = binary.BigEndian.AppendUint64(s.arena, s.seq)
	s.arena = append(s.arena, value...)
	s.held = append(s.held, held{prefix: keyPrefix(s.arena[at:]), at: uint32(at), keyLen: uint32(len(key) + 8), valueLen: uint32(len(value))})
	if len(s.arena) > math.MaxUint32-(64<<20) {
		return s.spill() // offsets are 32 bits
	}
	return nil
}

func (s *Sorter) key(h held) []byte   { return s.arena[h.at : h.at+h.keyLen] }
func (s *Sorter) value(h held) []byte { return s.arena[h.at+h.keyLen : h.at+h.keyLen+h.valueLen] }

func (s *Sorter) sortHeld() {
	slices.SortFunc(s.held, func(a, b held) int {
		if a.prefix != b.prefix {
			if a.prefix < b.prefix {
				return -1
			}
			return 1
		}
		return bytes.Compare(s.key(a), s.key(b))
	})
}

// newArena gives the Sorter an empty arena of n bytes' capacity, in place
// of the one it had: off the heap where it can (newArena), else on it.
func (s *Sorter) newArena(n int) {
	s.dropArena()
	if s.arena, s.free = newArena(n); s.arena == nil {
		s.arena = make([]byte, 0, n)
	}
}

// dropArena gives the arena back.
func (s *Sorter) dropArena() {
	if s.free != nil {
		s.free()
	}
	s.arena, s.free, s.peak = nil, nil, 0
}

// keepTop keeps r if it is among the first Top: a heap whose root is the
// last of those kept.
func (s *Sorter) keepTop(r record) {
	if len(s.top) < s.o.Top {
		heap.Push(&s.top, r)
		return
	}
	if bytes.Compare(r.key, s.top[0].key) < 0 {
		s.top[0] = r
		heap.Fix(&s.top, 0)
	}
}

// spill sorts what is held and writes it as a run.
func (s *Sorter) spill() error {
	s.sortHeld()
	f, w, err := s.newRun(1 << 20)
	if err != nil {
		return err
	}
	for _, h := range s.held {
		if err := writeRecord(w, s.arena[h.at:h.at+h.keyLen], s.arena[h.at+h.keyLen:h.at+h.keyLen+h.valueLen]); err != nil {
			f.Close()
			return err
		}
	}
	if err := s.endRun(f, w); err != nil {
		return err
	}
	s.peak = max(s.peak, len(s.arena))
	s.held, s.arena = s.held[:0], s.arena[:0]
	if int64(cap(s.arena)) > s.o.Memory {
		s.dropArena() // made for one record over the budget: back to the budget's
	}
	return nil
}

// newRun makes a run's file, unlinked at once so that it goes however the
// program ends, and a writer to it with a buffer of size bytes.
func (s *Sorter) newRun(size int) (*os.File, *bufio.Writer, error) {
	f, err := os.CreateTemp(s.o.TempDir, s.o.Prefix+"*")
	if err != nil {
		return nil, nil, err
	}
	os.Remove(f.Name())
	return f, bufio.NewWriterSize(f, size), nil
}

// endRun flushes a run written with w and adds it to the runs, to be read
// from its start.
func (s *Sorter) endRun(f *os.File, w *bufio.Writer) error {
	err := w.Flush()
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return err
	}
	s.runs = append(s.runs, f)
	return nil
}

// writeRecord writes a record as a run holds it: the key's length and the
// value's, as uvarints, then the key and the value.
func writeRecord(w *bufio.Writer, key, value []byte) error {
	var hdr [2 * binary.MaxVarintLen64]byte
	n := binary.PutUvarint(hdr[:], uint64(len(key)))
	n += binary.PutUvarint(hdr[n:], uint64(len(value)))
	w.Write(hdr[:n])
	w.Write(key)
	_, err := w.Write(value)
	return err
}

// mergeBuffer is the size of the buffer each run is read through, and
// the merged run written through: a 64th of the budget, between 16KiB and
// 1MiB.
func (s *Sorter) mergeBuffer() int {
	return int(min(max(s.o.Memory/64, 16<<10), 1<<20))
}

// fanIn is how many runs are merged at once: as many as there are buffers
// of size in the budget, less the one a pass writes through; at least 2.
func (s *Sorter) fanIn(size int) int {
	return max(int(s.o.Memory/int64(size))-1, 2)
}

// Each calls fn with the value of every record, in order: what is held
// merged with the runs. value is valid only until fn returns. Each is
// called once, after the last Add; an error is fn's, or one of reading or
// writing a run.
//
// When there are runs, what is held is merged with them where it is if
// it and a buffer for each run (see mergeBuffer) fit the budget together:
// a stream a little over the budget goes to disk once, not all of it.
// Else it is spilled too, and its memory let go, so that the merge has
// the whole budget. Past fanIn runs, the first fanIn are merged into one
// run, again, until there are few enough to merge into fn.
func (s *Sorter) Each(fn func(value []byte) error) error {
	if s.o.Top > 0 {
		rs := []record(s.top)
		slices.SortFunc(rs, func(a, b record) int { return bytes.Compare(a.key, b.key) })
		for _, r := range rs {
			if err := fn(r.value); err != nil {
				return err
			}
		}
		return nil
	}
	if len(s.runs) == 0 {
		s.sortHeld()
		for _, h := range s.held {
			if err := fn(s.value(h)); err != nil {
				return err
			}
		}
		return nil
	}
	size := s.mergeBuffer()
	fan := s.fanIn(size)
	if s.heldFits(size, fan) {
		s.sortHeld()
		return merge(s.runs, size, &heldSource{s: s}, func(r record) error { return fn(r.value) })
	}
	if len(s.held) > 0 {
		if err := s.spill(); err != nil {
			return err
		}
	}
	s.held = nil
	s.dropArena()
	for len(s.runs) > fan {
		group := s.runs[:fan]
		f, w, err := s.newRun(size)
		if err != nil {
			return err
		}
		err = merge(group, size, nil, func(r record) error { return writeRecord(w, r.key, r.value) })
		for _, g := range group {
			g.Close()
		}
		s.runs = s.runs[fan:]
		if err != nil {
			f.Close()
			return err
		}
		if err := s.endRun(f, w); err != nil {
			return err
		}
	}
	return merge(s.runs, size, nil, func(r record) error { return fn(r.value) })
}

// heldFits tells whether what is held can stay in memory through a merge
// with the runs: one pass (fewer runs than fan), and what the arena and
// the index hold on to — the arena's pages up to the most it was ever
// filled, the index's capacity — with a buffer of size for each run,
// within the budget.
func (s *Sorter) heldFits(size, fan int) bool {
	if len(s.held) == 0 || len(s.runs) >= fan {
		return false
	}
	arena := int64(max(s.peak, len(s.arena)))
	return arena+heldCost*int64(cap(s.held))+int64(len(s.runs))*int64(size) <= s.o.Memory
}

// merge calls fn with every record of the runs and of held (when not
// nil), in order, each run read through a buffer of size bytes from where
// it is.
func merge(runs []*os.File, size int, held source, fn func(record) error) error {
	m := &mergeHeap{}
	srcs := make([]source, 0, len(runs)+1)
	for _, f := range runs {
		srcs = append(srcs, &runSource{r: bufio.NewReaderSize(f, size)})
	}
	if held != nil {
		srcs = append(srcs, held)
	}
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
		if err := fn(it.r); err != nil {
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
	return nil
}

// Close closes the runs' files (already unlinked) and gives back the
// memory of what is held: call it however the sort ends, and not before
// the last value Each gave has been used.
func (s *Sorter) Close() {
	for _, f := range s.runs {
		f.Close()
	}
	s.runs = nil
	s.held = nil
	s.dropArena()
}

// source gives records in order; each is valid until the next is asked
// for.
type source interface {
	next() (record, bool, error)
}

// heldSource gives the records held, sorted, from the arena.
type heldSource struct {
	s *Sorter
	i int
}

func (h *heldSource) next() (record, bool, error) {
	if h.i == len(h.s.held) {
		return record{}, false, nil
	}
	r := h.s.held[h.i]
	h.i++
	return record{key: h.s.key(r), value: h.s.value(r)}, true, nil
}

// runSource reads a run's records in order; each record is valid until
// the next is read (its bytes are reused).
type runSource struct {
	r   *bufio.Reader
	buf []byte
}

func (s *runSource) next() (record, bool, error) {
	kl, err := binary.ReadUvarint(s.r)
	if errors.Is(err, io.EOF) {
		return record{}, false, nil
	}
	if err != nil {
		return record{}, false, err
	}
	vl, err := binary.ReadUvarint(s.r)
	if err != nil {
		return record{}, false, err
	}
	n := int(kl + vl)
	if cap(s.buf) < n {
		s.buf = make([]byte, n)
	}
	b := s.buf[:n]
	if _, err := io.ReadFull(s.r, b); err != nil {
		return record{}, false, err
	}
	return record{key: b[:kl], value: b[kl:]}, true, nil
}

type mergeItem struct {
	r   record
	src source
}

// mergeHeap is a min-heap of the sources' next records.
type mergeHeap struct{ items []mergeItem }

func (m *mergeHeap) Len() int           { return len(m.items) }
func (m *mergeHeap) Less(i, j int) bool { return bytes.Compare(m.items[i].r.key, m.items[j].r.key) < 0 }
func (m *mergeHeap) Swap(i, j int)      { m.items[i], m.items[j] = m.items[j], m.items[i] }
func (m *mergeHeap) Push(x any)         { m.items = append(m.items, x.(mergeItem)) }
func (m *mergeHeap) Pop() any {
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
