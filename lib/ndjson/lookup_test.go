package ndjson

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// plainPath is the keys of a path of plain keys, as ndjsontool's fast
// paths are, or nil for any other path.
func plainPath(path string) []string {
	if path == "" {
		return nil
	}
	keys := strings.Split(path, ".")
	for _, k := range keys {
		if k == "" || strings.TrimLeft(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
			return nil
		}
	}
	return keys
}

// lastGet is gjson.Get for a path of plain keys, but taking the last
// member of a name, where gjson takes the first.
func lastGet(line, path string) gjson.Result {
	r := gjson.Parse(line)
	for _, k := range strings.Split(path, ".") {
		if !r.IsObject() {
			r = r.Get(k) // an array's element, or nothing
			continue
		}
		var last gjson.Result
		r.ForEach(func(key, v gjson.Result) bool {
			if key.String() == k {
				last = v
			}
			return true
		})
		r = last
	}
	return r
}

// FuzzLookup: on valid JSON, Lookup finds what gjson finds (the last
// member of a name, see lastGet), with the
// check's marks and without; on anything else it does not panic.
func FuzzLookup(f *testing.F) {
	line := `{"type":"event","seq":3,"event":{"type":"text","text":"a \"b\" \u00e9","n":[1,{"x":2},"3"]},"e\u0078":true, "sp" : [ ] }`
	for _, p := range []string{"type", "event.text", "event.n.1.x", "event.n.2", "event.n.5", "ex", "sp", "sp.0", "seq.x", "missing"} {
		f.Add(line, p)
	}
	f.Add(`[{"a":1},{"a":2}]`, "1.a")
	f.Add(`{"a":{"a":{"a":"deep"}},"a":"dup"}`, "a.a.a")
	f.Add(`{"a":{"b":1},"\u0061":{"b":2,"b":3}}`, "a.b")
	f.Fuzz(func(t *testing.T, line, path string) {
		fp := plainPath(path)
		if fp == nil {
			return
		}
		raw, ok := Lookup([]byte(line), nil, fp) // whatever the line: no panic
		var ck Checker
		if ck.Check([]byte(line)) != Valid {
			return
		}
		// With the check's marks, the same answer.
		if mraw, mok := Lookup([]byte(line), ck.Marks(), fp); mok != ok || string(mraw) != string(raw) {
			t.Fatalf("Lookup(%q, %q) = %q, %v without marks, %q, %v with them", line, path, raw, ok, mraw, mok)
		}
		// gjson answers nonsense on a root that is not a container
		// (a path into the string "[0" finds 0"); lines are objects.
		if t := strings.TrimLeft(line, " \t\r\n"); t[0] != '{' && t[0] != '[' {
			return
		}
		r := lastGet(line, path)
		if ok != r.Exists() || (ok && string(raw) != r.Raw) {
			t.Fatalf("Lookup(%q, %q) = %q, %v; gjson, taking the last member of a name, says %q, %v", line, path, raw, ok, r.Raw, r.Exists())
		}
	})
}

// FuzzFind: what the check finds on its way through a valid line is what
// Lookup finds, and Find's check is Check's.
func FuzzFind(f *testing.F) {
	f.Add(`{"a":{"b":[1,{"c":2}],"c":"x\"y"},"b":3,"a":{"c":4}}`, "a.c")
	f.Add(`{"a":{},"c":{"b":1}}`, "a.b")
	f.Add(`{"a":{},"a":{"b":0}}`, "a.b")
	f.Add(`{"a":1,"b":{"a":{"b":2}}}`, "b.a.b")
	f.Add(`  {"x" : { "y" : null } , "z":[]}  `, "x.y")
	f.Fuzz(func(t *testing.T, line, path string) {
		fp := plainPath(path)
		if fp == nil {
			return
		}
		var ck Checker
		p, w := ck.Find([]byte(line), fp)
		if want := Check([]byte(line)); p != want {
			t.Fatalf("Find(%q) checks %v, Check says %v", line, p, want)
		}
		if p != Valid || w.State == Unknown {
			return
		}
		raw, ok := Lookup([]byte(line), nil, fp)
		got := ""
		if w.State == Present {
			got = line[w.Start:w.End]
		}
		if (w.State == Present) != ok || got != string(raw) {
			t.Fatalf("Find(%q, %q) = %+v %q; Lookup says %v %q", line, path, w, got, ok, raw)
		}
	})
}
