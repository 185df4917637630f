package ndjsontool

import (
	"bytes"

	"github.com/agentry/agentry/lib/ndjson"
)

// dedupe returns line, a valid JSON text, with every key given twice in an
// object kept once, where it was first written, with the value it was
// last given — the object jq, Python and JavaScript read — and whether
// there was any such key (when there was none, line is what to use). It is
// for gjson, which takes the first of a key given twice; ndjson's own
// lookups take the last.
func dedupe(line []byte) ([]byte, bool) {
	if !hasDuplicate(line) {
		return nil, false
	}
	out, _ := appendDeduped(make([]byte, 0, len(line)), line, skipWS(line, 0))
	return out, true
}

// hasDuplicate reports whether an object anywhere in line has a key twice.
func hasDuplicate(line []byte) bool {
	w := dupFinder{line: line}
	w.stack = w.buf[:0]
	w.visit(0)
	return w.found
}

// dupFinder walks a valid JSON text for an object with a key twice.
type dupFinder struct {
	line  []byte
	stack [][]byte // the names of the objects being walked, outermost first
	buf   [16][]byte
	found bool
}

// visit walks the value at line[i] and returns the index after it.
func (w *dupFinder) visit(i int) int {
	line := w.line
	i = skipWS(line, i)
	if i >= len(line) || w.found {
		return len(line)
	}
	switch line[i] {
	case '{':
		base := len(w.stack)
		i = skipWS(line, i+1)
		for i < len(line) && line[i] == '"' {
			end := strEnd(line, i)
			name := keyText(line[i:end])
			for _, n := range w.stack[base:] {
				if bytes.Equal(n, name) {
					w.found = true
					return len(line)
				}
			}
			w.stack = append(w.stack, name)
			i = skipWS(line, end)
			i = w.visit(i + 1) // past the colon
			i = skipWS(line, i)
			if i >= len(line) || line[i] != ',' {
				break
			}
			i = skipWS(line, i+1)
		}
		w.stack = w.stack[:base]
		return i + 1
	case '[':
		i = skipWS(line, i+1)
		if i < len(line) && line[i] == ']' {
			return i + 1
		}
		for i < len(line) {
			i = skipWS(line, w.visit(i))
			if i >= len(line) || line[i] != ',' {
				break
			}
			i++
		}
		return i + 1
	case '"':
		return strEnd(line, i)
	}
	return scalarEnd(line, i)
}

// scalarEnd returns the index after the number, true, false or null at
// line[i].
func scalarEnd(line []byte, i int) int {
	for i < len(line) {
		switch line[i] {
		case ',', ']', '}', ' ', '\t', '\r', '\n':
			return i
		}
		i++
	}
	return i
}

// appendDeduped appends the value at line[i], its objects deduplicated, and
// returns the index after it.
func appendDeduped(out, line []byte, i int) ([]byte, int) {
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
		i = skipWS(line, i+1)
		for i < len(line) && line[i] == '"' {
			end := strEnd(line, i)
			m := member{key: line[i:end], name: string(keyText(line[i:end]))}
			i = skipWS(line, skipWS(line, end)+1)
			m.value, i = appendDeduped(nil, line, i)
			replaced := false
			for k := range ms {
				if ms[k].name == m.name {
					ms[k].value, replaced = m.value, true
					break
				}
			}
			if !replaced {
				ms = append(ms, m)
			}
			i = skipWS(line, i)
			if i >= len(line) || line[i] != ',' {
				break
			}
			i = skipWS(line, i+1)
		}
		out = append(out, '{')
		for k, m := range ms {
			if k > 0 {
				out = append(out, ',')
			}
			out = append(append(append(out, m.key...), ':'), m.value...)
		}
		return append(out, '}'), i + 1
	case '[':
		out = append(out, '[')
		i = skipWS(line, i+1)
		if i < len(line) && line[i] == ']' {
			return append(out, ']'), i + 1
		}
		for i < len(line) {
			out, i = appendDeduped(out, line, i)
			i = skipWS(line, i)
			if i >= len(line) || line[i] != ',' {
				break
			}
			out = append(out, ',')
			i = skipWS(line, i+1)
		}
		return append(out, ']'), i + 1
	case '"':
		end := strEnd(line, i)
		return append(out, line[i:end]...), end
	}
	j := scalarEnd(line, i)
	return append(out, line[i:j]...), j
}

// keyText is a key's text: raw, a JSON string, unescaped.
func keyText(raw []byte) []byte {
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1]
	}
	return ndjson.AppendUnescaped(nil, raw, false)
}

// strEnd returns the index after the string that starts at b[i]: after
// the first quote with an even run of backslashes before it.
func strEnd(b []byte, i int) int {
	for i++; i < len(b); {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return len(b)
		}
		i += j
		slashes := 0
		for k := i - 1; k >= 0 && b[k] == '\\'; k-- {
			slashes++
		}
		if slashes%2 == 0 {
			return i + 1
		}
		i++
	}
	return len(b)
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
