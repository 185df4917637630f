package ndjsontool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/tidwall/pretty"

	"github.com/agentry/agentry/lib/ndjson"
)

// fmtStyles are the ways fmt prints: every combination of its options.
func fmtStyles() []fmtStyle {
	var all []fmtStyle
	for _, indent := range []int{2, 0, 1, 4, 16} {
		for k := range 8 {
			all = append(all, fmtStyle{indent: indent, compact: k&1 != 0, sortKeys: k&2 != 0, color: k&4 != 0})
		}
	}
	return all
}

func (st fmtStyle) String() string {
	return fmt.Sprintf("indent=%d compact=%v sort=%v color=%v", st.indent, st.compact, st.sortKeys, st.color)
}

// fmtByPretty is what fmt printed for line before its own printer:
// tidwall/pretty's bytes; with SortKeys, of the line with its keys
// sorted by keysSorted, since pretty ordered a repeated key's members
// by value, and fmt keeps them in the order they came.
func fmtByPretty(line []byte, st fmtStyle) []byte {
	opts := &pretty.Options{Width: 0, Indent: strings.Repeat(" ", st.indent)}
	if st.sortKeys {
		line = keysSorted(nil, line)
	}
	return fmtPretty(nil, line, st, opts)
}

// keysSorted appends the valid JSON value at line[i:] compact, every
// object's members in the order of their keys' text, a repeated key's in
// the order they came (an order made apart from fmt's, with
// encoding/json's unescaping), and returns it and where the value ended.
func keysSorted(out, line []byte) []byte {
	out, _ = sortedValue(out, line, ndjson.SkipSpace(line, 0))
	return out
}

func sortedValue(out, line []byte, i int) ([]byte, int) {
	switch line[i] {
	case '[':
		out = append(out, '[')
		for i = ndjson.SkipSpace(line, i+1); line[i] != ']'; {
			if line[i] == ',' {
				out = append(out, ',')
				i = ndjson.SkipSpace(line, i+1)
			}
			out, i = sortedValue(out, line, i)
			i = ndjson.SkipSpace(line, i)
		}
		return append(out, ']'), i + 1
	case '{':
		type member struct {
			key  string
			text []byte // "key":value, compact
		}
		var ms []member
		for i = ndjson.SkipSpace(line, i+1); line[i] != '}'; {
			if line[i] == ',' {
				i = ndjson.SkipSpace(line, i+1)
			}
			kend, _ := ndjson.StringEnd(line, nil, i)
			var m member
			json.Unmarshal(line[i:kend], &m.key)
			m.text = append(append([]byte{}, line[i:kend]...), ':')
			i = ndjson.SkipSpace(line, ndjson.SkipSpace(line, kend)+1) // past the colon
			m.text, i = sortedValue(m.text, line, i)
			ms = append(ms, m)
			i = ndjson.SkipSpace(line, i)
		}
		sort.SliceStable(ms, func(a, b int) bool { return ms[a].key < ms[b].key })
		out = append(out, '{')
		for k, m := range ms {
			if k > 0 {
				out = append(out, ',')
			}
			out = append(out, m.text...)
		}
		return append(out, '}'), i + 1
	case '"':
		end, _ := ndjson.StringEnd(line, nil, i)
		return append(out, line[i:end]...), end
	}
	end := ndjson.ValueEnd(line, nil, i)
	return append(out, line[i:end]...), end
}

// fmtPretty appends what fmt printed for line with tidwall/pretty.
func fmtPretty(out, line []byte, sty fmtStyle, opts *pretty.Options) []byte {
	var b []byte
	switch {
	case sty.compact && sty.sortKeys:
		b = pretty.Ugly(pretty.PrettyOptions(line, opts))
	case sty.compact:
		b = pretty.Ugly(line)
	default:
		b = pretty.PrettyOptions(line, opts)
	}
	if sty.color {
		b = pretty.Color(b, nil)
	}
	out = append(out, b...)
	if len(b) == 0 || b[len(b)-1] != '\n' {
		out = append(out, '\n')
	}
	return out
}

// fmtByStream is the streaming printer's output, read size bytes at a time,
// from a printer that has printed other lines before (as Fmt's are).
func fmtByStream(line []byte, st fmtStyle, size int) []byte {
	p := newFmtPrinter([]byte(`{"b":{"y":[1,"\n",{"b":1,"a":2}],"x":{}},"a":[{"a":3,"a":{"c":[]}}]}`), st)
	for p.read(make([]byte, 7)) > 0 {
	}
	p.init(line, st)
	buf := make([]byte, size)
	var out []byte
	for {
		n := p.read(buf)
		if n == 0 {
			return out
		}
		out = append(out, buf[:n]...)
	}
}

// checkFmtStream holds the streaming printer to pretty's bytes for line in
// style st, and size to the exact length (a bound with colour).
func checkFmtStream(t *testing.T, line []byte, st fmtStyle, size int) {
	t.Helper()
	want := fmtByPretty(line, st)
	got := fmtByStream(line, st, size)
	var ck ndjson.Checker
	if ck.Check(line) == ndjson.Valid { // printed from the check's marks, as a verb prints it: the same bytes
		var p fmtPrinter
		p.initMarked(line, ck.Marks(), st)
		if marked := p.appendTo(nil); !bytes.Equal(marked, got) {
			t.Fatalf("%v, %q: from the marks %q, without %q", st, clip(line), clip(marked), clip(got))
		}
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("%v, %q (read %d at a time): differs from pretty at byte %d:\n got  %q\n want %q",
			st, clip(line), size, i, clip(got[max(0, i-40):]), clip(want[max(0, i-40):]))
	}
	n, w := st.size(line), len(want)
	if n < w || !st.color && !st.compact && n != w {
		t.Fatalf("%v, %q: size %d, output %d", st, clip(line), n, w)
	}
	if wst := st.worst(len(line)); wst < n {
		t.Fatalf("%v, %q: worst %d under size %d", st, clip(line), wst, n)
	}
}

func clip(b []byte) []byte {
	if len(b) > 200 {
		return b[:200]
	}
	return b
}

var fmtCases = []string{
	`{}`, `[]`, `{ }`, `[ ]`, `[{}]`, `[[]]`, `{"a":{}}`, `{"a":[]}`, `[{},[],{"a":[]}]`,
	`0`, `-0`, `1.5e10`, `1E-5`, `-12.34e+5`, `1e400`, `-1e400`, `123456789012345678901234567890`, `2.50`,
	`true`, `false`, `null`, `""`, `"x"`, ` 1 `, "\t[1 ,\r 2 ]\t",
	`{"b": [1, 2.50, "x"], "a": {"z": null, "y": true}}`,
	`["\"", "\\", "\/", "\b\f\n\r\t", "\u00e9\u2028", "\ud83d\ude80", "\ud800", "a\\\"b\\", "naïve 日本語 🚀"]`,
	`{"\"k\"": 1, "k\\": 2, "\u006b": 3, "k": 4}`,
	// duplicate keys: sorted, they stay in the order they came
	`{"a": 2, "a": 1, "a": 1.0, "a": -1e3}`,
	`{"a": "y", "a": "x", "a": "\u0078", "a": "\u0077"}`,
	`{"a": {}, "a": [], "a": null, "a": true, "a": false, "a": 0, "a": "", "a": {"x": 1}, "a": [1]}`,
	`{"a": [1], "a": [1, 2], "a": [1, 2], "a": [[1]], "a": [0, 3]}`,
	`{"a": [1, 2], "a": [1]}`,
	`{"a": {"x": 1, "b": 2}, "a": {"b": 2, "x": 0}, "a": {"b": [2]}}`,
	`{"a": [{"y": 1, "x": 2}], "a": [{"x": 2, "y": 0}]}`,
	`{"\u0061": 1, "a": 0, "b": {"d": 1, "c": {"f": 1, "e": 2}}}`,
	`{"a": [ {"b": 1} , {"b": 1 , "a": 2} ] , "a": [ {"b": 1} , {"a": 2 , "b": 1} ] }`,
	`[{"z":1,"y":2,"x":3},[{"k":"v","j":"w"}],"s",{"m":{"n":{"o":{}}}}]`,
}

func TestFmtStreamCases(t *testing.T) {
	for _, c := range fmtCases {
		if p := ndjson.Check([]byte(c)); p != ndjson.Valid {
			t.Fatalf("%q: %v", c, p)
		}
		for _, st := range fmtStyles() {
			for _, size := range []int{1, 3, 64 << 10} {
				checkFmtStream(t, []byte(c), st, size)
			}
		}
	}
}

// genJSON appends a random value of at most depth levels and about 4 KB:
// every kind, numbers in every form, strings with escapes and unicode,
// repeated keys, random white space.
func genJSON(b []byte, r *rand.Rand, depth int) []byte {
	return genValue(b, r, depth, len(b)+4096)
}

func genValue(b []byte, r *rand.Rand, depth, limit int) []byte {
	ws := func(b []byte) []byte {
		for r.IntN(4) == 0 {
			b = append(b, " \t\r\n"[r.IntN(4)])
		}
		return b
	}
	b = ws(b)
	k := r.IntN(10)
	if depth <= 0 || len(b) > limit {
		k = 2 + r.IntN(8)
	}
	switch k {
	case 0, 1:
		open, close := byte('['), byte(']')
		obj := k == 1
		if obj {
			open, close = '{', '}'
		}
		b = append(b, open)
		n := r.IntN(5)
		if r.IntN(3) == 0 {
			n = 0
		}
		for i := range n {
			if i > 0 {
				b = ws(b)
				b = append(b, ',')
			}
			if obj {
				b = ws(b)
				b = genString(b, r, true)
				b = ws(b)
				b = append(b, ':')
			}
			b = genValue(b, r, depth-1, limit)
		}
		b = ws(b)
		b = append(b, close)
	case 2, 3:
		b = genString(b, r, false)
	case 4, 5:
		b = append(b, []string{"0", "-0", "1", "-1", "2.50", "1e3", "1E+3", "-1.5e-7", "1e400", "-1e-400",
			"12345678901234567890", "0.1", "3", "10", "9.999", "1.0"}[r.IntN(16)]...)
	case 6:
		b = append(b, "true"...)
	case 7:
		b = append(b, "false"...)
	case 8:
		b = append(b, "null"...)
	case 9:
		b = fmt.Appendf(b, "%d", r.IntN(5))
	}
	return ws(b)
}

// genString appends a string: as a key, from a few names, so that keys
// repeat (some spelt with escapes).
func genString(b []byte, r *rand.Rand, key bool) []byte {
	if key {
		return append(b, []string{`"a"`, `"b"`, `"a"`, `"\u0061"`, `"B"`, `"é"`, `"\""`, `"a\\"`, `""`, `"k"`}[r.IntN(10)]...)
	}
	b = append(b, '"')
	for range r.IntN(6) {
		b = append(b, []string{"x", "y", `\"`, `\\`, `\/`, `\n`, `\t`, `\u00e9`, `\ud83d\ude80`, `\ud800`, "é", "日本", "🚀", " ", "\u2028", "{", "]", ",", ":"}[r.IntN(19)]...)
	}
	return append(b, '"')
}

func TestFmtStreamRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 14))
	n := 3000
	if testing.Short() {
		n = 300
	}
	styles := fmtStyles()
	for i := range n {
		line := genJSON(nil, r, 1+r.IntN(6))
		if p := ndjson.Check(line); p != ndjson.Valid {
			t.Fatalf("generated %q: %v", line, p)
		}
		checkFmtStream(t, line, styles[i%len(styles)], 1+r.IntN(100))
		checkFmtStream(t, line, styles[(i*7+3)%len(styles)], 64<<10)
	}
}

// A deep line: levels of arrays and objects, with members to sort at
// every level. (pretty sorts a level by copying all that is inside it, so
// the sorted line is shallower.)
func TestFmtStreamDeep(t *testing.T) {
	for _, st := range fmtStyles() {
		if st.indent > 2 {
			continue
		}
		depth := 1500
		if st.sortKeys {
			depth = 300
		}
		checkFmtStream(t, deepLine(depth), st, 32<<10)
	}
}

func deepLine(depth int) []byte {
	var b []byte
	for i := range depth {
		b = append(b, []string{`[1,`, `{"z":"\u00e9","a":`, `{"a":`}[i%3]...)
	}
	b = append(b, `{}`...)
	for i := depth - 1; i >= 0; i-- {
		b = append(b, []string{`]`, `,"a":{"b":[]}}`, `}`}[i%3]...)
	}
	return b
}

// Fmt itself: a line too big to hold is written between the others, in
// order, as pretty writes it.
func TestFmtDeferred(t *testing.T) {
	deep := strings.Repeat("[", 2000) + strings.Repeat("]", 2000)
	in := "{\"a\": 1}\n" + deep + "\n[1, 2]\n" + deep + "\n{\"b\": {\"c\": \"d\"}}\n"
	for _, st := range fmtStyles() {
		if st.indent != 2 {
			continue
		}
		if !st.compact {
			if n := st.size([]byte(deep)); n < 1<<20+fmtRatio*len(in) {
				t.Fatalf("%v: the deep line's output, %d bytes, would be held", st, n)
			}
		}
		var want bytes.Buffer
		for _, l := range strings.Split(strings.TrimSuffix(in, "\n"), "\n") {
			want.Write(fmtByPretty([]byte(l), st))
		}
		var out bytes.Buffer
		s := &Stream{In: strings.NewReader(in), Out: &out}
		if err := fmtHolding(context.Background(), s, FmtOptions{Compact: st.compact, Indent: st.indent, SortKeys: st.sortKeys, Color: st.color}, 1<<20); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), want.Bytes()) {
			t.Fatalf("%v: %d bytes, want %d", st, out.Len(), want.Len())
		}
	}
}

// Fmt over a stream of random lines, some of them held back to be printed
// when their chunk is written, is pretty's lines in order.
func TestFmtLines(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 15))
	var in []byte
	var lines [][]byte
	for range 1000 {
		l := genJSON(nil, r, 1+r.IntN(8))
		if r.IntN(50) == 0 {
			l = deepLine(100 + r.IntN(200))
		}
		l = bytes.ReplaceAll(l, []byte("\n"), []byte(" "))
		lines = append(lines, l)
		in = append(append(in, l...), '\n')
	}
	for _, st := range fmtStyles()[:16] {
		var want []byte
		for _, l := range lines {
			want = append(want, fmtByPretty(l, st)...)
		}
		for _, slack := range []int{fmtSlack, 0} {
			var out bytes.Buffer
			s := &Stream{In: bytes.NewReader(in), Out: &out}
			if err := fmtHolding(context.Background(), s, FmtOptions{Compact: st.compact, Indent: st.indent, SortKeys: st.sortKeys, Color: st.color}, slack); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Fatalf("%v, slack %d: %d bytes, want %d", st, slack, out.Len(), len(want))
			}
		}
	}
}

// FuzzFmtStream holds the streaming printer to pretty's bytes: the input
// is the line when it is valid JSON, else the seed of a random value; mode
// picks the style and the read size.
func FuzzFmtStream(f *testing.F) {
	for i, c := range fmtCases {
		f.Add([]byte(c), uint16(i))
	}
	f.Add([]byte("seed"), uint16(0))
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8}, uint16(77))
	styles := fmtStyles()
	f.Fuzz(func(t *testing.T, data []byte, mode uint16) {
		line := data
		if ndjson.Check(line) != ndjson.Valid {
			var seed [4]uint64
			for i, c := range data {
				seed[i/8%4] = seed[i/8%4]<<8 | uint64(c)
			}
			r := rand.New(rand.NewPCG(seed[0]^seed[2], seed[1]^seed[3]))
			line = genJSON(nil, r, 1+int(mode>>8)%12)
		}
		st := styles[int(mode)%len(styles)]
		checkFmtStream(t, line, st, 1+int(mode>>4)%300)
	})
}
