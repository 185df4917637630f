package ndjsontool

import (
	"encoding/binary"
	"math/bits"
	"strings"
	"unsafe"

	"github.com/agentry/agentry/lib/ndjson"
	"github.com/tidwall/gjson"
)

// fastPath is a gjson path made only of plain keys (letters, digits, '_',
// '-'), such as event.text or items.0.id: the common case, which lookup
// answers on validated lines several times faster than gjson, whose string
// scanning goes a byte at a time and which decodes every string it returns.
type fastPath []string

// parseFastPath returns the keys of a plain path, or nil when the path uses
// any gjson syntax beyond plain keys.
func parseFastPath(path string) fastPath {
	if path == "" {
		return nil
	}
	keys := strings.Split(path, ".")
	for _, k := range keys {
		if k == "" {
			return nil
		}
		for i := 0; i < len(k); i++ {
			c := k[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
				return nil
			}
		}
	}
	return keys
}

// value is what a path found: its JSON text, or nothing.
type value struct {
	raw []byte
	ok  bool
}

func (v value) isString() bool { return v.ok && len(v.raw) > 0 && v.raw[0] == '"' }

// get finds path in line, which must be valid JSON: with lookup for a fast
// path, else with gjson.
func get(line []byte, m ndjson.Marks, path string, fp fastPath) value {
	if fp != nil {
		raw, ok := lookup(line, m, fp)
		return value{raw, ok}
	}
	r := gjson.Get(str(line), path)
	if !r.Exists() {
		return value{}
	}
	return value{unsafe.Slice(unsafe.StringData(r.Raw), len(r.Raw)), true}
}

// lookup finds the value at keys in b, a valid JSON text, as gjson would:
// the first member of that name; a number indexes an array. On anything
// else its answer means nothing, but it never panics.
//
// m, when set, is the line's bitmap of string stops from its check: the
// ends of the strings it passes over are found from it.
func lookup(b []byte, m ndjson.Marks, keys fastPath) ([]byte, bool) {
	return lookupAt(b, m, skipWS(b, 0), keys)
}

// lookupAt is lookup from the value at b[i].
func lookupAt(b []byte, m ndjson.Marks, i int, keys fastPath) ([]byte, bool) {
	for _, k := range keys {
		if i >= len(b) {
			return nil, false
		}
		switch b[i] {
		case '{':
			j, ok := member(b, m, i, k)
			if !ok {
				return nil, false
			}
			i = j
		case '[':
			j, ok := element(b, m, i, k)
			if !ok {
				return nil, false
			}
			i = j
		default:
			return nil, false
		}
	}
	if i >= len(b) {
		return nil, false
	}
	return b[i:skipValue(b, m, i)], true
}

// paths is a list of paths to find in every line, each as get finds it.
type paths struct {
	paths []string
	fps   []fastPath
	fast  int // how many are fast paths
}

func newPaths(ps []string) *paths {
	p := &paths{paths: ps, fps: make([]fastPath, len(ps))}
	for i, path := range ps {
		if p.fps[i] = parseFastPath(path); p.fps[i] != nil {
			p.fast++
		}
	}
	return p
}

// getAll sets vals[i] to the value of path i in line, a valid JSON text.
// When the check gathered the members of the line's object, fast paths
// start from them, so that several fields cost about what one does and a
// line that lacks them all is not walked again at all.
func (p *paths) getAll(line []byte, lv lineView, vals []value) {
	if !lv.object || p.fast == 0 {
		for k, path := range p.paths {
			vals[k] = get(line, lv.marks, path, p.fps[k])
		}
		return
	}
	var key []byte // an escaped key, unescaped
	for k, fp := range p.fps {
		if fp == nil {
			vals[k] = get(line, lv.marks, p.paths[k], nil)
			continue
		}
		vals[k] = value{}
		for _, m := range lv.members {
			name := line[m.KeyStart:m.KeyEnd]
			if m.Escaped {
				key = appendUnescaped(key[:0], str(line[m.KeyStart-1:m.KeyEnd+1]))
				name = key
			}
			if str(name) != fp[0] {
				continue
			}
			if len(fp) == 1 {
				vals[k] = value{line[m.Start:m.End], true}
			} else if raw, ok := lookupAt(line, lv.marks, m.Start, fp[1:]); ok {
				vals[k] = value{raw, true}
			}
			break // the first member of that name, as gjson
		}
	}
}

// vals returns room for one line's values: buf when it is big enough.
func (p *paths) vals(buf *[8]value) []value {
	if len(p.paths) <= len(buf) {
		return buf[:len(p.paths)]
	}
	return make([]value, len(p.paths))
}

// member returns the start of the value of member k of the object at b[i].
func member(b []byte, m ndjson.Marks, i int, k string) (int, bool) {
	i = skipWS(b, i+1)
	for i < len(b) && b[i] == '"' {
		end, escaped := stringEnd(b, m, i)
		if end < i+2 {
			return 0, false // a string cut off: not valid JSON
		}
		var match bool
		if escaped {
			match = string(appendUnescaped(nil, str(b[i:end]))) == k
		} else {
			match = str(b[i+1:end-1]) == k
		}
		i = skipWS(b, end)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		i = skipWS(b, i+1)
		if match {
			return i, true
		}
		i = skipWS(b, skipValue(b, m, i))
		if i >= len(b) || b[i] != ',' {
			return 0, false
		}
		i = skipWS(b, i+1)
	}
	return 0, false
}

// element returns the start of element k (a decimal index) of the array at
// b[i].
func element(b []byte, m ndjson.Marks, i int, k string) (int, bool) {
	n := 0
	for j := 0; j < len(k); j++ {
		if k[j] < '0' || k[j] > '9' || n > 1<<30 {
			return 0, false
		}
		n = n*10 + int(k[j]-'0')
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return 0, false
	}
	for ; n > 0; n-- {
		i = skipWS(b, skipValue(b, m, i))
		if i >= len(b) || b[i] != ',' {
			return 0, false
		}
		i = skipWS(b, i+1)
	}
	return i, i < len(b)
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// stringEnd returns the index after the string that starts at b[i], and
// whether it holds an escape. With marks, it jumps from stop to stop;
// without, it scans eight bytes at a step.
func stringEnd(b []byte, m ndjson.Marks, i int) (int, bool) {
	escaped := false
	i++
	for {
		if m != nil {
			i = m.Next(i)
		} else {
			for i+8 <= len(b) {
				x := binary.LittleEndian.Uint64(b[i:])
				q := x ^ '"'*lsb
				bs := x ^ '\\'*lsb
				if y := ((q-lsb)&^q | (bs-lsb)&^bs) & msb; y != 0 {
					i += bits.TrailingZeros64(y) >> 3
					break
				}
				i += 8
			}
		}
		if i >= len(b) {
			return len(b), escaped
		}
		switch b[i] {
		case '"':
			return i + 1, escaped
		case '\\':
			escaped = true
			i += 2
		default:
			i++
		}
	}
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// skipValue returns the index after the value that starts at b[i].
func skipValue(b []byte, m ndjson.Marks, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		end, _ := stringEnd(b, m, i)
		return end
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i, _ = stringEnd(b, m, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	// A number, true, false or null: short, so a loop beats IndexAny's
	// set-up.
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
	}
	return i
}
