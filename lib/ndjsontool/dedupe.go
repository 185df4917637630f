package ndjsontool

import (
	"github.com/agentry/agentry/lib/ndjson"
)

// dedupe returns line, a valid JSON text, with every key given twice in an
// object kept once, where it was first written, with the value it was
// last given — the object jq, Python and JavaScript read — and whether
// there was any such key (when there was none, line is what to use). It is
// for gjson, which takes the first of a key given twice; ndjson's own
// lookups take the last. m is the line's marks, or nil.
func dedupe(line []byte, m ndjson.Marks) ([]byte, bool) {
	if !hasDuplicate(line, m) {
		return nil, false
	}
	out, _ := appendDeduped(make([]byte, 0, len(line)), line, m, ndjson.SkipSpace(line, 0))
	return out, true
}

// hasDuplicate reports whether an object anywhere in line has a key twice.
func hasDuplicate(line []byte, m ndjson.Marks) bool {
	w := dupFinder{line: line, marks: m}
	w.stack = w.buf[:0]
	w.visit(ndjson.SkipSpace(line, 0))
	return w.found
}

// dupFinder walks a valid JSON text for an object with a key twice.
type dupFinder struct {
	line  []byte
	marks ndjson.Marks
	stack []ndjson.Member // the members of the objects being walked, outermost first
	buf   [16]ndjson.Member
	found bool
}

// visit walks the value at line[i] and returns the index after it.
func (w *dupFinder) visit(i int) int {
	line := w.line
	if i >= len(line) || w.found {
		return len(line)
	}
	switch line[i] {
	case '{':
		base := len(w.stack)
		i, more := ndjson.Into(line, i)
		for more {
			mb := ndjson.MemberAt(line, w.marks, i)
			for _, o := range w.stack[base:] {
				if ndjson.SameKey(line, o, mb) {
					w.found = true
					return len(line)
				}
			}
			w.stack = append(w.stack, mb)
			i, more = ndjson.Past(line, w.visit(mb.Start))
		}
		w.stack = w.stack[:base]
		return i + 1
	case '[':
		i, more := ndjson.Into(line, i)
		for more {
			i, more = ndjson.Past(line, w.visit(i))
		}
		return i + 1
	}
	return ndjson.ValueEnd(line, w.marks, i)
}

// appendDeduped appends the value at line[i], its objects deduplicated, and
// returns the index after it.
func appendDeduped(out, line []byte, m ndjson.Marks, i int) ([]byte, int) {
	if i >= len(line) {
		return out, i
	}
	switch line[i] {
	case '{':
		type member struct {
			key, value []byte
			name       string
		}
		var ms []member
		i, more := ndjson.Into(line, i)
		for more {
			mb := ndjson.MemberAt(line, m, i)
			d := member{key: line[mb.KeyStart-1 : mb.KeyEnd+1], name: string(mb.Key(line, nil))}
			d.value, i = appendDeduped(nil, line, m, mb.Start)
			replaced := false
			for k := range ms {
				if ms[k].name == d.name {
					ms[k].value, replaced = d.value, true
					break
				}
			}
			if !replaced {
				ms = append(ms, d)
			}
			i, more = ndjson.Past(line, i)
		}
		out = append(out, '{')
		for k, d := range ms {
			if k > 0 {
				out = append(out, ',')
			}
			out = append(append(append(out, d.key...), ':'), d.value...)
		}
		return append(out, '}'), i + 1
	case '[':
		out = append(out, '[')
		i, more := ndjson.Into(line, i)
		for k := 0; more; k++ {
			if k > 0 {
				out = append(out, ',')
			}
			out, i = appendDeduped(out, line, m, i)
			i, more = ndjson.Past(line, i)
		}
		return append(out, ']'), i + 1
	}
	j := ndjson.ValueEnd(line, m, i)
	return append(out, line[i:j]...), j
}
