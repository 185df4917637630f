package ndjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// rebuild writes the value at line[i] compact by the steps alone (Into,
// MemberAt, Past, ValueEnd) and returns the index after it; it checks each
// member's key against encoding/json's reading of it on the way.
func rebuild(t *testing.T, out, line []byte, m Marks, i int) ([]byte, int) {
	start := i
	switch line[i] {
	case '{', '[':
		obj := line[i] == '{'
		out = append(out, line[i])
		i, more := Into(line, i)
		for k := 0; more; k++ {
			if k > 0 {
				out = append(out, ',')
			}
			if obj {
				mb := MemberAt(line, m, i)
				raw := line[mb.KeyStart-1 : mb.KeyEnd+1]
				var name string
				if err := json.Unmarshal(raw, &name); err != nil {
					t.Fatalf("key %s: %v", raw, err)
				}
				if got := string(mb.Key(line, nil)); got != name || !mb.KeyIs(line, name) || !KeyIn(line, &mb, []Member{mb}) {
					t.Fatalf("key %s: text %q, want %q", raw, got, name)
				}
				if mb.Escaped != (bytes.IndexByte(raw, '\\') >= 0) {
					t.Fatalf("key %s: escaped %v", raw, mb.Escaped)
				}
				out = append(append(out, raw...), ':')
				i = mb.Start
			}
			out, i = rebuild(t, out, line, m, i)
			i, more = Past(line, i)
		}
		out = append(out, line[i])
		if end := ValueEnd(line, m, start); end != i+1 {
			t.Fatalf("%s: ValueEnd %d, the walk %d", line[start:], end, i+1)
		}
		return out, i + 1
	}
	j := ValueEnd(line, m, i)
	return append(out, line[i:j]...), j
}

// FuzzSteps: the steps a verb walks a checked line with take it apart as
// encoding/json does, with the check's marks and without.
func FuzzSteps(f *testing.F) {
	for _, s := range []string{
		`{"type":"event","seq":3,"event":{"type":"text","text":"a \"b\" \u00e9","n":[1,{"x":2},"3"]},"e\u0078":true, "sp" : [ ] }`,
		` [ 1 , -2.5e3 , "x\\" , { } , [ [ ] ] , null , true , false ] `,
		"{\t\"a\"\r: {\"\": \"\", \"\\\"\":\"\\\\\"}\n}",
		`"just a string"`, `12`, `{"a":1,"a":2,"\u0061":3}`,
		`{"long":"` + strings.Repeat(`abc\"dé`, 40) + `","k":[` + strings.Repeat(`"x",`, 30) + `0]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		b := []byte(line)
		var ck Checker
		if ck.Check(b) != Valid {
			return
		}
		var want bytes.Buffer
		if err := json.Compact(&want, b); err != nil {
			return // encoding/json is stricter on nothing Check accepts, but be safe
		}
		for _, m := range []Marks{nil, ck.Marks()} {
			i := SkipSpace(b, 0)
			got, end := rebuild(t, nil, b, m, i)
			if string(got) != want.String() {
				t.Fatalf("%q (marks %v): rebuilt %q, want %q", line, m != nil, got, want.String())
			}
			if SkipSpace(b, end) != len(b) {
				t.Fatalf("%q: the value ends at %d", line, end)
			}
		}
	})
}

// TestKeyIn: keys compare by their text, escaped or not.
func TestKeyIn(t *testing.T) {
	line := []byte(`{"a":1,"\u0061":2,"b":3,"caf\u00e9":4,"café":5,"a\n":6}`)
	var ms []Member
	i, more := Into(line, 0)
	for more {
		mb := MemberAt(line, nil, i)
		ms = append(ms, mb)
		i, more = Past(line, ValueEnd(line, nil, mb.Start))
	}
	same := map[[2]int]bool{{0, 1}: true, {3, 4}: true}
	for a := range ms {
		for b := a + 1; b < len(ms); b++ {
			if got := KeyIn(line, &ms[b], ms[a:a+1]); got != same[[2]int{a, b}] {
				t.Errorf("KeyIn(%s, [%s]) = %v", line[ms[b].KeyStart:ms[b].KeyEnd], line[ms[a].KeyStart:ms[a].KeyEnd], got)
			}
		}
	}
}

// TestStringEnd: a string's end and whether it has an escape, with the
// marks and without, over strings of every length up to a few hundred
// bytes, runs of backslashes and escaped quotes anywhere in them (past
// the first words too, where the search without marks goes by quotes).
func TestStringEnd(t *testing.T) {
	parts := []string{"a", "é", `\\`, `\"`, `\\\"`, `\\\\`, `\n`, `\u00e9`, "xyz012345", " "}
	r := uint64(1)
	for n := range 400 {
		var sb strings.Builder
		sb.WriteByte('"')
		for sb.Len() < n {
			r = r*6364136223846793005 + 1442695040888963407
			sb.WriteString(parts[r>>33%uint64(len(parts))])
		}
		sb.WriteByte('"')
		lit := sb.String()
		line := []byte(`{"k":` + lit + `,"z":"\\"}`)
		var ck Checker
		if ck.Check(line) != Valid {
			t.Fatalf("%s: not valid", line)
		}
		for _, m := range []Marks{nil, ck.Marks()} {
			end, escaped := StringEnd(line, m, 5)
			if end != 5+len(lit) || escaped != strings.Contains(lit, `\`) {
				t.Fatalf("%s (marks %v): end %d escaped %v, want %d %v", lit, m != nil, end, escaped, 5+len(lit), strings.Contains(lit, `\`))
			}
		}
	}
}
