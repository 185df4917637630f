package ndjsontool

// fmt's printer. It makes the bytes fmt printed with tidwall/pretty
// (PrettyOptions with Width 0, the indent and SortKeys; Ugly for compact;
// Color for colour), a piece at a time, from the line itself: so a line
// whose output is far larger than it (a deeply nested line's indentation
// grows as the square of its depth: 20 KB of nested arrays pretty-print
// to 200 MB) can be written through a small buffer instead of being held,
// and no option costs a copy of the output (pretty's sorting copied all
// that was inside an object at each level of it). fmt_test.go holds it to
// pretty's bytes.
//
// With SortKeys, an object's members are in the order of their keys' text
// (unescaped, byte by byte), as pretty orders them; every member is kept,
// a repeated key's in the order they came, so that the last is still the
// one that counts. (pretty ordered those by value: fmt no longer does.)

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"

	"github.com/tidwall/pretty"

	"github.com/agentry/agentry/lib/ndjson"
)

// fmtStyle is how fmt prints a line.
type fmtStyle struct {
	indent   int // spaces per level
	compact  bool
	sortKeys bool
	color    bool
}

// The printer's states.
const (
	fpValue  = iota // a value begins at pos (after any space)
	fpNext          // the value before has ended: the innermost container's next element, or its end
	fpColon         // a key has been printed: its colon, then the value
	fpString        // a string in colour, from spos
	fpEnd           // the line's value has ended
	fpDone
)

// fmtPrinter prints one valid line as fmt does. Its memory is its stack
// (one frame per level, at most ndjson.MaxDepth) and, with sorted keys,
// where each object's members begin (fmtOrder); never the output.
type fmtPrinter struct {
	line  []byte
	marks ndjson.Marks // line's, or nil
	st    fmtStyle
	ord   *fmtOrder // sorted keys: each object's members in pretty's order
	base  int       // levels around the value printed (a member's value compared when sorting)
	top   bool      // the value is the line's: ends with "\n"
	pos   int
	state int
	stack []fmtFrame
	q     []fmtPiece // what to write next, in order
	qi    int
	style *pretty.Style
	order fmtOrder // ord's, when the printer is the line's

	// a string in colour: the next byte to print, its end, whether it is a
	// key, the state after it
	spos, send int
	skey       bool
	sthen      int
}

// fmtFrame is an open object or array.
type fmtFrame struct {
	open byte
	n    int // elements printed
	obj  int // its index in ord.objs when its members are sorted, else -1
}

// fmtPiece is a piece of output: spaces, or text (a constant or the line's
// own bytes).
type fmtPiece struct {
	s      string
	spaces int
}

func newFmtPrinter(line []byte, st fmtStyle) *fmtPrinter {
	p := &fmtPrinter{}
	p.init(line, st)
	return p
}

// init makes p print line, reusing its memory.
func (p *fmtPrinter) init(line []byte, st fmtStyle) { p.initMarked(line, nil, st) }

// initMarked is init with line's marks from its check (nil for none), for
// the ends of its strings to be found from.
func (p *fmtPrinter) initMarked(line []byte, m ndjson.Marks, st fmtStyle) {
	p.line, p.marks, p.st, p.style, p.ord = line, m, st, pretty.TerminalStyle, nil
	if st.sortKeys {
		p.order.build(line, m)
		p.ord = &p.order
	}
	p.reset(0, 0)
	p.top = true
}

// appendTo appends the rest of p's output to out.
func (p *fmtPrinter) appendTo(out []byte) []byte {
	for {
		if cap(out)-len(out) < 512 {
			out = slices.Grow(out, 4096)
		}
		n := p.read(out[len(out):cap(out)])
		if n == 0 {
			return out
		}
		out = out[:len(out)+n]
	}
}

// reset makes p print the value at pos with base levels around it, and no
// newline after.
func (p *fmtPrinter) reset(pos, base int) {
	p.pos, p.base, p.top, p.state = pos, base, false, fpValue
	p.stack, p.q, p.qi = p.stack[:0], p.q[:0], 0
}

func (p *fmtPrinter) text(s string)   { p.q = append(p.q, fmtPiece{s: s}) }
func (p *fmtPrinter) bytes(b []byte)  { p.q = append(p.q, fmtPiece{s: str(b)}) }
func (p *fmtPrinter) spaces(n int)    { p.q = append(p.q, fmtPiece{spaces: n}) }
func (p *fmtPrinter) newline(lvl int) { p.text("\n"); p.spaces(lvl * p.st.indent) }

// punct prints one of {}[],: — as pretty.Color does, brackets always in
// the brackets' colour, a comma only in an object's.
func (p *fmtPrinter) punct(s string, coloured bool) {
	if p.st.color && coloured {
		p.text(p.style.Brackets[0])
		p.text(s)
		p.text(p.style.Brackets[1])
		return
	}
	p.text(s)
}

// read fills dst with the output's next bytes and says how many; 0 only
// when the output has ended.
func (p *fmtPrinter) read(dst []byte) int {
	n := 0
	for n < len(dst) {
		if p.qi == len(p.q) {
			p.q, p.qi = p.q[:0], 0
			if p.state == fpDone {
				break
			}
			p.step()
			continue
		}
		pc := &p.q[p.qi]
		if pc.spaces > 0 {
			k := min(pc.spaces, len(dst)-n)
			fillSpaces(dst[n : n+k])
			n += k
			if pc.spaces -= k; pc.spaces == 0 {
				p.qi++
			}
			continue
		}
		k := copy(dst[n:], pc.s)
		n += k
		if pc.s = pc.s[k:]; pc.s == "" {
			p.qi++
		}
	}
	return n
}

func fillSpaces(b []byte) {
	if len(b) == 0 {
		return
	}
	b[0] = ' '
	for k := 1; k < len(b); k *= 2 {
		copy(b[k:], b[:k])
	}
}

// step queues the next few pieces.
func (p *fmtPrinter) step() {
	line := p.line
	switch p.state {
	case fpValue:
		i := ndjson.SkipSpace(line, p.pos)
		switch c := line[i]; c {
		case '{', '[':
			if c == '{' {
				p.punct("{", true)
			} else {
				p.punct("[", true)
			}
			f := fmtFrame{open: c, obj: -1}
			if c == '{' && p.ord != nil {
				f.obj = p.ord.find(i)
			}
			p.stack = append(p.stack, f)
			p.pos, p.state = i+1, fpNext
		case '"':
			p.str(i, false, fpNext)
		default:
			j := ndjson.ValueEnd(line, p.marks, i)
			if p.st.color {
				var col [2]string
				switch {
				case c == 't':
					col = p.style.True
				case c == 'f':
					col = p.style.False
				case c == 'n':
					col = p.style.Null
				default:
					col = p.style.Number
				}
				p.text(col[0])
				p.bytes(line[i:j])
				p.text(col[1])
			} else {
				p.bytes(line[i:j])
			}
			p.pos, p.state = j, fpNext
		}
	case fpNext:
		if len(p.stack) == 0 {
			p.state = fpEnd
			return
		}
		f := &p.stack[len(p.stack)-1]
		var at int // where the next element begins; -1 at the end
		if f.obj >= 0 {
			o := &p.ord.objs[f.obj]
			if f.n < o.n {
				at = p.ord.keys[o.off+f.n]
			} else {
				at, p.pos = -1, o.end
			}
		} else {
			at = ndjson.SkipSpace(line, p.pos)
			if line[at] == ',' {
				at = ndjson.SkipSpace(line, at+1)
			}
			if line[at] == f.open+2 { // '}' is '{'+2, ']' is '['+2
				at, p.pos = -1, at+1
			}
		}
		lvl := len(p.stack) + p.base
		if at < 0 {
			if f.n > 0 && !p.st.compact {
				p.newline(lvl - 1)
			}
			if f.open == '{' {
				p.punct("}", true)
			} else {
				p.punct("]", true)
			}
			p.stack = p.stack[:len(p.stack)-1]
			return
		}
		if f.n > 0 {
			p.punct(",", f.open == '{')
		}
		f.n++
		if !p.st.compact {
			p.newline(lvl)
		}
		if f.open == '{' {
			p.str(at, true, fpColon)
		} else {
			p.pos, p.state = at, fpValue
		}
	case fpColon:
		i := ndjson.SkipSpace(line, p.pos) // at the colon
		p.punct(":", true)
		if !p.st.compact {
			p.text(" ")
		}
		p.pos, p.state = i+1, fpValue
	case fpString:
		// As pretty.Color: each escape in the escapes' colour, the rest in
		// the key's or the string's.
		col := p.style.String
		if p.skey {
			col = p.style.Key
		}
		last := p.send - 1 // the closing quote
		k := bytes.IndexByte(line[p.spos:last], '\\')
		if k < 0 {
			p.bytes(line[p.spos:p.send])
			p.text(col[1])
			p.pos, p.state = p.send, p.sthen
			return
		}
		k += p.spos
		n := 2
		if line[k+1] == 'u' {
			n = 6
		}
		p.bytes(line[p.spos:k])
		p.text(col[1])
		p.text(p.style.Escape[0])
		p.bytes(line[k : k+n])
		p.text(p.style.Escape[1])
		p.text(col[0])
		p.spos = k + n
	case fpEnd:
		if p.top {
			p.text("\n")
		}
		p.state = fpDone
	}
}

// str prints the string at line[i], a key or not, then goes on in state then.
func (p *fmtPrinter) str(i int, key bool, then int) {
	j, _ := ndjson.StringEnd(p.line, p.marks, i)
	if !p.st.color {
		p.bytes(p.line[i:j])
		p.pos, p.state = j, then
		return
	}
	if key {
		p.text(p.style.Key[0])
	} else {
		p.text(p.style.String[0])
	}
	p.text(`"`)
	p.spos, p.send, p.skey, p.sthen, p.state = i+1, j, key, then, fpString
}

// fmtOrder is the order in which pretty prints each object's members with
// SortKeys.
type fmtOrder struct {
	objs []fmtObj // every object, in the order they begin
	keys []int    // where each member's key begins, object by object

	// the walk's
	stack []fmtOpen
	pend  []fmtMember
	sort  fmtSorter
}

// fmtOpen is an object (its index in objs, and where its members begin in
// pend) or an array (obj -1) that the walk is in.
type fmtOpen struct{ obj, base int }

// fmtObj is one object: where it begins and ends, and its members' keys
// at keys[off:off+n].
type fmtObj struct {
	start, end int
	off, n     int
}

// find returns the index of the object that begins at i.
func (o *fmtOrder) find(i int) int {
	return sort.Search(len(o.objs), func(k int) bool { return o.objs[k].start >= i })
}

// fmtMember is a member of an object: where its key is.
type fmtMember struct{ k, kend int }

// build sorts every object's members of line by key (fmtSorter): one
// walk of the line, holding only the members of the objects still open.
func (o *fmtOrder) build(line []byte, m ndjson.Marks) {
	o.objs, o.keys = o.objs[:0], o.keys[:0]
	stack, pend := o.stack[:0], o.pend[:0]
	s := &o.sort
	s.line = line
	expectKey := false
	for i := 0; i < len(line); {
		if i = ndjson.SkipSpace(line, i); i == len(line) {
			break
		}
		switch c := line[i]; c {
		case '{':
			stack = append(stack, fmtOpen{len(o.objs), len(pend)})
			o.objs = append(o.objs, fmtObj{start: i})
			expectKey = true
			i++
		case '[':
			stack = append(stack, fmtOpen{-1, 0})
			expectKey = false
			i++
		case '}', ']':
			top := stack[len(stack)-1]
			if top.obj >= 0 {
				s.members = pend[top.base:]
				if len(s.members) > 1 {
					sort.Stable(s)
				}
				ob := &o.objs[top.obj]
				ob.off, ob.n, ob.end = len(o.keys), len(s.members), i+1
				for _, m := range s.members {
					o.keys = append(o.keys, m.k)
				}
				pend = pend[:top.base]
			}
			stack = stack[:len(stack)-1]
			expectKey = false
			i++
		case ',':
			expectKey = stack[len(stack)-1].obj >= 0
			i++
		case ':':
			i++
		case '"':
			j, _ := ndjson.StringEnd(line, m, i)
			if expectKey {
				pend = append(pend, fmtMember{k: i, kend: j})
				expectKey = false
			}
			i = j
		default:
			i = ndjson.ValueEnd(line, m, i)
		}
	}
	o.stack, o.pend, s.members = stack, pend, nil
}

// fmtSorter sorts one object's members by key (as pretty's order does,
// the key's unescaped text byte by byte). Members of one key keep the
// order they came in: the last is the one that counts (ndjson(1)), and
// stays last. pretty broke such a tie by the values, which made another
// member of the name the last.
type fmtSorter struct {
	line    []byte
	members []fmtMember
}

func (s *fmtSorter) Len() int      { return len(s.members) }
func (s *fmtSorter) Swap(i, j int) { s.members[i], s.members[j] = s.members[j], s.members[i] }
func (s *fmtSorter) Less(i, j int) bool {
	mi, mj := &s.members[i], &s.members[j]
	return string(prettyParseStr(s.line[mi.k:mi.kend])) < string(prettyParseStr(s.line[mj.k:mj.kend]))
}

// prettyParseStr is pretty's parsestr: a string's text, unescaped by
// encoding/json when it holds an escape.
func prettyParseStr(s []byte) []byte {
	for i := 1; i < len(s); i++ {
		if s[i] == '\\' {
			var str string
			json.Unmarshal(s, &str)
			return []byte(str)
		}
		if s[i] == '"' {
			return s[1:i]
		}
	}
	return nil
}

// size returns how many bytes Fmt writes for line: exactly without
// colour and without compact, else a bound. One walk of the line.
func (st fmtStyle) size(line []byte) int {
	expand := !st.compact
	w := st.indent
	n := 1 // the newline after
	depth := 0
	var prev byte // the last token's first byte, or the last punctuation
	for i := 0; i < len(line); {
		if j := ndjson.SkipSpace(line, i); j != i {
			i = j
			continue
		}
		c := line[i]
		if expand && (prev == '{' || prev == '[' || prev == ',') && c != '}' && c != ']' {
			n += 1 + depth*w // an element's line
		}
		if st.color {
			n += 24 // the colour either side of a bracket, comma, colon, string or scalar, at most
		}
		switch c {
		case '{', '[':
			depth++
			n++
			i++
		case '}', ']':
			depth--
			if expand && prev != '{' && prev != '[' {
				n += 1 + depth*w
			}
			n++
			i++
		case ',':
			n++
			i++
		case ':':
			n++
			if expand {
				n++
			}
			i++
		case '"':
			j, _ := ndjson.StringEnd(line, nil, i)
			n += j - i
			if st.color {
				n += 22 * bytes.Count(line[i:j], []byte{'\\'}) // each escape in its own colour
			}
			i = j
		default:
			j := ndjson.ValueEnd(line, nil, i)
			n += j - i
			i = j
		}
		prev = c
	}
	return n
}

// worst bounds what Fmt writes for any valid line of n bytes (as size).
// A byte of the line makes at most one line of output, indented at most
// as deep as the line can nest, and a colour either side.
func (st fmtStyle) worst(n int) int {
	per := 1
	if !st.compact {
		per = 2 + min(n/2, ndjson.MaxDepth)*st.indent
	}
	if st.color {
		per += 24
	}
	return n*per + 1
}
