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
		{"type", Present, `"event"`},
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
	if _, w := ck.Find([]byte(`{"e\u0078":1,"y":2}`), []string{"y"}); w.State != Unknown {
		t.Errorf("an escaped key on the way: %+v, want Unknown", w)
	}
	if _, w := ck.Find([]byte(`[{"y":2}]`), []string{"y"}); w.State != Unknown {
		t.Errorf("an array line: %+v, want Unknown", w)
	}
}
