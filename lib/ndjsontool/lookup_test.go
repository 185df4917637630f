package ndjsontool

import (
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/ndjson"
	"github.com/tidwall/gjson"
)

// FuzzLookup: on valid JSON, lookup finds what gjson finds, with the
// check's marks and without; on anything else it does not panic.
func FuzzLookup(f *testing.F) {
	line := `{"type":"event","seq":3,"event":{"type":"text","text":"a \"b\" \u00e9","n":[1,{"x":2},"3"]},"e\u0078":true, "sp" : [ ] }`
	for _, p := range []string{"type", "event.text", "event.n.1.x", "event.n.2", "event.n.5", "ex", "sp", "sp.0", "seq.x", "missing"} {
		f.Add(line, p)
	}
	f.Add(`[{"a":1},{"a":2}]`, "1.a")
	f.Add(`{"a":{"a":{"a":"deep"}},"a":"dup"}`, "a.a.a")
	f.Fuzz(func(t *testing.T, line, path string) {
		fp := parseFastPath(path)
		if fp == nil {
			return
		}
		raw, ok := lookup([]byte(line), nil, fp) // whatever the line: no panic
		var ck ndjson.Checker
		if ck.Check([]byte(line)) != ndjson.Valid {
			return
		}
		// With the check's marks, the same answer.
		if mraw, mok := lookup([]byte(line), ck.Marks(), fp); mok != ok || string(mraw) != string(raw) {
			t.Fatalf("lookup(%q, %q) = %q, %v without marks, %q, %v with them", line, path, raw, ok, mraw, mok)
		}
		// gjson answers nonsense on a root that is not a container
		// (a path into the string "[0" finds 0"); lines are objects.
		if t := strings.TrimLeft(line, " \t\r\n"); t[0] != '{' && t[0] != '[' {
			return
		}
		r := gjson.Get(line, path)
		if ok != r.Exists() || (ok && string(raw) != r.Raw) {
			t.Fatalf("lookup(%q, %q) = %q, %v; gjson says %q, %v", line, path, raw, ok, r.Raw, r.Exists())
		}
	})
}

// FuzzGetAll: several paths found from the check's members are what get
// finds for each path alone; so they are without members, or marks.
func FuzzGetAll(f *testing.F) {
	line := `{"type":"event","seq":3,"event":{"type":"text","text":"a \"b\" \u00e9","n":[1,{"x":2},"3"]},"e\u0078":true,"type":"dup"}`
	f.Add(line, "type", "event.text", "ex")
	f.Add(line, "event.n.1.x", "event.type", "event.#")
	f.Add(line, "missing", "seq.x", "type")
	f.Add(`[{"a":1}]`, "0.a", "a", "0")
	f.Fuzz(func(t *testing.T, line, p1, p2, p3 string) {
		ps := newPaths([]string{p1, p2, p3})
		for _, lv := range views(line) {
			vals := make([]value, 3)
			ps.getAll([]byte(line), lv, vals)
			for k, p := range ps.paths {
				want := get([]byte(line), nil, p, ps.fps[k])
				if vals[k].ok != want.ok || string(vals[k].raw) != string(want.raw) {
					t.Fatalf("getAll(%q) path %q = %q, %v; get says %q, %v", line, p, vals[k].raw, vals[k].ok, want.raw, want.ok)
				}
			}
		}
	})
}

// FuzzFind: what the check finds on its way through a valid line is what
// lookup finds, and Find's check is Check's.
func FuzzFind(f *testing.F) {
	f.Add(`{"a":{"b":[1,{"c":2}],"c":"x\"y"},"b":3,"a":{"c":4}}`, "a.c")
	f.Add(`{"a":{},"c":{"b":1}}`, "a.b")
	f.Add(`{"a":{},"a":{"b":0}}`, "a.b")
	f.Add(`{"a":1,"b":{"a":{"b":2}}}`, "b.a.b")
	f.Add(`  {"x" : { "y" : null } , "z":[]}  `, "x.y")
	f.Fuzz(func(t *testing.T, line, path string) {
		fp := parseFastPath(path)
		if fp == nil {
			return
		}
		var ck ndjson.Checker
		p, w := ck.Find([]byte(line), fp)
		if want := ndjson.Check([]byte(line)); p != want {
			t.Fatalf("Find(%q) checks %v, Check says %v", line, p, want)
		}
		if p != ndjson.Valid || w.State == ndjson.Unknown {
			return
		}
		raw, ok := lookup([]byte(line), nil, fp)
		got := ""
		if w.State == ndjson.Present {
			got = line[w.Start:w.End]
		}
		if (w.State == ndjson.Present) != ok || got != string(raw) {
			t.Fatalf("Find(%q, %q) = %+v %q; lookup says %v %q", line, path, w, got, ok, raw)
		}
	})
}

// views returns what eachLine could hand a verb for a valid line: no
// members and no marks, marks only, and members with marks; none for a
// line that is not valid.
func views(line string) []lineView {
	var ck ndjson.Checker
	p, ms, obj := ck.Index([]byte(line))
	if p != ndjson.Valid {
		return nil
	}
	return []lineView{{}, {marks: ck.Marks()}, {marks: ck.Marks(), members: ms, object: obj}}
}
