package ndjsontool

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"github.com/agentry/agentry/lib/ndjson"
)

func TestEdits(t *testing.T) {
	sets := []struct {
		line, arg, want string
		ok              bool
	}{
		{`{"a":1, "b" : 2 }`, `b:=3`, `{"a":1, "b" : 3 }`, true},
		{`{"a":1,"b":2}`, `c=x`, `{"a":1,"b":2,"c":"x"}`, true},
		{`{}`, `c.d:=[1]`, `{"c":{"d":[1]}}`, true},
		{` { } `, `c=1`, ` { "c":"1"} `, true},
		{`{"a":{"b":1},"z":0}`, `a.c:=true`, `{"a":{"b":1,"c":true},"z":0}`, true},
		{`{"a":[1,{"x":2}]}`, `a.1.x:=3`, `{"a":[1,{"x":3}]}`, true},
		{`{"a":[1]}`, `a.5:=3`, ``, false},
		{`{"a":"s"}`, `a.b:=3`, ``, false},
		{`[1]`, `a=1`, ``, false},
		{`{"n":1,"n":2}`, `n:=9`, `{"n":1,"n":9}`, true},
		{`{"a\u002eb":1}`, `a\.b:=2`, `{"a\u002eb":2}`, true},
		{`{"a":1}`, `b:= { "x" : 1 }`, `{"a":1,"b":{"x":1}}`, true},
		{`{"c":[{"i":1}, 2, {"j":3}]}`, `c.#.i:=0`, `{"c":[{"i":0}, 2, {"j":3,"i":0}]}`, true},
		{`{"c":[[1,2],[3]]}`, `c.#.0:=9`, `{"c":[[9,2],[9]]}`, true},
		{`{"c":[1,2]}`, `c.#:=0`, `{"c":[0,0]}`, true},
		{`{"c":[]}`, `c.#.x:=0`, `{"c":[]}`, true},
		{`{"c":[1,2]}`, `c.#.x:=0`, ``, false},
		{`{"c":{"#":1}}`, `c.\#:=2`, `{"c":{"#":2}}`, true},
		{`{"c":{"#":1}}`, `c.#:=2`, ``, false},
		{`{"a":1}`, `c.#.x:=0`, `{"a":1}`, true},
	}
	for _, c := range sets {
		eds, err := parseSets([]string{c.arg})
		if err != nil {
			t.Fatal(err)
		}
		got, ok := applyBoth(t, eds[0], []byte(c.line))
		if ok != c.ok || ok && string(got) != c.want {
			t.Errorf("set %s on %s: %s %v, want %s %v", c.arg, c.line, got, ok, c.want, c.ok)
		}
		if ok && !json.Valid(got) {
			t.Errorf("set %s on %s: invalid %s", c.arg, c.line, got)
		}
	}
	dels := []struct{ line, arg, want string }{
		{`{"a":1,"b":2,"c":3}`, `a`, `{"b":2,"c":3}`},
		{`{"a":1,"b":2,"c":3}`, `b`, `{"a":1,"c":3}`},
		{`{"a":1,"b":2,"c":3}`, `c`, `{"a":1,"b":2}`},
		{`{"a":1 , "b":2 }`, `b`, `{"a":1 }`},
		{`{"a":1}`, `a`, `{}`},
		{`{"n":1,"x":0,"n":2}`, `n`, `{"x":0}`},
		{`{"n":1,"n":2,"x":0}`, `n`, `{"x":0}`},
		{`{"x":0,"n":1,"n":2}`, `n`, `{"x":0}`},
		{`{"n":1,"n":2}`, `n`, `{}`},
		{`{"a":{"b":[1,2,3]}}`, `a.b.1`, `{"a":{"b":[1,3]}}`},
		{`{"a":{"b":[1,2,3]}}`, `a.b.2`, `{"a":{"b":[1,2]}}`},
		{`{"a":{"b":[1]}}`, `a.b.0`, `{"a":{"b":[]}}`},
		{`{"a":1}`, `z`, `{"a":1}`},
		{`{"a":1}`, `a.b`, `{"a":1}`},
		{`{"m":{"content":[{"type":"text"},{"type":"tool_use","input":{"x":1}},{"input":2, "id":3}]}}`, `m.content.#.input`, `{"m":{"content":[{"type":"text"},{"type":"tool_use"},{"id":3}]}}`},
		{`{"a":[1, 2 ,3]}`, `a.#`, `{"a":[]}`},
		{`{"a":[[1,2],[3]]}`, `a.#.0`, `{"a":[[2],[]]}`},
		{`{"a":{"#":1,"b":2}}`, `a.\#`, `{"a":{"b":2}}`},
	}
	for _, c := range dels {
		eds, _ := parseDels([]string{c.arg})
		got, ok := applyBoth(t, eds[0], []byte(c.line))
		if !ok {
			got = []byte(c.line)
		}
		if string(got) != c.want || !json.Valid(got) {
			t.Errorf("del %s on %s: %s, want %s", c.arg, c.line, got, c.want)
		}
	}
}

// Random objects, random paths: set and del give what a decoder's map
// gives, and always valid JSON.
func TestEditsAgainstDecoder(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	keys := []string{"a", "b", "c"}
	var gen func(depth int) any
	gen = func(depth int) any {
		switch k := r.IntN(6); {
		case k == 0 && depth < 3:
			m := map[string]any{}
			for range r.IntN(4) {
				m[keys[r.IntN(3)]] = gen(depth + 1)
			}
			return m
		case k == 1 && depth < 3:
			var a []any
			for range r.IntN(3) {
				a = append(a, gen(depth+1))
			}
			return a
		case k == 2:
			return "s"
		case k == 3:
			return nil
		}
		return float64(r.IntN(9))
	}
	spaced := func(b []byte) []byte { // a space after every , and :
		var out []byte
		inStr := false
		for i := 0; i < len(b); i++ {
			c := b[i]
			out = append(out, c)
			switch {
			case c == '\\' && inStr:
				i++
				out = append(out, b[i])
			case c == '"':
				inStr = !inStr
			case !inStr && (c == ',' || c == ':'):
				out = append(out, ' ')
			}
		}
		return out
	}
	for i := range 3000 {
		root := map[string]any{}
		for range r.IntN(4) {
			root[keys[r.IntN(3)]] = gen(1)
		}
		line, _ := json.Marshal(root)
		if i%2 == 1 {
			line = spaced(line)
		}
		var path []string
		for range 1 + r.IntN(3) {
			if r.IntN(3) == 0 {
				path = append(path, fmt.Sprint(r.IntN(3)))
			} else {
				path = append(path, keys[r.IntN(3)])
			}
		}
		del := r.IntN(2) == 0
		ed := edit{path: path}
		if !del {
			ed.raw = []byte(`{"x":1}`)
		}
		got, ok := applyBoth(t, ed, line)
		want, wok := refEdit(root, path, del)
		if !wok {
			if ok && !del {
				t.Fatalf("%s on %s %v: made %s, the decoder could not", map[bool]string{true: "del", false: "set"}[del], line, path, got)
			}
			continue
		}
		if !ok {
			got = line
		}
		var g any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%v %s on %s: invalid %s", path, map[bool]string{true: "del", false: "set"}[del], line, got)
		}
		if !reflect.DeepEqual(g, want) {
			t.Fatalf("%v %s on %s: %s, want %v", path, map[bool]string{true: "del", false: "set"}[del], line, got, want)
		}
	}
}

// refEdit edits a decoded copy; false where set cannot go.
func refEdit(root map[string]any, path []string, del bool) (any, bool) {
	b, _ := json.Marshal(root)
	var v any
	json.Unmarshal(b, &v)
	cur := v
	for i, k := range path {
		last := i == len(path)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				if del {
					delete(c, k)
				} else {
					c[k] = map[string]any{"x": float64(1)}
				}
				return v, true
			}
			next, ok := c[k]
			if !ok {
				if del {
					return v, true
				}
				m := map[string]any{}
				c[k] = m
				next = m
			}
			cur = next
		case []any:
			n, err := strconv.Atoi(k)
			if err != nil || n >= len(c) {
				return v, del
			}
			if last {
				if del {
					c = append(c[:n], c[n+1:]...)
					return setAt(v, path[:i], c), true
				}
				c[n] = map[string]any{"x": float64(1)}
				return v, true
			}
			cur = c[n]
		default:
			return v, del
		}
	}
	return v, true
}

// setAt puts a shortened array back where it was.
func setAt(v any, path []string, a []any) any {
	if len(path) == 0 {
		return a
	}
	cur := v
	for i, k := range path {
		last := i == len(path)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[k] = a
			}
			cur = c[k]
		case []any:
			n, _ := strconv.Atoi(k)
			if last {
				c[n] = a
			}
			cur = c[n]
		}
	}
	return v
}

// applyBoth applies ed to line as a verb does, with the marks of the
// line's check, and without any: the two must agree.
func applyBoth(t *testing.T, ed edit, line []byte) ([]byte, bool) {
	t.Helper()
	got, ok := ed.apply(nil, line, nil)
	var ck ndjson.Checker
	if ck.Check(line) == ndjson.Valid {
		mgot, mok := ed.apply(nil, line, ck.Marks())
		if mok != ok || string(mgot) != string(got) {
			t.Errorf("%v on %s: %s %v with the marks, %s %v without", ed.path, line, mgot, mok, got, ok)
		}
	}
	return got, ok
}
