package ndjsontool

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"

	"github.com/agentry/agentry/lib/extsort"
	"github.com/agentry/agentry/lib/jsoncmp"
	"github.com/agentry/agentry/lib/ndjson"
)

// streamHash is the stream's lines, hashed by key, when the stream is the
// side hashed: line n of the stream (its valid lines, from 0) is lines[n],
// nil when it is not needed (no key, and KeepLeft does not keep it). The
// lines of one key are a chain: head[key] is the last's number plus one,
// and prev[n] the number plus one of the one before it, 0 ending the
// chain; a kept line without a key has prev -1.
type streamHash struct {
	lines [][]byte
	prev  []int64
	head  map[string]int64
	slab  slab
	held  int64
}

// add holds line n: with its key, or kept without one.
func (h *streamHash) add(key, line []byte, keep bool) {
	n := int64(len(h.lines))
	switch {
	case len(key) > 0:
		h.lines = append(h.lines, h.slab.copy(line))
		h.prev = append(h.prev, h.head[string(key)])
		h.head[string(key)] = n + 1
		h.held += int64(len(key)+len(line)) + 64
	case keep:
		h.lines = append(h.lines, h.slab.copy(line))
		h.prev = append(h.prev, -1)
		h.held += int64(len(line))
	default:
		h.lines = append(h.lines, nil)
		h.prev = append(h.prev, 0)
	}
	h.held += 32
}

// slab copies small byte slices into large blocks, an allocation a block
// instead of one a slice.
type slab struct{ block []byte }

func (s *slab) copy(b []byte) []byte {
	if cap(s.block)-len(s.block) < len(b) {
		s.block = make([]byte, 0, max(1<<20, len(b)))
	}
	at := len(s.block)
	s.block = append(s.block, b...)
	return s.block[at:len(s.block):len(s.block)]
}

// heldOutput is what the join makes with the stream hashed, in File's
// order, each line under the number of the stream line it belongs to:
// held in memory up to budget, past it moved to a sort by that number on
// disk.
type heldOutput struct {
	recs   []outRec
	slab   slab
	held   int64
	budget int64
	sorted *extsort.Sorter // once past budget
	opts   extsort.Options
}

type outRec struct {
	n    int64
	line []byte
}

func (h *heldOutput) add(n int64, line []byte) error {
	var key [8]byte
	if h.sorted != nil {
		binary.BigEndian.PutUint64(key[:], uint64(n))
		return h.sorted.Add(key[:], line)
	}
	h.recs = append(h.recs, outRec{n, h.slab.copy(line)})
	h.held += int64(len(line)) + 48
	if h.held <= h.budget {
		return nil
	}
	h.sorted = extsort.New(h.opts)
	for _, r := range h.recs {
		binary.BigEndian.PutUint64(key[:], uint64(r.n))
		if err := h.sorted.Add(key[:], r.line); err != nil {
			return err
		}
	}
	h.recs, h.slab = nil, slab{}
	return nil
}

// joinStreamHashed is Join with the stream hashed, File read once: for a
// stream smaller than File. The output, made in File's order, is held and
// written in the stream's order, a line's joins in File's order — as Join
// with File hashed writes them. Past half of Memory, the stream's lines
// go to a sort by key on disk instead, File's too, and the two are merged
// (joinSorted's way); the output is held in half of what is left of
// Memory, past which it is sorted on disk, by the stream line's number,
// in the other half.
func joinStreamHashed(ctx context.Context, st *Stream, o JoinOptions) error {
	h := &streamHash{head: map[string]int64{}}
	var left, outs *extsort.Sorter
	defer func() {
		if left != nil {
			left.Close()
			outs.Close()
		}
	}()
	var seq uint64 // the stream's valid lines so far
	var addErr error
	sk, err := st.eachLineThen(ctx, finding{path: parseFastPath(o.Left)}, streamKeyFunc(o), func(framed []byte) []byte {
		for b := framed; len(b) > 0 && addErr == nil; {
			var key, line []byte
			key, b = unframe(b)
			line, b = unframe(b)
			seq++
			if left != nil {
				addErr = addSorted(o, left, outs, seq, key, line)
				continue
			}
			h.add(key, line, o.KeepLeft)
			if h.held > o.Memory/2 {
				left, outs = extsort.New(sortBudget(o)), extsort.New(sortBudget(o))
				addErr = h.spill(o, left, outs)
			}
		}
		return nil
	})
	if err == nil {
		err = addErr
	}
	if err != nil {
		return err
	}
	if left != nil {
		err = joinSpilledStream(ctx, st, o, left, outs)
	} else {
		err = joinHashedStream(ctx, st, o, h)
	}
	if err != nil {
		return err
	}
	return sk.report(st)
}

// spill moves the lines held to the sorts joinSorted makes: by key, and
// (a line without a key that KeepLeft keeps) to the output; the hash is
// of no more use.
func (h *streamHash) spill(o JoinOptions, left, outs *extsort.Sorter) error {
	for n, line := range h.lines {
		if line == nil {
			continue
		}
		if h.prev[n] == -1 {
			if err := addSorted(o, left, outs, uint64(n)+1, nil, line); err != nil {
				return err
			}
		}
	}
	var key []byte
	for k, i := range h.head {
		key = append(key[:0], k...)
		for ; i > 0; i = h.prev[i-1] {
			if err := addSorted(o, left, outs, uint64(i), key, h.lines[i-1]); err != nil {
				return err
			}
		}
	}
	h.lines, h.prev, h.head, h.slab = nil, nil, nil, slab{}
	return nil
}

// joinSpilledStream is joinStreamHashed past Memory: the stream's lines
// are in left by key (and in outs, those KeepLeft keeps without one);
// File's go to a sort by key, and the two are merged.
func joinSpilledStream(ctx context.Context, st *Stream, o JoinOptions, left, outs *extsort.Sorter) error {
	right := extsort.New(sortBudget(o))
	defer right.Close()
	if err := eachFileLine(ctx, st, o, func(key, line []byte) error { return right.Add(key, keyed(nil, key, line)) }); err != nil {
		return err
	}
	if err := mergeSorted(o, left, right, outs); err != nil {
		return err
	}
	return writeSorted(st.Out, outs)
}

// joinHashedStream reads File, joining each of its lines with the stream's
// lines of its key (in the workers: the hash is only read), and writes
// what it made in the stream's order.
func joinHashedStream(ctx context.Context, st *Stream, o JoinOptions, h *streamHash) error {
	// What the hash left of Memory, half to hold the output in, half for
	// the sort it goes to past that (the two are held at once while it
	// moves).
	rest := (o.Memory - h.held) / 2
	outs := &heldOutput{budget: rest, opts: extsort.Options{Memory: max(rest, 1<<20), TempDir: o.TempDir, Prefix: "ndjson-join-"}}
	defer func() {
		if outs.sorted != nil {
			outs.sorted.Close()
		}
	}()
	matched := make([]bool, len(h.lines))
	rfp := parseFastPath(o.Right)
	file := fileStream(st, o)
	var addErr error
	rsk, err := file.eachLineThen(ctx, finding{path: rfp}, func(out, line []byte, lv lineView) []byte {
		v := lv.found(line, o.Right, rfp)
		if !v.ok || v.raw[0] == 'n' || line[ndjson.SkipSpace(line, 0)] != '{' && o.As == "" {
			return out
		}
		k := jsoncmp.AppendKey(out, v.raw)
		i := h.head[string(k[len(out):])]
		out = k[:len(out)]
		for ; i > 0; i = h.prev[i-1] {
			start := len(out)
			out = binary.BigEndian.AppendUint64(out, uint64(i-1))
			out = binary.BigEndian.AppendUint64(out, 0)
			out = mergeLine(out, h.lines[i-1], nil, line, lv.marks, o.As)
			binary.BigEndian.PutUint64(out[start+8:], uint64(len(out)-start-16))
		}
		return out
	}, func(framed []byte) []byte {
		for b := framed; len(b) > 0 && addErr == nil; {
			n := int64(binary.BigEndian.Uint64(b))
			size := binary.BigEndian.Uint64(b[8:])
			matched[n] = true
			addErr = outs.add(n, b[16:16+size])
			b = b[16+size:]
		}
		return nil
	})
	if err == nil {
		err = addErr
	}
	if err != nil {
		return err
	}
	if err := o.holdSkips(rsk.report(file)); err != nil {
		return err
	}
	if outs.sorted != nil {
		if o.KeepLeft {
			for n, line := range h.lines {
				if line != nil && !matched[n] {
					if err := outs.add(int64(n), line); err != nil {
						return err
					}
				}
			}
		}
		return writeSorted(st.Out, outs.sorted)
	}
	return writeHeld(st.Out, o, h, outs.recs, matched)
}

// writeHeld writes the output held, put in the stream's order by a
// counting sort (stable: a line's joins stay in File's order), and the
// lines KeepLeft keeps in their places.
func writeHeld(out io.Writer, o JoinOptions, h *streamHash, recs []outRec, matched []bool) error {
	at := make([]int, len(h.lines)+1)
	for _, r := range recs {
		at[r.n+1]++
	}
	for n := 1; n < len(at); n++ {
		at[n] += at[n-1]
	}
	order := make([][]byte, len(recs))
	next := append([]int(nil), at[:len(at)-1]...)
	for _, r := range recs {
		order[next[r.n]] = r.line
		next[r.n]++
	}
	w := bufio.NewWriterSize(out, 256<<10)
	for n, line := range h.lines {
		if at[n] == at[n+1] {
			if o.KeepLeft && line != nil && !matched[n] {
				w.Write(line)
				w.WriteByte('\n')
			}
			continue
		}
		for _, l := range order[at[n]:at[n+1]] {
			w.Write(l)
			w.WriteByte('\n')
		}
	}
	return w.Flush()
}

// eachFileLine reads File through the workers and hands add each of its
// lines that has a key (fileKeyFunc), in File's order, until add fails;
// then it reports File's skipped lines.
func eachFileLine(ctx context.Context, st *Stream, o JoinOptions, add func(key, line []byte) error) error {
	file := fileStream(st, o)
	var addErr error
	sk, err := file.eachLineThen(ctx, finding{path: parseFastPath(o.Right)}, fileKeyFunc(o), func(framed []byte) []byte {
		for b := framed; len(b) > 0 && addErr == nil; {
			var key, line []byte
			key, b = unframe(b)
			line, b = unframe(b)
			addErr = add(key, line)
		}
		return nil
	})
	if err == nil {
		err = addErr
	}
	if err != nil {
		return err
	}
	return o.holdSkips(sk.report(file))
}

// fileKeyFunc frames each of File's lines that can match with its key:
// those with a value at Right, not null, and (but with As) objects.
func fileKeyFunc(o JoinOptions) lineFunc {
	rfp := parseFastPath(o.Right)
	return func(out, line []byte, lv lineView) []byte {
		v := lv.found(line, o.Right, rfp)
		if !v.ok || v.raw[0] == 'n' || line[ndjson.SkipSpace(line, 0)] != '{' && o.As == "" {
			return out
		}
		start := len(out)
		out = binary.AppendUvarint(out, 0)
		keyAt := len(out)
		out = jsoncmp.AppendKey(out, v.raw)
		out = frame(out, start, keyAt)
		out = binary.AppendUvarint(out, uint64(len(line)))
		return append(out, line...)
	}
}
