package jsoncmp

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// ordered lists numbers in increasing order; each inner list holds
// spellings of one value.
var ordered = [][]string{
	{"-1e400", "-10e399"},
	{"-1.7976931348623157e308"},
	{"-1e64"},
	{"-1e63", "-10e62"},
	{"-1e62"},
	{"-9007199254740993"},
	{"-9007199254740992", "-9007199254740992.0"},
	{"-1.0000000000000000000001"},
	{"-1", "-1.0", "-1E0", "-0.1e1", "-100e-2"},
	{"-0.5"},
	{"-1e-64"},
	{"-1e-65", "-0.1e-64"},
	{"-1e-66"},
	{"-1e-300"},
	{"-1e-400"},
	{"0", "-0", "0.0", "0e10", "-0.0E-3"},
	{"1e-400"},
	{"5e-324"},
	{"1e-300"},
	{"1e-66"},
	{"1e-65", "10e-66"},
	{"1e-64"},
	{"0.1"},
	{"0.12"},
	{"1", "1.0", "1E0", "1e0", "10e-1", "0.001e3", "1.000", "1.0000000000000000000000", "100000000000000000000e-20"},
	{"1.0000000000000000000001"},
	{"1.5"},
	{"2"},
	{"10", "1e1"},
	{"9007199254740992", "9007199254740992.0", "9.007199254740992e15"},
	{"9007199254740993"},
	{"12345678901234567890123"},
	{"1e62"},
	{"1e63", "0.1e64"},
	{"1e64"},
	{"1e255"},
	{"1e256"},
	{"1.7976931348623157e308"},
	{"1e400", "10e399"},
	{"1e401"},
	{"1e100000"},
	{"1e1125899906842624", "1e2000000000000000000"},
}

func TestNumberOrder(t *testing.T) {
	type num struct {
		raw  string
		rank int
	}
	var all []num
	for r, vs := range ordered {
		for _, v := range vs {
			all = append(all, num{v, r})
		}
	}
	sign := func(x int) int { return max(-1, min(1, x)) }
	for _, a := range all {
		for _, b := range all {
			want := sign(a.rank - b.rank)
			if got := CompareNumbers([]byte(a.raw), []byte(b.raw)); got != want {
				t.Errorf("CompareNumbers(%s, %s) = %d, want %d", a.raw, b.raw, got, want)
			}
			ka, kb := AppendNumberKey(nil, []byte(a.raw)), AppendNumberKey(nil, []byte(b.raw))
			if got := bytes.Compare(ka, kb); got != want {
				t.Errorf("keys of %s and %s compare %d, want %d", a.raw, b.raw, got, want)
			}
			if got := Equal([]byte(a.raw), []byte(b.raw)); got != (want == 0) {
				t.Errorf("Equal(%s, %s) = %v", a.raw, b.raw, got)
			}
			if got := bytes.Equal(AppendEqualKey(nil, []byte(a.raw)), AppendEqualKey(nil, []byte(b.raw))); got != (want == 0) {
				t.Errorf("equal keys of %s and %s: %v", a.raw, b.raw, got)
			}
		}
	}
}

func TestEqualValues(t *testing.T) {
	same := [][2]string{
		{`"A"`, `"\u0041"`},
		{`[1, 2.0]`, `[1.0,2]`},
		{`{"a":1,"b":[true,null]}`, `{"b":[true,null],"a":1E0}`},
		{`{"a":1,"a":2}`, `{"a":2}`},
		{`{"a":{"x":1},"a":{"y":2}}`, `{"a":{"y":2}}`},
		{` 1 `, `1.0`},
	}
	for _, p := range same {
		if !Equal([]byte(p[0]), []byte(p[1])) {
			t.Errorf("%s and %s differ", p[0], p[1])
		}
	}
	differ := [][2]string{
		{`1`, `"1"`},
		{`null`, `false`},
		{`[1]`, `[1,1]`},
		{`[[1],2]`, `[[1,2]]`},
		{`{"a":1,"a":2}`, `{"a":1}`},
		{`{"\u0000":1}`, `{"":null}`},
		{`[{}]`, `[{},null]`},
		{`"a"`, `"a\u0000"`},
	}
	for _, p := range differ {
		if Equal([]byte(p[0]), []byte(p[1])) {
			t.Errorf("%s and %s are equal", p[0], p[1])
		}
	}
}

func TestFloat(t *testing.T) {
	for raw, want := range map[string]float64{"1e400": math.Inf(1), "-1e400": math.Inf(-1), "1e-400": 0, "1.5": 1.5} {
		if got := Float([]byte(raw)); got != want {
			t.Errorf("Float(%s) = %v, want %v", raw, got, want)
		}
	}
}

func FuzzNumberKey(f *testing.F) {
	f.Add("1.5", "15e-1")
	f.Fuzz(func(t *testing.T, a, b string) {
		if !isNumber(a) || !isNumber(b) {
			return
		}
		x, ok1 := Double([]byte(a))
		y, ok2 := Double([]byte(b))
		if !ok1 || !ok2 {
			return
		}
		want := 0
		if x < y {
			want = -1
		} else if x > y {
			want = 1
		}
		if got := bytes.Compare(AppendNumberKey(nil, []byte(a)), AppendNumberKey(nil, []byte(b))); got != want {
			t.Errorf("%s vs %s: key says %d, doubles %d", a, b, got, want)
		}
	})
}

// isNumber reports whether s is a JSON number.
func isNumber(s string) bool {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil || len(s) == 0 {
		return false
	}
	_, ok := v.(float64)
	return ok && (s[0] == '-' || s[0] >= '0' && s[0] <= '9') && s[len(s)-1] >= '0' && s[len(s)-1] <= '9'
}
