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
		{"event.n.1", Unknown, ``},
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
