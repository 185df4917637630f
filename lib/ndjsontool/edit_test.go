package ndjsontool

import (
	"encoding/json"
	"testing"
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
	}
	for _, c := range sets {
		eds, err := parseSets([]string{c.arg})
		if err != nil {
			t.Fatal(err)
		}
		got, ok := eds[0].apply(nil, []byte(c.line))
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
	}
	for _, c := range dels {
		eds, _ := parseDels([]string{c.arg})
		got, ok := eds[0].apply(nil, []byte(c.line))
		if !ok {
			got = []byte(c.line)
		}
		if string(got) != c.want || !json.Valid(got) {
			t.Errorf("del %s on %s: %s, want %s", c.arg, c.line, got, c.want)
		}
	}
}
