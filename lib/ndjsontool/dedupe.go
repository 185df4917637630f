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
	var keys [16]ndjson.Member // on the stack, for the common line
	_, found := visitDup(line, m, ndjson.SkipSpace(line, 0), keys[:0])
	return found
}

// visitDup walks the value at line[i], a valid JSON text, for an object
// with a key twice: it returns the index after the value, and whether it
// found one (then at once). keys is room for the members of the objects
// it walks, in order, each compared with those of its own object.
func visitDup(line []byte, m ndjson.Marks, i int, keys []ndjson.Member) (int, bool) {
	c := line[i]
	if c != '{' && c != '[' {
		return ndjson.ValueEnd(line, m, i), false
	}
	base := len(keys)
	i, more := ndjson.Into(line, i)
	for more {
		if c == '{' {
			mb := ndjson.MemberAt(line, m, i)
			if ndjson.KeyIn(line, &mb, keys[base:]) {
				return i, true
			}
			keys = append(keys, mb)
			i = mb.Start
		}
		// An object or an array is walked, a scalar only passed: no call
		// of this one's own for it.
		if v := line[i]; v == '{' || v == '[' {
			var found bool
			if i, found = visitDup(line, m, i, keys); found {
				return i, true
			}
		} else {
			i = ndjson.ValueEnd(line, m, i)
		}
		i, more = ndjson.Past(line, i)
	}
	return i + 1, false
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
