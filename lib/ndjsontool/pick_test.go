package ndjsontool

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/ndjson"
)

func TestPick(t *testing.T) {
	line := []byte(`{"type":"event","runId":"r1","event":{"text":"hi \"there\"","n":1.50},"big":123456789012345678901234567890,"arr":[{"id":"a","v":1},{"id":"b","v":2}]}`)
	for _, c := range []struct {
		fields []string
		null   bool
		want   string
	}{
		{[]string{"type", "runId", "text=event.text"}, false, `{"type":"event","runId":"r1","text":"hi \"there\""}`},
		{[]string{"event.n", "big"}, false, `{"n":1.50,"big":123456789012345678901234567890}`},
		{[]string{"missing", "type"}, false, `{"type":"event"}`},
		{[]string{"missing", "type"}, true, `{"missing":null,"type":"event"}`},
		{[]string{`b=arr.#(id=="b").v`, "ids=arr.#.id"}, false, `{"b":2,"ids":["a","b"]}`},
		{[]string{"none"}, false, `{}`},
	} {
		fields, err := parsePick("pick", c.fields)
		if err != nil {
			t.Fatalf("%v: %v", c.fields, err)
		}
		ps := newPaths(fieldPaths(fields))
		for _, lv := range views(string(line)) {
			vals := make([]value, len(fields))
			ps.getAll(line, lv, vals)
			if got := string(appendPicked(nil, fields, vals, c.null)); got != c.want {
				t.Errorf("%v (marks %v, members %v): %s, want %s", c.fields, lv.marks != nil, lv.object, got, c.want)
			}
		}
	}
	for _, bad := range [][]string{{}, {"x="}, {"a.b", "c.b"}, {`arr.#(id=="b").v`}, {"type", "type"}} {
		if _, err := parsePick("pick", bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// Whatever the fields, pick never panics and prints one valid JSON object.
func FuzzPick(f *testing.F) {
	f.Add("type", "text=event.text", `{"type":"x","event":{"text":"y"}}`)
	f.Add(`b=arr.#(id=="b").v`, "k=a.0", `{"arr":[{"id":"b","v":[1,{"z":null}]}],"a":[true]}`)
	f.Add("a=b=c", "日本=x", `{"b=c":1,"x":"\u2028"}`)
	f.Fuzz(func(t *testing.T, f1, f2, line string) {
		lvs := views(line)
		if lvs == nil || strings.ContainsAny(line, "\n") {
			return
		}
		fields, err := parsePick("pick", []string{f1, f2})
		if err != nil {
			return
		}
		for _, null := range []bool{false, true} {
			vals := make([]value, len(fields))
			newPaths(fieldPaths(fields)).getAll([]byte(line), lvs[2], vals)
			out := appendPicked(nil, fields, vals, null)
			if ndjson.Check(out) != ndjson.Valid || !json.Valid(out) || out[0] != '{' {
				t.Fatalf("fields %q %q on %s: %s", f1, f2, line, out)
			}
		}
	})
}
