package ndjson

import (
	"strings"
	"testing"
)

// dupCases are lines with a name more than once, and what a path finds
// there: the last member of each name, as jq, Python's json and
// JavaScript take it. want "" is nothing.
var dupCases = []struct {
	line, path, want string
}{
	{`{"a":1,"a":2}`, "a", `2`},
	{`{"a":1,"b":0,"a":2,"c":3}`, "a", `2`},
	{`{ "a" : 1 , "a" : "two" }`, "a", `"two"`},
	{`{"a":1,"\u0061":2}`, "a", `2`},            // an escape that unescapes to the name
	{`{"\u0061":1,"a":2,"\u0061":3}`, "a", `3`}, // and the other way round
	{`{"a\n":1,"a":2,"a\n":3}`, "a", `2`},       // an escape that does not
	{`{"caf\u00e9":1,"café":2}`, "café", `2`},
	{`{"café":1,"caf\u00e9":2}`, "café", `2`},
	{`{"a":{"b":1},"a":{"b":2}}`, "a.b", `2`},
	{`{"a":{"b":1},"a":{"c":2}}`, "a.b", ``}, // the later a has no b
	{`{"a":{"b":1},"a":{}}`, "a.b", ``},
	{`{"a":{"b":1},"a":5}`, "a.b", ``},
	{`{"a":{"b":1},"a":null,"a":{"b":[3]}}`, "a.b", `[3]`},
	{`{"a":{"b":1,"b":2},"x":{"a":{"b":9}}}`, "a.b", `2`},
	{`{"a":{"b":{"c":1},"b":{"c":2,"c":3}},"a":{"b":{"c":4},"z":0,"b":{"c":5}}}`, "a.b.c", `5`},
	{`{"a":{"b":{"c":1}},"a":{"b":{"d":1}}}`, "a.b.c", ``},
	{`{"x":{"a":1},"a":{"x":2},"a":{"x":3,"a":4}}`, "a.x", `3`},
	{`{"a":[1],"a":{"0":7}}`, "a.0", `7`},
	{`{"a":{"0":7},"a":[8]}`, "a.0", `8`},
	{`{"a":1,"a":2}`, "b", ``},
}

func TestLookupLastDuplicate(t *testing.T) {
	for _, c := range dupCases {
		line := []byte(c.line)
		var ck Checker
		if p := ck.Check(line); p != Valid {
			t.Fatalf("%s: %v", c.line, p)
		}
		for _, m := range []Marks{nil, ck.Marks()} {
			raw, ok := Lookup(line, m, strings.Split(c.path, "."))
			if ok != (c.want != "") || string(raw) != c.want {
				t.Errorf("Lookup(%s, %q) with marks %v = %q, %v; want %q", c.line, c.path, m != nil, raw, ok, c.want)
			}
		}
	}
}

func TestFindLastDuplicate(t *testing.T) {
	for _, c := range dupCases {
		for _, pad := range []string{"", strings.Repeat(" ", stackMarked)} { // the bitmap on the stack, and the Checker's
			line := []byte(c.line + pad)
			var ck Checker
			p, w := ck.Find(line, strings.Split(c.path, "."))
			if p != Valid {
				t.Fatalf("%s: %v", c.line, p)
			}
			switch {
			case w.State == Unknown:
				// The walk may hand an array on the way to Lookup.
				if !strings.Contains(c.line, "[") {
					t.Errorf("Find(%s, %q) = Unknown", c.line, c.path)
				}
			case (w.State == Present) != (c.want != ""):
				t.Errorf("Find(%s, %q) = %+v; want %q", c.line, c.path, w, c.want)
			case w.State == Present && string(line[w.Start:w.End]) != c.want:
				t.Errorf("Find(%s, %q) = %q; want %q", c.line, c.path, line[w.Start:w.End], c.want)
			}
		}
	}
}

// TestFindLastDuplicateLong: a line too long to mark is walked without a
// bitmap, and finds the same.
func TestFindLastDuplicateLong(t *testing.T) {
	long := `"` + strings.Repeat("x\\\"é", heapMarked/4) + `"`
	line := []byte(`{"a":{"b":1},"s":` + long + `,"\u0061":{"b":` + long + `},"a":{"b":2,"t":` + long + `}}`)
	var ck Checker
	p, w := ck.Find(line, []string{"a", "b"})
	if p != Valid || w.State != Present || string(line[w.Start:w.End]) != "2" {
		t.Fatalf("Find on a %d-byte line = %v, %+v", len(line), p, w)
	}
	if ck.Marks() != nil {
		t.Fatalf("a %d-byte line was marked", len(line))
	}
	if raw, ok := Lookup(line, nil, []string{"a", "b"}); !ok || string(raw) != "2" {
		t.Fatalf("Lookup on a %d-byte line = %q, %v", len(line), raw, ok)
	}
}

func TestLastMember(t *testing.T) {
	line := []byte(`{"a":1,"\u0062":2,"b":3,"b":4,"\u0061":5,"c\"":6}`)
	var ck Checker
	p, ms, obj := ck.Index(line)
	if p != Valid || !obj || len(ms) != 6 {
		t.Fatalf("Index = %v, %d members, object %v", p, len(ms), obj)
	}
	for name, want := range map[string]string{"a": "5", "b": "4", `c"`: "6", "d": ""} {
		m, ok := LastMember(line, ms, name)
		got := ""
		if ok {
			got = string(line[m.Start:m.End])
		}
		if got != want {
			t.Errorf("LastMember(%q) = %q, want %q", name, got, want)
		}
	}
}
