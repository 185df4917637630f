package ndjsontool

import (
	"testing"

	"github.com/agentry/agentry/lib/ndjson"
)

// FuzzGetAll: several paths found from the check's members are what get
// finds for each path alone; so they are without members, or marks.
func FuzzGetAll(f *testing.F) {
	line := `{"type":"event","seq":3,"event":{"type":"text","text":"a \"b\" \u00e9","n":[1,{"x":2},"3"]},"e\u0078":true,"type":"dup"}`
	f.Add(line, "type", "event.text", "ex")
	f.Add(line, "event.n.1.x", "event.type", "event.#")
	f.Add(line, "missing", "seq.x", "type")
	f.Add(`[{"a":1}]`, "0.a", "a", "0")
	f.Add(`{"m":{"c":[{"t":"a"},{"t":"b"}]},"m":{"c":[1,{"t":"c"}]},"type":"x","type":"y"}`, "m.c.1.t", "type", "m.c.0")
	f.Fuzz(func(t *testing.T, line, p1, p2, p3 string) {
		ps := newPaths([]string{p1, p2, p3})
		for _, lv := range append(views(line), foundView(line, ps)...) {
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

// foundView returns what eachLine hands a verb whose check found its paths
// on its way (finding.paths); none for a line that is not valid.
func foundView(line string, ps *paths) []lineView {
	var ck ndjson.Checker
	fps := make([][]string, len(ps.fps))
	for i, fp := range ps.fps {
		fps[i] = fp
	}
	wheres := make([]ndjson.Where, len(fps))
	if ck.FindAll([]byte(line), fps, wheres) != ndjson.Valid {
		return nil
	}
	return []lineView{{marks: ck.Marks(), wheres: wheres}}
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
