package ndjson

import (
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	line := `{"type":"event","seq":3,"event":{"type":"text","text":"a \"b\" \u00e9","n":[1,{"x":2}],"o":{}},"ex":true,"e":{"a":{}},"type":"dup"}`
	for _, c := range []struct {
		path  string
		state FindState
		raw   string
	}{
		{"type", Present, `"dup"`}, // the last member of the name
		{"seq", Present, `3`},
		{"event", Present, line[strings.Index(line, `{"type":"text"`):strings.Index(line, `,"ex"`)]},
		{"event.text", Present, `"a \"b\" \u00e9"`},
		{"event.n", Present, `[1,{"x":2}]`},
		{"event.o", Present, `{}`},
		{"event.o.x", Absent, ``},
		{"event.missing", Absent, ``},
		{"event.type.x", Absent, ``},
		{"e.a.b", Absent, ``},
		{"ex", Present, `true`},
		{"missing", Absent, ``},
		{"event.n.1", Present, `{"x":2}`}, // a key of digits indexes an array
		{"event.n.0", Present, `1`},
		{"event.n.2", Absent, ``},
		{"event.n.1.x", Present, `2`},
		{"event.n.x", Absent, ``},
		{"event.o.0", Absent, ``},
	} {
		var ck Checker
		p, w := ck.Find([]byte(line), strings.Split(c.path, "."))
		if p != Valid || w.State != c.state || (w.State == Present && line[w.Start:w.End] != c.raw) {
			t.Errorf("Find(%q) = %v, %+v (%q); want %v %q", c.path, p, w, line[w.Start:w.End], c.state, c.raw)
		}
	}
	var ck Checker
	if _, w := ck.Find([]byte(`{"e\u0078":1,"y":2}`), []string{"y"}); w.State != Present {
		t.Errorf("an escaped key on the way: %+v, want Present", w)
	}
	if _, w := ck.Find([]byte(`[{"y":2}]`), []string{"y"}); w.State != Unknown {
		t.Errorf("an array line: %+v, want Unknown", w)
	}
}

func TestIndex(t *testing.T) {
	line := `{ "type" : "event","s\u0065q":3,"event":{"type":"text","n":[1,{"x":2}],"o":{}} ,"o":{},"t":true,"type":"dup"}`
	var ck Checker
	p, ms, obj := ck.Index([]byte(line))
	if p != Valid || !obj {
		t.Fatalf("Index = %v, object %v", p, obj)
	}
	var got []string
	for _, m := range ms {
		got = append(got, line[m.KeyStart:m.KeyEnd]+"="+line[m.Start:m.End]+map[bool]string{true: " (escaped)"}[m.Escaped])
	}
	want := []string{`type="event"`, `s\u0065q=3 (escaped)`, `event={"type":"text","n":[1,{"x":2}],"o":{}}`, `o={}`, `t=true`, `type="dup"`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Index members:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, l := range []string{`[{"a":1}]`, `"s"`, `3`} {
		if p, ms, obj := ck.Index([]byte(l)); p != Valid || obj || len(ms) != 0 {
			t.Errorf("Index(%s) = %v, %v, object %v; want no object", l, p, ms, obj)
		}
	}
	if p, ms, obj := ck.Index([]byte(` {} `)); p != Valid || !obj || len(ms) != 0 {
		t.Errorf("Index({}) = %v, %v, object %v; want an empty object", p, ms, obj)
	}
}

// FuzzFindAll: what one walk finds for several paths is, path by path,
// what Lookup finds (the last member of each name), and its check is
// Check's.
func FuzzFindAll(f *testing.F) {
	f.Add(`{"a":{"b":[1,{"c":2}],"c":"x\"y"},"b":3,"a":{"c":4}}`, "a.c", "a", "b")
	f.Add(`{"a":{},"c":{"b":1}}`, "a.b", "c.b", "c")
	f.Add(`{"a":{"b":{"c":1},"b":{"c":2}},"\u0061":{"b":{"d":3}}}`, "a.b.c", "a.b.d", "a.b")
	f.Add(`{"x":{"y":{"z":1}},"x":{"y":2},"y":{"z":3}}`, "x.y.z", "y.z", "x.y")
	f.Add(`{"type":"event","event":{"type":"text","text":"hi"},"type":"dup"}`, "type", "event.text", "event.type")
	f.Add(`{"m":{"c":[{"t":"a"},[1,[2,3]],{"t":"b"}]},"m":{"c":[[],{"t":"c"}]}}`, "m.c.1.t", "m.c.0", "m.c.1.1.0")
	f.Add(`{"a":[[1,2],[3,[4,{"b":5}]]],"a":[0,[9,[8,{"b":7,"b":6}]]]}`, "a.1.1.1.b", "a.1.1", "a.01")
	f.Add(`{"a":[1,2],"b":{"0":3},"c":[]}`, "a.1", "b.0", "c.0")
	f.Fuzz(func(t *testing.T, line, p1, p2, p3 string) {
		var fps [][]string
		for _, p := range []string{p1, p2, p3} {
			if fp := plainPath(p); fp != nil {
				fps = append(fps, fp)
			}
		}
		var ck Checker
		where := make([]Where, len(fps))
		p := ck.FindAll([]byte(line), fps, where)
		if want := Check([]byte(line)); p != want {
			t.Fatalf("FindAll(%q) checks %v, Check says %v", line, p, want)
		}
		if p != Valid {
			return
		}
		for k, fp := range fps {
			w := where[k]
			if w.State == Unknown {
				continue
			}
			raw, ok := Lookup([]byte(line), nil, fp)
			got := ""
			if w.State == Present {
				got = line[w.Start:w.End]
			}
			if (w.State == Present) != ok || got != string(raw) {
				t.Fatalf("FindAll(%q) path %q = %+v %q; Lookup says %v %q", line, strings.Join(fp, "."), w, got, ok, raw)
			}
			if _, w1 := ck.Find([]byte(line), fp); w1 != w && w1.State != Unknown {
				t.Fatalf("FindAll(%q) path %q = %+v; Find alone says %+v", line, strings.Join(fp, "."), w, w1)
			}
		}
	})
}

func TestFindAllAllocs(t *testing.T) {
	line := []byte(`{"type":"event","runId":"r","event":{"type":"text","text":"hi"},"type":"dup"}`)
	paths := [][]string{{"type"}, {"runId"}, {"event", "text"}}
	where := make([]Where, 3)
	var ck Checker
	ck.FindAll(line, paths, where)
	if n := testing.AllocsPerRun(100, func() { ck.FindAll(line, paths, where) }); n != 0 {
		t.Errorf("FindAll allocates %v times a line", n)
	}
	if n := testing.AllocsPerRun(100, func() { ck.Find(line, paths[2]) }); n != 0 {
		t.Errorf("Find allocates %v times a line", n)
	}
	for k, want := range []string{`"dup"`, `"r"`, `"hi"`} {
		if w := where[k]; w.State != Present || string(line[w.Start:w.End]) != want {
			t.Errorf("path %v: %+v, want %s", paths[k], w, want)
		}
	}
}
