package ndjsontool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/agentry/agentry/lib/jsoncmp"
	"github.com/agentry/agentry/lib/ndjson"
)

// Census caps: memory stays bounded however many paths and values the
// input has. Past MaxPaths, values at new paths are counted as dropped (a
// map keyed by ids, say); past MaxDistinct, a path's distinct count is
// "at least"; examples are the first MaxExamples distinct scalars of at
// most exampleBytes.
const (
	MaxPaths     = 10000
	MaxDistinct  = 1000
	MaxExamples  = 3
	exampleBytes = 80
)

// CensusOptions are the options of schema.
type CensusOptions struct {
	JSON       bool // the census as NDJSON, one object per path
	JSONSchema bool // a draft 2020-12 JSON Schema every line conforms to
}

// JSON types as the census counts them: integer is a number written
// without a fraction or exponent.
const (
	tNull = iota
	tBoolean
	tInteger
	tNumber
	tString
	tArray
	tObject
	nTypes
)

var typeNames = [nTypes]string{"null", "boolean", "integer", "number", "string", "array", "object"}

// censusNode is what was seen at one path: at an object's member, at an
// array's elements ("path[]"), or at the line itself.
type censusNode struct {
	count    int64 // values seen here
	types    [nTypes]int64
	keys     []string // members, first seen first
	kids     map[string]*censusNode
	elem     *censusNode
	min, max []byte // numbers, exact text
	short    []byte // strings, by length in characters
	long     []byte
	shortN   int
	longN    int
	distinct map[string]struct{} // scalars' jsoncmp keys, up to MaxDistinct
	over     bool                // more distinct values than MaxDistinct
	examples [][]byte
}

// census is the tree of one chunk, or of the stream.
type census struct {
	root    censusNode
	paths   int
	dropped int64 // values at paths past MaxPaths
	scratch []byte
	keyBuf  []byte
	marks   ndjson.Marks // the line's being added
	// The line's objects and arrays, by where they begin (brackets), and
	// the members of the objects being added, a slice a depth.
	starts, ends, open []int
	members            [][]ndjson.Member
	depth              int
}

// Census prints a census of every path of every valid line: the types seen
// and how often, how often missing, number and string ranges, distinct
// values and examples; or it as NDJSON; or a JSON Schema of it.
func Census(ctx context.Context, st *Stream, o CensusOptions) error {
	total := &census{}
	sk, err := eachChunk(ctx, st, finding{}, func() *census { return &census{} },
		func(c *census, line []byte, lv lineView) *census {
			c.marks = lv.marks
			c.brackets(line)
			c.add(&c.root, line, ndjson.SkipSpace(line, 0))
			return c
		}, func(c *census, _ int64) error {
			total.merge(&total.root, &c.root)
			total.dropped += c.dropped
			return nil
		})
	if err != nil {
		return err
	}
	switch {
	case o.JSONSchema:
		err = total.printSchema(st)
	case o.JSON:
		err = total.printJSON(st)
	default:
		err = total.printText(st)
	}
	if err != nil {
		return err
	}
	if total.dropped > 0 {
		st.Voice.Notef("%d values at paths past the first %d were not described", total.dropped, MaxPaths)
	}
	return sk.report(st)
}

// child is n's node for key (or its elements' for elem), made when new;
// nil past the path cap.
func (c *census) child(n *censusNode, key []byte, elem bool) *censusNode {
	if elem {
		if n.elem == nil {
			if c.paths >= MaxPaths {
				return nil
			}
			c.paths++
			n.elem = &censusNode{}
		}
		return n.elem
	}
	if k := n.kids[str(key)]; k != nil {
		return k
	}
	if c.paths >= MaxPaths {
		return nil
	}
	c.paths++
	if n.kids == nil {
		n.kids = map[string]*censusNode{}
	}
	k := &censusNode{}
	n.kids[string(key)] = k
	n.keys = append(n.keys, string(key))
	return k
}

// brackets notes where each object and array of line ends, by where it
// begins: one pass, so that an object's members are found without
// walking their values once for each object around them.
func (c *census) brackets(line []byte) {
	c.starts, c.ends, c.open = c.starts[:0], c.ends[:0], c.open[:0]
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '"':
			end, _ := ndjson.StringEnd(line, c.marks, i)
			i = end - 1
		case '{', '[':
			c.open = append(c.open, len(c.starts))
			c.starts, c.ends = append(c.starts, i), append(c.ends, 0)
		case '}', ']':
			c.ends[c.open[len(c.open)-1]] = i + 1
			c.open = c.open[:len(c.open)-1]
		}
	}
}

// valueEnd is the index after the value at line[i].
func (c *census) valueEnd(line []byte, i int) int {
	if line[i] == '{' || line[i] == '[' {
		if k, ok := slices.BinarySearch(c.starts, i); ok {
			return c.ends[k]
		}
	}
	return ndjson.ValueEnd(line, c.marks, i)
}

// lastOfName maps each name of an object's members ms to its last
// member's index (escaped or not, by its text): for a wide object, where
// comparing each member with those after it would cost the square.
func lastOfName(line []byte, ms []ndjson.Member) map[string]int {
	last := make(map[string]int, len(ms))
	for k := range ms {
		last[string(ms[k].Key(line, nil))] = k
	}
	return last
}

// add counts the value at line[i] in n (nil: past the cap) and returns
// the index after it.
func (c *census) add(n *censusNode, line []byte, i int) int {
	start := i
	var t int
	switch ch := line[i]; {
	case ch == '{':
		t = tObject
		// The members first (each value skipped through the line's
		// brackets, not walked), on a slice of this depth's.
		c.depth++
		if len(c.members) < c.depth {
			c.members = append(c.members, nil)
		}
		ms := c.members[c.depth-1][:0]
		var more bool
		for i, more = ndjson.Into(line, i); more; i, more = ndjson.Past(line, i) {
			mb := ndjson.MemberAt(line, c.marks, i)
			ms = append(ms, mb)
			i = c.valueEnd(line, mb.Start)
		}
		i++
		// A name given twice counts once, by its last member: the one
		// every verb reads.
		var last map[string]int
		if len(ms) > 32 {
			last = lastOfName(line, ms)
		}
		for k, mb := range ms {
			if last != nil && last[string(mb.Key(line, nil))] != k || last == nil && ndjson.KeyIn(line, &ms[k], ms[k+1:]) {
				continue
			}
			var kid *censusNode
			if n != nil {
				key := mb.Key(line, c.scratch[:0])
				if mb.Escaped {
					c.scratch = key // unescaped there: kept for the next
				}
				kid = c.child(n, key, false)
			}
			c.add(kid, line, mb.Start)
		}
		c.members[c.depth-1] = ms[:0]
		c.depth--
	case ch == '[':
		t = tArray
		var e *censusNode
		var more bool
		if i, more = ndjson.Into(line, i); n != nil && more {
			e = c.child(n, nil, true)
		}
		for ; more; i, more = ndjson.Past(line, i) {
			i = c.add(e, line, i)
		}
		i++
	case ch == '"':
		t = tString
		i, _ = ndjson.StringEnd(line, c.marks, i)
	case ch == 't':
		t, i = tBoolean, i+4
	case ch == 'f':
		t, i = tBoolean, i+5
	case ch == 'n':
		t, i = tNull, i+4
	default:
		t = tInteger
		i = ndjson.ValueEnd(line, c.marks, i)
		if bytes.IndexAny(line[start:i], ".eE") >= 0 {
			t = tNumber
		}
	}
	if n == nil {
		if c.paths >= MaxPaths {
			c.dropped++
		}
		return i
	}
	n.count++
	n.types[t]++
	raw := line[start:i]
	switch t {
	case tInteger, tNumber:
		if n.min == nil || jsoncmp.CompareNumbers(raw, n.min) < 0 {
			n.min = append(n.min[:0], raw...)
		}
		if n.max == nil || jsoncmp.CompareNumbers(raw, n.max) > 0 {
			n.max = append(n.max[:0], raw...)
		}
	case tString:
		k := stringLen(raw, &c.scratch)
		if n.short == nil || k < n.shortN {
			n.short, n.shortN = append(n.short[:0], raw...), k
		}
		if n.long == nil || k > n.longN {
			n.long, n.longN = append(n.long[:0], raw...), k
		}
	}
	if t != tObject && t != tArray && !n.over {
		c.keyBuf = jsoncmp.AppendKey(c.keyBuf[:0], raw)
		n.note(raw, c.keyBuf)
	}
	return i
}

// stringLen is a string literal's length in characters.
func stringLen(raw []byte, scratch *[]byte) int {
	if bytes.IndexByte(raw, '\\') < 0 {
		return utf8.RuneCount(raw) - 2
	}
	*scratch = ndjson.AppendUnescaped((*scratch)[:0], raw, false)
	return utf8.RuneCount(*scratch)
}

// note counts a scalar, whose jsoncmp key is key, among the distinct
// values and the examples.
func (n *censusNode) note(raw, key []byte) {
	if _, ok := n.distinct[str(key)]; ok {
		return
	}
	if len(n.distinct) >= MaxDistinct {
		n.over = true
		return
	}
	if n.distinct == nil {
		n.distinct = map[string]struct{}{}
	}
	n.distinct[string(key)] = struct{}{}
	if len(n.examples) < MaxExamples && len(raw) <= exampleBytes {
		n.examples = append(n.examples, append([]byte(nil), raw...))
	}
}

// merge adds o, a later chunk's node, into n.
func (c *census) merge(n, o *censusNode) {
	n.count += o.count
	for t := range n.types {
		n.types[t] += o.types[t]
	}
	if o.min != nil && (n.min == nil || jsoncmp.CompareNumbers(o.min, n.min) < 0) {
		n.min = o.min
	}
	if o.max != nil && (n.max == nil || jsoncmp.CompareNumbers(o.max, n.max) > 0) {
		n.max = o.max
	}
	if o.short != nil && (n.short == nil || o.shortN < n.shortN) {
		n.short, n.shortN = o.short, o.shortN
	}
	if o.long != nil && (n.long == nil || o.longN > n.longN) {
		n.long, n.longN = o.long, o.longN
	}
	if !n.over {
		ex := o.examples
		for k := range o.distinct {
			if _, ok := n.distinct[k]; ok {
				continue
			}
			if len(n.distinct) >= MaxDistinct {
				n.over = true
				break
			}
			if n.distinct == nil {
				n.distinct = map[string]struct{}{}
			}
			n.distinct[k] = struct{}{}
		}
		for _, e := range ex {
			if len(n.examples) >= MaxExamples {
				break
			}
			dup := false
			for _, have := range n.examples {
				if jsoncmp.Equal(have, e) {
					dup = true
				}
			}
			if !dup {
				n.examples = append(n.examples, e)
			}
		}
		n.over = n.over || o.over
	}
	if o.elem != nil {
		if n.elem == nil {
			if c.paths >= MaxPaths {
				c.dropped += o.elem.count
			} else {
				c.paths++
				n.elem = &censusNode{}
			}
		}
		if n.elem != nil {
			c.merge(n.elem, o.elem)
		}
	}
	for _, k := range o.keys {
		kid := n.kids[k]
		if kid == nil {
			if c.paths >= MaxPaths {
				c.dropped += o.kids[k].count
				continue
			}
			c.paths++
			if n.kids == nil {
				n.kids = map[string]*censusNode{}
			}
			kid = &censusNode{}
			n.kids[k] = kid
			n.keys = append(n.keys, k)
		}
		c.merge(kid, o.kids[k])
	}
}

// pathKey writes a key as a path step: the characters that are path
// syntax escaped with a backslash (ndjson(1), Paths).
func pathKey(k string) string {
	var b strings.Builder
	for i, r := range k {
		switch {
		case r == '.' || r == '\\' || r == '*' || r == '?' || r == '|':
			b.WriteByte('\\')
		case i == 0 && (r == '#' || r == '@' || r == '[' || r == '{' || r == '!'):
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// censusRow is one path of the census, as --json prints it.
type censusRow struct {
	Path     string            `json:"path"`
	Count    int64             `json:"count"`
	Missing  *int64            `json:"missing,omitempty"`
	Types    map[string]int64  `json:"types"`
	Min      json.RawMessage   `json:"min,omitempty"`
	Max      json.RawMessage   `json:"max,omitempty"`
	Shortest json.RawMessage   `json:"shortest,omitempty"`
	Longest  json.RawMessage   `json:"longest,omitempty"`
	Distinct int               `json:"distinct"`
	More     bool              `json:"distinctCapped,omitempty"`
	Examples []json.RawMessage `json:"examples"`
}

// walk calls fn for n and every node under it, parents first, with its
// path and how many times it was missing (nil at the line and at array
// elements: an element is never missing).
func walk(n *censusNode, path string, missing *int64, fn func(path string, missing *int64, n *censusNode)) {
	fn(path, missing, n)
	for _, k := range n.keys {
		kid := n.kids[k]
		m := max(n.types[tObject]-kid.count, 0)
		p := pathKey(k)
		if path != "" {
			p = path + "." + p
		}
		walk(kid, p, &m, fn)
	}
	if n.elem != nil {
		walk(n.elem, path+"[]", nil, fn)
	}
}

func (n *censusNode) row(path string, missing *int64) censusRow {
	r := censusRow{Path: path, Count: n.count, Missing: missing, Types: map[string]int64{}, Distinct: len(n.distinct), More: n.over,
		Min: n.min, Max: n.max, Shortest: n.short, Longest: n.long, Examples: []json.RawMessage{}}
	for t, k := range n.types {
		if k > 0 {
			r.Types[typeNames[t]] = k
		}
	}
	for _, e := range n.examples {
		r.Examples = append(r.Examples, compact(e))
	}
	return r
}

func (c *census) printJSON(st *Stream) error {
	var b []byte
	var err error
	walk(&c.root, "", nil, func(path string, missing *int64, n *censusNode) {
		line, e := json.Marshal(n.row(path, missing))
		if e != nil && err == nil {
			err = e
		}
		b = append(append(b, line...), '\n')
	})
	if err != nil {
		return err
	}
	_, err = st.Out.Write(b)
	return err
}

func (c *census) printText(st *Stream) error {
	w := tabwriter.NewWriter(st.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "PATH\tCOUNT\tMISSING\tTYPES\tRANGE\tDISTINCT\tEXAMPLES")
	walk(&c.root, "", nil, func(path string, missing *int64, n *censusNode) {
		r := n.row(path, missing)
		if path == "" {
			path = "."
		}
		miss := "-"
		if missing != nil {
			miss = fmt.Sprint(*missing)
		}
		var types []string
		for t, k := range n.types {
			if k > 0 {
				types = append(types, fmt.Sprintf("%s %d", typeNames[t], k))
			}
		}
		var rng []string
		if n.min != nil {
			rng = append(rng, string(n.min)+".."+string(n.max))
		}
		if n.short != nil {
			rng = append(rng, fmt.Sprintf("len %d..%d", n.shortN, n.longN))
		}
		distinct := fmt.Sprint(r.Distinct)
		if n.distinct == nil && !r.More {
			distinct = "-" // no scalars here
		}
		if r.More {
			distinct = ">" + fmt.Sprint(MaxDistinct)
		}
		var ex []string
		for _, e := range r.Examples {
			ex = append(ex, string(e))
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", strings.NewReplacer("\t", `\t`, "\n", `\n`, "\r", `\r`).Replace(path), n.count, miss,
			strings.Join(types, ", "), or(strings.Join(rng, ", "), "-"), distinct, or(strings.Join(ex, " "), "-"))
	})
	return w.Flush()
}

// jsonSchema is the draft 2020-12 schema of what was seen at n: its types,
// an object's properties (required when never missing; others allowed, as
// the census may not have described them all), an array's items.
func (n *censusNode) jsonSchema() map[string]any {
	s := map[string]any{}
	var types []string
	for t, k := range n.types {
		if k == 0 || t == tInteger && n.types[tNumber] > 0 {
			continue
		}
		types = append(types, typeNames[t])
	}
	switch len(types) {
	case 0:
	case 1:
		s["type"] = types[0]
	default:
		s["type"] = types
	}
	if len(n.keys) > 0 {
		props := map[string]any{}
		var req []string
		for _, k := range n.keys {
			kid := n.kids[k]
			props[k] = kid.jsonSchema()
			if kid.count >= n.types[tObject] {
				req = append(req, k)
			}
		}
		s["properties"] = props
		if len(req) > 0 {
			s["required"] = req
		}
	}
	if n.elem != nil {
		s["items"] = n.elem.jsonSchema()
	}
	return s
}

func (c *census) printSchema(st *Stream) error {
	s := c.root.jsonSchema()
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil && strings.Contains(err.Error(), "exceeded max depth") {
		// JSON is read here 10000 levels deep at most, a line's schema
		// two levels for each of the line's (properties, the key).
		return &OptionError{Option: "--json-schema", Reason: "cannot describe lines nested 5000 levels or more: their schema would nest past the 10000 a schema is read back with (--json describes them)"}
	}
	if err != nil {
		return err
	}
	_, err = st.Out.Write(append(b, '\n'))
	return err
}
