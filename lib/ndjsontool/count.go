package ndjsontool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/agentry/agentry/lib/jsoncmp"
	"github.com/agentry/agentry/lib/ndjson"
	"github.com/tidwall/pretty"
)

// CountOptions are the options of count.
type CountOptions struct {
	Path string // group by the value here; empty counts lines
	JSON bool
}

// tally is one chunk's counts, and then the whole stream's.
type tally struct {
	lines   int64
	strs    map[string]*int64 // string values, by their text
	nums    map[float64]int64 // numbers a double holds exactly (jsoncmp.Double), by value: 1.10 and 1.1 are one
	numRaw  map[float64]string
	others  map[string]*int64 // other numbers, true, false, null, objects, arrays: by jsoncmp key
	shown   map[string]string // the JSON text of the first value of each key in others, compact
	missing int64
	scratch []byte
	run     runCounter
}

func newTally() *tally {
	return &tally{strs: map[string]*int64{}, nums: map[float64]int64{}, numRaw: map[float64]string{},
		others: map[string]*int64{}, shown: map[string]string{}}
}

// Count counts valid lines, or valid lines by the value at a path. Every
// line is validated, on every core.
func Count(ctx context.Context, st *Stream, o CountOptions) error {
	fp := parseFastPath(o.Path)
	all := newTally()
	var add func(t *tally, l []byte, lv lineView) *tally
	if o.Path != "" {
		add = func(t *tally, l []byte, lv lineView) *tally {
			t.add(lv.found(l, o.Path, fp))
			return t
		}
	}
	sk, err := eachChunk(ctx, st, finding{path: fp}, newTally, add, func(t *tally, valid int64) error {
		t.lines = valid
		all.merge(t)
		return nil
	})
	if err != nil {
		return err
	}
	if all.lines == 0 && st.unread() {
		return nil
	}
	if err := all.print(st, o); err != nil {
		return err
	}
	return sk.report(st)
}

func (t *tally) add(v value) {
	switch {
	case !v.ok:
		t.missing++
	case v.isString():
		text := v.raw[1 : len(v.raw)-1]
		if bytes.IndexByte(text, '\\') >= 0 {
			t.scratch = ndjson.AppendUnescaped(t.scratch[:0], v.raw, false)
			text = t.scratch
		}
		t.run.add(t.strs, text)
	case isNumber(v):
		if num, exact := jsoncmp.Double(v.raw); exact {
			if num == 0 {
				num = 0 // -0 is 0
			}
			if _, ok := t.numRaw[num]; !ok {
				t.numRaw[num] = string(v.raw)
			}
			t.nums[num]++
			return
		}
		fallthrough
	default:
		t.scratch = jsoncmp.AppendKey(t.scratch[:0], v.raw)
		if n := bump(t.others, str(t.scratch)); *n == 1 {
			raw := v.raw
			if raw[0] == '{' || raw[0] == '[' {
				raw = pretty.Ugly(raw)
			}
			t.shown[string(t.scratch)] = string(raw)
		}
	}
}

// bump counts k, which may point into a chunk's memory, and returns its
// count. The map is never assigned with k once it holds it: assigning to
// an existing string key replaces the stored key, which would then point
// into reused memory.
func bump(m map[string]*int64, k string) *int64 {
	if n, ok := m[k]; ok {
		*n++
		return n
	}
	n := int64(1)
	m[strings.Clone(k)] = &n
	return &n
}

// runCounter counts strings with bump, comparing each first with the few
// values counted last: a field counted by (a type, a level) tends to have
// a handful of values, and comparing a short string with each of them is
// cheaper than a map lookup.
type runCounter struct {
	recent [recentValues]struct {
		text []byte
		n    *int64
	}
	next int // the entry of recent to replace on a miss
}

const recentValues = 8

func (c *runCounter) add(m map[string]*int64, text []byte) {
	for k := range c.recent {
		if r := &c.recent[k]; r.n != nil && string(text) == string(r.text) {
			*r.n++
			return
		}
	}
	r := &c.recent[c.next]
	c.next = (c.next + 1) % recentValues
	r.n = bump(m, str(text))
	r.text = append(r.text[:0], text...)
}

func add(m map[string]*int64, k string, by int64) {
	if n, ok := m[k]; ok {
		*n += by
		return
	}
	m[k] = &by
}

func (t *tally) merge(o *tally) {
	t.lines += o.lines
	t.missing += o.missing
	for k, n := range o.strs {
		add(t.strs, k, *n)
	}
	for k, n := range o.nums {
		if _, ok := t.numRaw[k]; !ok {
			t.numRaw[k] = o.numRaw[k]
		}
		t.nums[k] += n
	}
	for k, n := range o.others {
		if _, ok := t.others[k]; !ok {
			t.shown[k] = o.shown[k]
		}
		add(t.others, k, *n)
	}
}

type group struct {
	json  string // the value as JSON
	text  string // the value as printed in text output: a cell (cell)
	count int64
	miss  bool
}

func (t *tally) groups() []group {
	var gs []group
	for k, n := range t.strs {
		b, _ := json.Marshal(k)
		gs = append(gs, group{json: string(b), text: stringCell(k), count: *n})
	}
	for k, n := range t.nums {
		gs = append(gs, group{json: t.numRaw[k], text: t.numRaw[k], count: n})
	}
	for k, n := range t.others {
		gs = append(gs, group{json: t.shown[k], text: t.shown[k], count: *n})
	}
	if t.missing > 0 {
		gs = append(gs, group{json: "null", text: "(missing)", count: t.missing, miss: true})
	}
	sort.Slice(gs, func(i, j int) bool {
		if gs[i].count != gs[j].count {
			return gs[i].count > gs[j].count
		}
		if gs[i].miss != gs[j].miss {
			return gs[j].miss
		}
		return gs[i].json < gs[j].json
	})
	return gs
}

func (t *tally) print(st *Stream, o CountOptions) error {
	var b []byte
	switch {
	case o.Path == "" && o.JSON, o.JSON && t.lines == 0:
		b = fmt.Appendf(b, "{\"count\":%d}\n", t.lines)
	case o.Path == "", t.lines == 0: // nothing selected is a count too: 0
		b = strconv.AppendInt(b, t.lines, 10)
		b = append(b, '\n')
	default:
		for _, g := range t.groups() {
			switch {
			case o.JSON && g.miss:
				b = fmt.Appendf(b, "{\"missing\":true,\"count\":%d}\n", g.count)
			case o.JSON:
				b = fmt.Appendf(b, "{\"value\":%s,\"count\":%d}\n", g.json, g.count)
			default:
				b = fmt.Appendf(b, "%d\t%s\n", g.count, g.text)
			}
		}
	}
	_, err := st.Out.Write(b)
	return err
}
