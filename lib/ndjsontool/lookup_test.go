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

func TestParseFastPath(t *testing.T) {
	for path, want := range map[string][]string{
		"a":          {"a"},
		"event.text": {"event", "text"},
		"items.0.id": {"items", "0", "id"},
		"my key":     {"my key"},
		"café.ü":     {"café", "ü"},
		"a,b":        {"a,b"},
		`a\.b`:       {"a.b"},
		`a\\.b`:      {`a\`, "b"},
		`a\*`:        {"a*"},
		`\#`:         {"#"},
		"a=b":        {"a=b"},
		"x.a#":       {"x", "a#"},
		"items.#":    nil, "items.#.id": nil, "e*.text": nil, "a?": nil, "a|b": nil,
		"@reverse": nil, "a.@this": nil, "[a,b]": nil, "{a}": nil, "!true": nil,
		"": nil, "a.": nil, ".a": nil, "a..b": nil, `a\`: nil,
	} {
		got := parseFastPath(path)
		if len(got) != len(want) || (want == nil) != (got == nil) {
			t.Errorf("parseFastPath(%q) = %q, want %q", path, got, want)
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("parseFastPath(%q) = %q, want %q", path, got, want)
			}
		}
	}
}

// A key given twice is its last, on every way to a value: the fast
// lookup, the members the check gathered, and gjson's paths.
func TestLastDuplicateWins(t *testing.T) {
	line := `{"a":1,"b":{"c":1,"c":2},"arr":[{"id":"x","id":"y"},{"id":"z"}],"a":{"n":2},"e\u0078":1,"ex":3}`
	for path, want := range map[string]string{
		"a": `{"n":2}`, "a.n": "2", "b.c": "2", "ex": "3", "arr.0.id": `"y"`,
		"arr.#.id": `["y","z"]`, `arr.#(id=="y").id`: `"y"`, `arr.#(id=="x").id`: "", "a|n": "2", "e?": "3",
	} {
		fp := parseFastPath(path)
		for _, lv := range views(line) {
			ps := newPaths([]string{path})
			vals := make([]value, 1)
			ps.getAll([]byte(line), lv, vals)
			if string(vals[0].raw) != want || vals[0].ok != (want != "") {
				t.Errorf("%s (members %v): %q, want %q", path, lv.object, vals[0].raw, want)
			}
			if v := get([]byte(line), lv.marks, path, fp); string(v.raw) != want {
				t.Errorf("get %s: %q, want %q", path, v.raw, want)
			}
		}
	}
}

func TestDedupe(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1,"b":2,"a":3}`:              `{"a":3,"b":2}`,
		` { "a" : [ {"x":1, "x" : 2} ] } `: `{"a":[{"x":2}]}`,
		`{"\u0061":1,"a":2}`:               `{"\u0061":2}`,
		`[{"a":{},"a":[]},"s",1e3,null]`:   `[{"a":[]},"s",1e3,null]`,
	} {
		got, ok := dedupe([]byte(in), nil)
		if !ok || string(got) != want {
			t.Errorf("dedupe(%s) = %s, %v; want %s", in, got, ok, want)
		}
		var ck ndjson.Checker
		ck.Check([]byte(in))
		if got, ok := dedupe([]byte(in), ck.Marks()); !ok || string(got) != want {
			t.Errorf("dedupe(%s) with the marks = %s, %v; want %s", in, got, ok, want)
		}
	}
	if _, ok := dedupe([]byte(`{"a":{"a":1},"b":[{"a":1},{"a":2}]}`), nil); ok {
		t.Errorf("no key is given twice there")
	}
}

// FuzzPlainPathIsGjson: a path parseFastPath takes as plain keys finds
// what gjson finds on the line with its duplicate keys dropped, so that
// the fast lookup and gjson's paths agree (the last of a key given twice).
func FuzzPlainPathIsGjson(f *testing.F) {
	f.Add(`{"a":1,"a":{"b c":[true,{"é":2}]},"x.y":3,"#":4}`, "a.b c.1.é")
	f.Add(`{"a":1,"a":2}`, "a")
	f.Add(`{"x.y":3}`, `x\.y`)
	f.Add(`{"#":4,"a,b":5}`, `\#`)
	f.Add(`{"a,b":5,"my key":6}`, "a,b")
	f.Fuzz(func(t *testing.T, line, path string) {
		fp := parseFastPath(path)
		if fp == nil || len(views(line)) == 0 {
			return
		}
		want := get([]byte(line), nil, path, nil) // gjson on the deduplicated line
		for _, lv := range views(line) {
			got := get([]byte(line), lv.marks, path, fp)
			if got.ok != want.ok || string(got.raw) != string(want.raw) {
				t.Fatalf("%s on %s: fast %q %v, gjson %q %v", path, line, got.raw, got.ok, want.raw, want.ok)
			}
		}
	})
}
