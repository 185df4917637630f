package ndjsontool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"

	"github.com/agentry/agentry/lib/extsort"
	"github.com/agentry/agentry/lib/jsoncmp"
	"github.com/agentry/agentry/lib/ndjson"
)

// JoinOptions are join's.
type JoinOptions struct {
	Left, Right string // the key's path in the stream's lines and in File's
	// File is the other side, read first; FileName names it in reports.
	File     io.Reader
	FileName string
	KeepLeft bool   // write a stream line that matches nothing as it is
	As       string // nest File's line under this key, instead of merging
	// Memory bounds the lines held in the hash; past it, both sides
	// are sorted by key on disk (lib/extsort) and merged.
	Memory  int64
	TempDir string
	// StreamSize and FileSize are the two sides' sizes in bytes, -1 when
	// not known before they are read (a pipe). When both are known and
	// the stream is the smaller (and within half of Memory), it is the
	// side hashed (join_stream.go), with the same output.
	StreamSize, FileSize int64

	held *error // File's skipped lines under Strict, for the end (holdSkips)
}

// holdSkips holds File's report of skipped lines when Strict made it an
// error, for Join to return once the output is complete: --strict
// changes the exit status, never what is written. Another error is err.
func (o JoinOptions) holdSkips(err error) error {
	var se *SkippedError
	if errors.As(err, &se) {
		*o.held = err
		return nil
	}
	return err
}

// hashStream says whether the stream is the side to hash: when both sizes
// are known, the stream's is the smaller, and it would fit in its half of
// Memory. (A stream past that would go to disk where File might have been
// held whole; with both past Memory, either way sorts both.)
func (o JoinOptions) hashStream() bool {
	return o.StreamSize >= 0 && o.FileSize >= 0 && o.StreamSize < o.FileSize && o.StreamSize <= o.Memory/2
}

// fileStream is File, read as a stream whose reports name it.
func fileStream(st *Stream, o JoinOptions) *Stream {
	return &Stream{In: o.File, Out: io.Discard, Voice: st.Voice, MaxLine: st.MaxLine, Strict: st.Strict, Workers: st.Workers,
		Locate: func(line int64) (string, int64) { return o.FileName, line }}
}

// joinEntry is one of File's lines: its members are merged into a
// stream line at output.
type joinEntry []byte

// Join writes each valid line of the stream with each of File's lines
// whose value at Right equals the line's at Left (jsoncmp: the one number
// rule), File's members merged into it — a member of both takes File's
// value, where the stream line had it, the others added at its end — or,
// with As, File's whole line set at As. A line of either side without
// the key, or with null there, matches nothing; a stream line that is not
// an object matches nothing. File is hashed in memory, and the output
// is in the stream's order; when File is larger than Memory, both sides
// are sorted by key on disk and merged, and the output is put back in
// the stream's order by a third sort. When the stream is known to be the
// smaller side, it is hashed instead, File read once, and the output
// held (up to Memory, past it sorted on disk) to be written in the
// stream's order: the same lines in the same order.
func Join(ctx context.Context, st *Stream, o JoinOptions) error {
	var held error
	o.held = &held
	err := join(ctx, st, o)
	switch {
	case held == nil:
		return err
	case err == nil:
		return held
	}
	st.Voice.Error(held) // the stream's own error is the one returned
	return err
}

func join(ctx context.Context, st *Stream, o JoinOptions) error {
	if o.Memory <= 0 {
		o.Memory = extsort.DefaultMemory
	}
	if o.hashStream() {
		return joinStreamHashed(ctx, st, o)
	}
	hash := map[string][]joinEntry{}
	var held int64
	var spill *extsort.Sorter
	defer func() {
		if spill != nil {
			spill.Close()
		}
	}()
	err := eachFileLine(ctx, st, o, func(key, line []byte) error {
		if spill != nil {
			return spill.Add(key, keyed(nil, key, line))
		}
		hash[string(key)] = append(hash[string(key)], joinEntry(append([]byte(nil), line...)))
		held += int64(len(key)+len(line)) + 64
		if held <= o.Memory {
			return nil
		}
		spill = extsort.New(extsort.Options{Memory: o.Memory / 2, TempDir: o.TempDir, Prefix: "ndjson-join-"})
		for k, es := range hash {
			for _, e := range es {
				if err := spill.Add([]byte(k), keyed(nil, []byte(k), e)); err != nil {
					return err
				}
			}
		}
		hash = nil
		return nil
	})
	if err != nil {
		return err
	}
	if spill != nil {
		return joinSorted(ctx, st, o, spill)
	}
	lfp := parseFastPath(o.Left)
	sk, err := st.eachLine(ctx, finding{path: lfp}, func(out, line []byte, lv lineView) []byte {
		v := lv.found(line, o.Left, lfp)
		var matches []joinEntry
		if v.ok && v.raw[0] != 'n' && line[ndjson.SkipSpace(line, 0)] == '{' {
			matches = hash[str(jsoncmp.AppendKey(nil, v.raw))]
		}
		if len(matches) == 0 {
			if o.KeepLeft {
				out = append(append(out, line...), '\n')
			}
			return out
		}
		for _, m := range matches {
			out = append(mergeLine(out, line, lv.marks, m, nil, o.As), '\n')
		}
		return out
	})
	if err != nil {
		return err
	}
	return sk.report(st)
}

// mergeLine appends line with r merged in (or set at as). lm and rm are
// the lines' marks, or nil.
func mergeLine(out, line []byte, lm ndjson.Marks, r []byte, rm ndjson.Marks, as string) []byte {
	if as != "" {
		ed := edit{path: []string{as}, raw: r}
		res, ok := ed.apply(out, line, lm)
		if !ok {
			return append(out, line...)
		}
		return res
	}
	cur, m := line, lm
	var bufs [2][]byte
	var name []byte
	i := 0
	eachMember(r, rm, ndjson.SkipSpace(r, 0), func(mb ndjson.Member) {
		name = mb.Key(r, name[:0])
		ed := edit{path: []string{string(name)}, raw: r[mb.Start:mb.End]}
		if next, ok := ed.apply(bufs[i%2][:0], cur, m); ok {
			bufs[i%2] = next
			cur, m = next, nil
			i++
		}
	})
	return append(out, cur...)
}

// keyed is an extsort value that carries its key: the key's length, the
// key, then the payload (extsort gives back only values).
func keyed(prefix, key, payload []byte) []byte {
	v := binary.AppendUvarint(append([]byte(nil), prefix...), uint64(len(key)))
	return append(append(v, key...), payload...)
}

func unkeyed(v []byte) (key, payload []byte) {
	n, w := binary.Uvarint(v)
	return v[w : w+int(n)], v[w+int(n):]
}

// joinSorted joins when File did not fit in memory: File's lines are in
// right, sorted by key; the stream's lines are sorted by key too, each
// with its number, and the two merged, File's lines of one key held at a
// time; what the merge makes is sorted back into the stream's order.
func joinSorted(ctx context.Context, st *Stream, o JoinOptions, right *extsort.Sorter) error {
	budget := sortBudget(o)
	left := extsort.New(budget)
	defer left.Close()
	outs := extsort.New(budget)
	defer outs.Close()
	var seq uint64
	var addErr error
	sk, err := st.eachLineThen(ctx, finding{path: parseFastPath(o.Left)}, streamKeyFunc(o), func(framed []byte) []byte {
		for b := framed; len(b) > 0 && addErr == nil; {
			var key, line []byte
			key, b = unframe(b)
			line, b = unframe(b)
			seq++
			addErr = addSorted(o, left, outs, seq, key, line)
		}
		return nil
	})
	if err == nil {
		err = addErr
	}
	if err != nil {
		return err
	}
	if err := mergeSorted(o, left, right, outs); err != nil {
		return err
	}
	if err := writeSorted(st.Out, outs); err != nil {
		return err
	}
	return sk.report(st)
}

// sortBudget is what each of the sorts of joinSorted may hold.
func sortBudget(o JoinOptions) extsort.Options {
	return extsort.Options{Memory: max(o.Memory/4, 1<<20), TempDir: o.TempDir, Prefix: "ndjson-join-"}
}

// streamKeyFunc frames each stream line with its key (jsoncmp's), or an
// empty key when it has none: no value at Left, null there, or not an
// object.
func streamKeyFunc(o JoinOptions) lineFunc {
	lfp := parseFastPath(o.Left)
	return func(out, line []byte, lv lineView) []byte {
		v := lv.found(line, o.Left, lfp)
		start := len(out)
		out = binary.AppendUvarint(out, 0)
		keyAt := len(out)
		if v.ok && v.raw[0] != 'n' && line[ndjson.SkipSpace(line, 0)] == '{' {
			out = jsoncmp.AppendKey(out, v.raw)
		}
		out = frame(out, start, keyAt)
		out = binary.AppendUvarint(out, uint64(len(line)))
		return append(out, line...)
	}
}

// addSorted adds stream line seq (from 1) to the sort by key, left, or,
// without a key, to the output, outs, when KeepLeft keeps it.
func addSorted(o JoinOptions, left, outs *extsort.Sorter, seq uint64, key, line []byte) error {
	n := binary.BigEndian.AppendUint64(nil, seq)
	switch {
	case len(key) > 0:
		return left.Add(key, keyed(n, key, line))
	case o.KeepLeft:
		return outs.Add(n, line)
	}
	return nil
}

// mergeSorted walks left (the stream's lines by key, each with its
// number) and right (File's, by key) together, and adds to outs, under
// the stream line's number, each line joined, or kept by KeepLeft.
func mergeSorted(o JoinOptions, left, right *extsort.Sorter, outs *extsort.Sorter) error {
	// File's side is read from a goroutine, a record at a time, so the
	// two sorted sides can be walked together.
	rch := make(chan []byte, 64)
	stop := make(chan struct{})
	rerr := make(chan error, 1)
	go func() {
		defer close(rch)
		rerr <- right.Each(func(v []byte) error {
			select {
			case rch <- append([]byte(nil), v...):
				return nil
			case <-stop:
				return errStop
			}
		})
	}()
	next, more := <-rch
	var groupKey []byte
	var group [][]byte
	var merged []byte
	err := left.Each(func(v []byte) error {
		n, rest := v[:8], v[8:]
		key, line := unkeyed(rest)
		if groupKey == nil || string(groupKey) != string(key) {
			group = group[:0]
			groupKey = append(groupKey[:0], key...)
			for more {
				rk, rl := unkeyed(next)
				c := cmpBytes(rk, key)
				if c > 0 {
					break
				}
				if c == 0 {
					group = append(group, rl)
				}
				next, more = <-rch
			}
		}
		if len(group) == 0 {
			if o.KeepLeft {
				return outs.Add(n, line)
			}
			return nil
		}
		for _, r := range group {
			merged = mergeLine(merged[:0], line, nil, r, nil, o.As)
			if err := outs.Add(n, merged); err != nil {
				return err
			}
		}
		return nil
	})
	close(stop)
	for range rch {
	}
	if e := <-rerr; err == nil && e != nil && !errors.Is(e, errStop) {
		err = e
	}
	return err
}

// writeSorted writes outs's lines in their order.
func writeSorted(out io.Writer, outs *extsort.Sorter) error {
	w := bufio.NewWriterSize(out, 256<<10)
	err := outs.Each(func(line []byte) error {
		w.Write(line)
		return w.WriteByte('\n')
	})
	if err == nil {
		err = w.Flush()
	}
	return err
}

func cmpBytes(a, b []byte) int { return bytes.Compare(a, b) }

var errStop = errors.New("stop")
