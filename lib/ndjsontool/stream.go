// Package ndjsontool is the ndjson program's verbs, over streams of
// newline-delimited JSON: get, pick, csv, tsv, uniq, sort, stats, where,
// make, check, fmt, count, schema, set, del, join and split;
// lib/ndjsoncmd holds their grammar, and words their typed errors.
//
// Every verb but make reads its input with lib/ndjson's framing, in
// chunks spread over the machine's cores, and checks every line with
// lib/ndjson's scanner, which finds on its way the values the verb asks
// for; a verb that walks a line itself (set, del, join's merge, schema,
// fmt, the duplicate keys dropped for gjson's paths) takes lib/ndjson's
// steps over the checked line. The verbs that print lines or values (get, pick,
// csv, tsv, where, fmt, uniq, set, del) write each chunk's output with one
// write, in input order — so output is as prompt as the input on a pipe,
// and nothing is held beyond a few chunks whatever the stream's size (uniq
// also keeps the keys it has seen); split writes each line to the file of
// its value as it comes. join hashes one side by its key: FILE, and then
// prints as the stream comes; or the stream, when it is known to be the
// smaller, and then holds what FILE joins to print it in the stream's
// order. The others print when the stream ends (check reports each
// problem as it goes, then its tallies): count and stats hold a row per
// group, schema a census of the paths it has seen, sort the lines. What
// sort and join hold is bounded by their memory budget, past which
// lib/extsort spills it to disk. A malformed line is never printed,
// counted or matched as if it were valid: it is skipped, counted, and
// reported once at the end.
package ndjsontool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
	"unsafe"

	"github.com/agentry/agentry/lib/ndjson"
)

// Stream is what every streaming verb reads from and writes to.
type Stream struct {
	In      io.Reader
	Out     io.Writer
	Voice   Voice // the end-of-stream report, on stderr
	MaxLine int   // line cap in bytes; 0 means ndjson.DefaultMaxLine
	Strict  bool  // a skipped line makes the verb fail (exit 1)
	Workers int   // 0 means one per core
	// Locate, when set, names the file and its line that a line of In
	// is (In being several files: lib/operands); reports then say
	// FILE:LINE.
	Locate func(line int64) (file string, fileLine int64)
	// Time, when set, reads each line's time and passes on only the lines
	// in its window (timewindow.go).
	Time *TimeWindow
	// Unread, when set, says whether every file of the input failed to
	// open or read (each was reported): a verb that prints a summary
	// (count, stats, check) then prints none when it saw no line, since
	// a count of nothing read would read as a count of empty input.
	Unread func() bool
}

// unread says whether none of the input could be read (Unread).
func (st *Stream) unread() bool { return st.Unread != nil && st.Unread() }

// at says where line of the stream is: "line N", or "FILE:N" when the
// stream is files.
func (st *Stream) at(line int64) string {
	if st.Locate != nil {
		if f, n := st.Locate(line); f != "" {
			return fmt.Sprintf("%s:%d", f, n)
		}
	}
	return fmt.Sprintf("line %d", line)
}

// skips counts the lines a verb could not use.
type skips struct {
	malformed      int64
	firstMalformed int64 // line number
	// pretty: the first line is malformed and opens a document ({ or [
	// alone): the input is likely one JSON value over many lines.
	pretty        bool
	long          int64
	firstLong     int64
	firstLongSize int64
	badTime       int64 // lines whose time (Stream.Time) could not be read
	firstBadTime  int64
}

func (s *skips) addLong(line, size int64) {
	if s.long == 0 {
		s.firstLong, s.firstLongSize = line, size
	}
	s.long++
}

// report prints the end-of-stream summary of skipped lines and, under
// --strict, turns any into a failure.
func (s *skips) report(st *Stream) error {
	if s.malformed == 0 && s.long == 0 && s.badTime == 0 {
		return nil
	}
	var msgs []string
	if s.malformed > 0 {
		msgs = append(msgs, fmt.Sprintf("skipped %d malformed %s (first at %s)", s.malformed, plural(s.malformed, "line"), st.at(s.firstMalformed)))
	}
	if s.long > 0 {
		msgs = append(msgs, fmt.Sprintf("skipped %d %s over the %s line cap (first at %s, %d bytes)",
			s.long, plural(s.long, "line"), capText(st.maxLine()), st.at(s.firstLong), s.firstLongSize))
	}
	if s.badTime > 0 {
		msgs = append(msgs, fmt.Sprintf("skipped %d %s whose time at %s could not be read (first at %s)",
			s.badTime, plural(s.badTime, "line"), st.Time.Path, st.at(s.firstBadTime)))
	}
	if st.Strict {
		for i, m := range msgs {
			if i == len(msgs)-1 {
				return &SkippedError{Malformed: s.malformed, Long: s.long, BadTime: s.badTime, msg: m}
			}
			st.Voice.Error(errors.New(m))
		}
	}
	for _, m := range msgs {
		st.Voice.Notef("%s", m)
	}
	if s.pretty {
		st.Voice.Notef("%s", prettyHint)
	}
	return nil
}

// prettyHint is said when the input's first line opens a JSON document
// alone: pretty-printed JSON, one value over many lines, not NDJSON.
const prettyHint = "the input looks like one JSON document over many lines (pretty-printed), not a value a line: jq -c . puts it on one line, jq -c '.[]' an array's elements one a line"

// opensDocument reports whether a line is only the opening of an object
// or an array: pretty-printed JSON's first line.
func opensDocument(l []byte) bool {
	t := bytes.TrimSpace(l)
	return len(t) == 1 && (t[0] == '{' || t[0] == '[')
}

// capText names a line cap as the command line's sizes are written, in
// the largest binary unit that divides it: "64MiB", or "100-byte".
func capText(n int) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.Itoa(n>>u.shift) + u.name
		}
	}
	return strconv.Itoa(n) + "-byte"
}

func plural(n int64, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func (st *Stream) maxLine() int {
	if st.MaxLine <= 0 {
		return ndjson.DefaultMaxLine
	}
	return st.MaxLine
}

// lineFunc handles one valid line and appends its output to out.
type lineFunc func(out, line []byte, lv lineView) []byte

// lineView is what the check of a line leaves for the verb.
type lineView struct {
	// marks is the line's bitmap of string stops (nil when it has none),
	// for lookups to find string ends from.
	marks ndjson.Marks
	// where is where the check found the path it was asked to find.
	where ndjson.Where
	// members are the members of the line's object, when the check was
	// asked to gather them and the line is one (object).
	members []ndjson.Member
	object  bool
	// wheres are where the check found each of the paths it was asked to
	// find (finding.paths), in one walk of the line.
	wheres []ndjson.Where
	// time is the line's time, when the stream has a time window.
	time time.Time
}

// finding is what the check of each line should find on its way: the
// value at one path (found), or the members of the line's object, for
// getAll; or neither.
type finding struct {
	path    fastPath
	members bool
	paths   []fastPath // several paths, each found on the one walk (nil: looked up after)
}

// found is get for the path the check was asked to find: its answer, when
// the check could tell.
func (lv lineView) found(line []byte, path string, fp fastPath) value {
	switch lv.where.State {
	case ndjson.Present:
		return value{line[lv.where.Start:lv.where.End], true}
	case ndjson.Absent:
		return value{}
	}
	return get(line, lv.marks, path, fp)
}

// foundAt is found for path k of finding.paths.
func (lv lineView) foundAt(k int, line []byte, path string, fp fastPath) value {
	if k < len(lv.wheres) {
		switch w := lv.wheres[k]; w.State {
		case ndjson.Present:
			return value{line[w.Start:w.End], true}
		case ndjson.Absent:
			return value{}
		}
	}
	return get(line, lv.marks, path, fp)
}

// eachLine checks every line of the stream, runs fn over each valid one,
// and writes the output in order; it returns what was skipped. find is
// what the check should find on its way through each line (see
// lineView.found and paths.getAll): the verb's main path or its fields, so
// that finding them costs almost nothing.
func (st *Stream) eachLine(ctx context.Context, find finding, fn lineFunc) (*skips, error) {
	return st.eachLineThen(ctx, find, fn, nil)
}

// eachLineThen is eachLine with then applied to each chunk's output, in
// input order, before it is written: for a verb whose output depends on
// the lines before (uniq).
func (st *Stream) eachLineThen(ctx context.Context, find finding, fn lineFunc, then func([]byte) []byte) (*skips, error) {
	pool := make(chan []byte, 16)
	return eachChunk(ctx, st, find, func() []byte {
		select {
		case out := <-pool:
			return out
		default:
			return nil
		}
	}, fn, func(out []byte, _ int64) error {
		written := out
		if then != nil {
			written = then(out) // its own buffer: out goes back to the pool
		}
		if len(written) > 0 {
			if _, err := st.Out.Write(written); err != nil {
				return err
			}
		}
		if cap(out) <= 4<<20 {
			select {
			case pool <- out[:0]:
			default:
			}
		}
		return nil
	})
}

// chunkResult is one chunk's: acc, what the verb made of its valid lines;
// how many lines it held, how many were valid, and which were malformed.
type chunkResult[A any] struct {
	acc       A
	lines     int64 // every line, blank and bad included
	valid     int64
	malformed int64
	firstBad  int64 // index within the chunk, from 1
	opensDoc  bool  // the first bad line opens a document ({ or [ alone)
	skipped   *ndjson.Skipped
	badTime   int64 // valid lines whose time could not be read
	firstTime int64 // the first's index within the chunk, from 1
}

// bitmaps hands the bitmap a chunk's checker grew on to the checker of a
// chunk after. A checker made per chunk grew one anew for every chunk: on
// the deep corpus that was most of what a run allocated, memory that grew
// the heap a page at a time (a first touch costs ~10 µs on a VM) and that
// the collector then ran to take back. Only the bitmap is handed on, not
// the checker: the rest of a checker is written at every line, and kept
// from one worker's chunk to another's it cost dense's stats 1.06-1.08x
// its time.
type bitmaps chan ndjson.Marks

func newBitmaps(workers int) bitmaps { return make(bitmaps, max(workers, 1)+2) }

// get is a bitmap to start from, or nil.
func (b bitmaps) get() ndjson.Marks {
	select {
	case m := <-b:
		return m
	default:
		return nil
	}
}

// put keeps m for a later chunk, unless enough are kept.
func (b bitmaps) put(m ndjson.Marks) {
	if m == nil {
		return
	}
	select {
	case b <- m:
	default:
	}
}

// eachChunk is the loop of every verb that goes line by line: it reads the
// stream in chunks, spread over the workers, each of which checks every
// line of its chunk and hands each valid one (with what the check found,
// see finding) to line, which adds it to the chunk's accumulator, made by
// start; done is given each chunk's accumulator and count of valid lines,
// in input order. It returns what was skipped.
func eachChunk[A any](ctx context.Context, st *Stream, find finding, start func() A, line func(acc A, l []byte, lv lineView) A, done func(acc A, valid int64) error) (*skips, error) {
	c := ndjson.NewChunker(st.In, st.MaxLine)
	var sk skips
	var at int64 // lines before the chunk
	bitmaps := newBitmaps(st.Workers)
	err := ndjson.Each(ctx, c, st.Workers, func(ch *ndjson.Chunk) chunkResult[A] {
		r := chunkResult[A]{acc: start()}
		var ck ndjson.Checker
		ck.GiveBitmap(bitmaps.get())
		var wheres []ndjson.Where
		var paths [][]string
		if len(find.paths) > 0 {
			wheres = make([]ndjson.Where, len(find.paths))
			for _, fp := range find.paths {
				paths = append(paths, fp)
			}
		}
		for rest := ch.Data; len(rest) > 0; {
			var l []byte
			l, rest = ndjson.Cut(rest)
			r.lines++
			if ndjson.SkipSpace(l, 0) == len(l) { // blank
				continue
			}
			var lv lineView
			var p ndjson.Problem
			switch {
			case paths != nil:
				p, lv.wheres = ck.FindAll(l, paths, wheres), wheres
			case find.members:
				p, lv.members, lv.object = ck.Index(l)
			case find.path != nil:
				p, lv.where = ck.Find(l, find.path)
			default:
				p = ck.Check(l)
			}
			if p != ndjson.Valid {
				if r.malformed == 0 {
					r.firstBad, r.opensDoc = r.lines, opensDocument(l)
				}
				r.malformed++
				continue
			}
			if tw := st.Time; tw != nil {
				lv.marks = ck.Marks()
				t, how := tw.read(l, lv)
				if how == timeNone {
					continue
				}
				if how == timeBad {
					if r.badTime == 0 {
						r.firstTime = r.lines
					}
					r.badTime++
					continue
				}
				if !tw.holds(t) {
					continue
				}
				lv.time = t
			}
			r.valid++ // and in the window
			if line != nil {
				lv.marks = ck.Marks()
				r.acc = line(r.acc, l, lv)
			}
		}
		r.skipped = ch.Skipped
		bitmaps.put(ck.TakeBitmap())
		return r
	}, func(ch *ndjson.Chunk, r chunkResult[A]) error {
		c.Release(ch)
		if r.malformed > 0 {
			if sk.malformed == 0 {
				sk.firstMalformed = at + r.firstBad
				sk.pretty = r.opensDoc && sk.firstMalformed == 1
			}
			sk.malformed += r.malformed
		}
		if r.badTime > 0 {
			if sk.badTime == 0 {
				sk.firstBadTime = at + r.firstTime
			}
			sk.badTime += r.badTime
		}
		at += r.lines
		if r.skipped != nil {
			at++
			sk.addLong(at, r.skipped.Size)
		}
		return done(r.acc, r.valid)
	})
	return &sk, err
}

// str views b as a string without copying; the string must not outlive b.
func str(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
