package ndjsontool

import (
	"unsafe"

	"github.com/agentry/agentry/lib/ndjson"
	"github.com/tidwall/gjson"
)

// fastPath is the keys of a plain path, such as event.text, items.0.id,
// "my key" or café: the common case, which ndjson.Lookup answers on
// validated lines several times faster than gjson, whose string scanning
// goes a byte at a time and which decodes every string it returns.
type fastPath []string

// parseFastPath returns the keys of a plain path, or nil when the path
// uses gjson's syntax beyond keys: a wildcard (* ?), a pipe (|), a key
// beginning with # (lengths, queries), @ (modifiers), [ or { (multipaths),
// or ! (a literal) at the start. Keys are separated by dots; any other
// character, spaces, commas and non-ASCII letters included, is part of a
// key, and a backslash makes the character after it part of one, a dot
// or a backslash included (a\.b is the key "a.b"), as in gjson.
func parseFastPath(path string) fastPath {
	if path == "" || path[0] == '!' {
		return nil
	}
	var keys []string
	var k []byte
	start := true // at the start of a key
	for i := 0; i < len(path); i++ {
		c := path[i]
		switch {
		case c == '\\':
			if i+1 == len(path) {
				return nil
			}
			i++
			k = append(k, path[i])
			start = false
			continue
		case c == '.':
			if start {
				return nil // an empty key
			}
			keys = append(keys, string(k))
			k, start = k[:0], true
			continue
		case c == '*' || c == '?' || c == '|':
			return nil
		case start && (c == '#' || c == '@' || c == '[' || c == '{'):
			return nil
		}
		k = append(k, c)
		start = false
	}
	if start {
		return nil
	}
	return append(keys, string(k))
}

// value is what a path found: its JSON text, or nothing.
type value struct {
	raw []byte
	ok  bool
}

func (v value) isString() bool { return v.ok && len(v.raw) > 0 && v.raw[0] == '"' }

// get finds path in line, which must be valid JSON: with ndjson.Lookup for
// a fast path, else with gjson, on the line with its duplicate keys
// dropped, so that the last of a key given twice wins there too (gjson
// would take the first).
func get(line []byte, m ndjson.Marks, path string, fp fastPath) value {
	if fp != nil {
		raw, ok := ndjson.Lookup(line, m, fp)
		return value{raw, ok}
	}
	if d, ok := dedupe(line, m); ok {
		line = d
	}
	r := gjson.Get(str(line), path)
	if !r.Exists() {
		return value{}
	}
	return value{unsafe.Slice(unsafe.StringData(r.Raw), len(r.Raw)), true}
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
// When the check found the paths on its way (finding.paths), those are
// the values.
// When the check gathered the members of the line's object, fast paths
// start from them, so that several fields cost about what one does and a
// line that lacks them all is not walked again at all.
func (p *paths) getAll(line []byte, lv lineView, vals []value) {
	if lv.wheres != nil {
		for k, path := range p.paths {
			vals[k] = lv.foundAt(k, line, path, p.fps[k])
		}
		return
	}
	if !lv.object || p.fast == 0 {
		for k, path := range p.paths {
			vals[k] = get(line, lv.marks, path, p.fps[k])
		}
		return
	}
	for k, fp := range p.fps {
		if fp == nil {
			vals[k] = get(line, lv.marks, p.paths[k], nil)
			continue
		}
		vals[k] = value{}
		m, ok := ndjson.LastMember(line, lv.members, fp[0]) // the last of the name, as Lookup
		if !ok {
			continue
		}
		if len(fp) == 1 {
			vals[k] = value{line[m.Start:m.End], true}
		} else if raw, ok := ndjson.LookupAt(line, lv.marks, m.Start, fp[1:]); ok {
			vals[k] = value{raw, true}
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
