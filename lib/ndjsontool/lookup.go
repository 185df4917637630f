package ndjsontool

import (
	"strings"
	"unsafe"

	"github.com/agentry/agentry/lib/ndjson"
	"github.com/tidwall/gjson"
)

// fastPath is a gjson path made only of plain keys (letters, digits, '_',
// '-'), such as event.text or items.0.id: the common case, which
// ndjson.Lookup answers on validated lines several times faster than
// gjson, whose string scanning goes a byte at a time and which decodes
// every string it returns.
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

// get finds path in line, which must be valid JSON: with ndjson.Lookup for
// a fast path, else with gjson.
func get(line []byte, m ndjson.Marks, path string, fp fastPath) value {
	if fp != nil {
		raw, ok := ndjson.Lookup(line, m, fp)
		return value{raw, ok}
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
