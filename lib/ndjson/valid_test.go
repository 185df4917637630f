package ndjson

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func reference(b []byte) Problem {
	if strings.TrimLeft(string(b), " \t\r\n") == "" {
		return Blank
	}
	if !json.Valid(b) {
		return BadJSON
	}
	if !utf8.Valid(b) {
		return BadUTF8
	}
	return Valid
}

// long opens a line longer than heapMarked, inside a string.
var long = `{"a":"` + strings.Repeat(`naïve \"日本\" \u00e9 `, 60000)

var checkCases = []struct {
	in   string
	want Problem
}{
	{`{}`, Valid}, {`[]`, Valid}, {` {"a" : [1, -2.5e+3, true, false, null, "x"]} `, Valid},
	{`"plain ascii string longer than eight bytes"`, Valid}, {`0`, Valid}, {`-0.0e0`, Valid},
	{`"\u00e9\n\t\"\\\/"`, Valid}, {`"naïve 日本語 🚀"`, Valid}, {"\"\u2028\u2029\"", Valid},
	{``, Blank}, {" \t\r", Blank},
	{`{`, BadJSON}, {`{"a":1,}`, BadJSON}, {`[1,]`, BadJSON}, {`01`, BadJSON}, {`1.`, BadJSON},
	{`1e`, BadJSON}, {`+1`, BadJSON}, {`tru`, BadJSON}, {`nul`, BadJSON}, {`{"a" 1}`, BadJSON},
	{`{1:2}`, BadJSON}, {`{} {}`, BadJSON}, {`"\x"`, BadJSON}, {`"\u12G4"`, BadJSON},
	{"\"a\x00b\"", BadJSON}, {"\"tab\there\"", BadJSON}, {`[}`, BadJSON}, {`{]`, BadJSON},
	{"\"\xff\"", BadUTF8}, {"\"\xc3\"", BadUTF8}, {"\"\xed\xa0\x80\"", BadUTF8},
	{"\"\xe0\x80\x80\"", BadUTF8}, {"\"\xf4\x90\x80\x80\"", BadUTF8}, {"\xef\xbb\xbf{}", BadJSON},
	{"{\"long plain key that spans words\":\"and a value with \\\"quotes\\\" in it\"}", Valid},
	{strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth), Valid},
	{strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), BadJSON},
	// Longer than heapMarked: not marked.
	{long + `","b":[1,"x"]}`, Valid},
	{long + `\xff","b":[1,"x"]}`, BadJSON},
	{long + "\xff\",\"b\":[1,\"x\"]}", BadUTF8},
}

func TestCheck(t *testing.T) {
	for _, c := range checkCases {
		if got := Check([]byte(c.in)); got != c.want {
			t.Errorf("Check(%.40q) = %v, want %v", c.in, got, c.want)
		}
		if got := Check([]byte(strings.Repeat(" ", 32) + c.in)); got != c.want {
			t.Errorf("Check(32 spaces + %.40q) = %v, want %v", c.in, got, c.want)
		}
		for path, got := range paths([]byte(c.in)) {
			if got != c.want {
				t.Errorf("%s check(%.40q) = %v, want %v", path, c.in, got, c.want)
			}
		}
		if c.want != BadUTF8 && len(c.in) < 1000 {
			if ref := reference([]byte(c.in)); ref != c.want {
				t.Errorf("reference(%.40q) = %v, test case says %v", c.in, ref, c.want)
			}
		}
	}
}

// FuzzCheck compares Check with encoding/json plus unicode/utf8.
func FuzzCheck(f *testing.F) {
	for _, c := range checkCases {
		if len(c.in) < 1000 {
			f.Add([]byte(c.in))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want := reference(b)
		// Leading space takes short inputs onto the vector path too.
		padded := append([]byte("                                "), b...)
		for _, in := range [][]byte{b, padded} {
			if got := Check(in); !agrees(got, want, b) {
				t.Fatalf("Check(%q) = %v, reference says %v", in, got, want)
			}
			for path, got := range paths(in) {
				if !agrees(got, want, b) {
					t.Fatalf("%s check(%q) = %v, reference says %v", path, in, got, want)
				}
			}
		}
	})
}

// paths runs each of the walks that can take b: over the eight-byte
// marks always; with valid UTF-8, over the marks of each vector pass the
// CPU has (AVX2, AVX-512); and through a Checker.
func paths(b []byte) map[string]Problem {
	swar := make(Marks, len(b)/64+1)
	markSWAR(b, swar)
	got := map[string]Problem{"scalar": walk(b, swar, nil), "unmarked": walk(b, nil, nil)}
	var c Checker
	got["checker"] = c.Check(b)
	for name, mark := range markers() {
		if vec := make(Marks, len(b)/64+1); mark(b, vec) {
			got[name] = walk(b, vec, nil)
		}
	}
	return got
}

func agrees(got, want Problem, b []byte) bool {
	if got == want {
		return true
	}
	// Where both JSON and UTF-8 are wrong, either answer names a real
	// problem.
	return (got == BadJSON || got == BadUTF8) && (want == BadJSON || want == BadUTF8) && !utf8.Valid(b)
}

// A bitmap handed from one checker to another (as the chunks of a stream
// are, one checker each) marks the next checker's lines as its own would:
// every case checks the same and gives the same marks over the line,
// whether the bitmap came from a checker of a longer line, a shorter one,
// or none; and the checker it was taken from goes on checking without it.
// Past the line's end the bits may differ: the AVX2 pass writes a word
// half at a time and leaves a half wholly past the end as it found it,
// and a stop past the end is one more place to look (see Marks).
func TestCheckerBitmapHandedOn(t *testing.T) {
	var grown, short Checker
	grown.Check([]byte(`{"a":"` + strings.Repeat(`x\"y`, 3000) + `"}`))
	short.Check([]byte(`{}`))
	for _, from := range []*Checker{&grown, &short, {}} {
		m := from.TakeBitmap()
		var ck Checker
		ck.GiveBitmap(m)
		for _, c := range checkCases {
			var fresh Checker
			want := fresh.Check([]byte(c.in))
			if got := ck.Check([]byte(c.in)); got != want || got != c.want {
				t.Errorf("%.40q: %v with a bitmap handed on, %v fresh, want %v", c.in, got, want, c.want)
			}
			if got, want := within(ck.Marks(), len(c.in)), within(fresh.Marks(), len(c.in)); !slices.Equal(got, want) {
				t.Errorf("%.40q: marks %x with a bitmap handed on, %x fresh", c.in, got, want)
			}
		}
		if from.Marks() != nil {
			t.Errorf("the checker the bitmap was taken from still has marks")
		}
		if p := from.Check([]byte(`{"b":"after"}`)); p != Valid || from.Marks() == nil {
			t.Errorf("the checker the bitmap was taken from: %v, marks %v", p, from.Marks())
		}
	}
}

// within is m's bits for a line of n bytes, those past its end cleared
// (nil for a line that is not marked).
func within(m Marks, n int) Marks {
	if m == nil {
		return nil
	}
	out := slices.Clone(m[:n>>6+1])
	if n&63 != 0 {
		out[n>>6] &= 1<<(n&63) - 1
	} else {
		out[n>>6] = 0
	}
	return out
}
