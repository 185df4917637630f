package ndjson

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The walk made faster for issue 51 (numbers, escapes, the string scan,
// the marking) held to the walk as it was (valid_ref_test.go): the same
// Problem for every line, on every path — the eight-byte marks, no marks,
// each vector marking the CPU has, a Checker — and the same Where from
// Find, on random lines and on every mutation of them.

// refFindAll is FindAll over the reference walk.
func refFindAll(line []byte, paths [][]string) (Problem, []Where) {
	f := finder{}
	object := isObject(line)
	for _, keys := range paths {
		pf := pathFind{keys: keys}
		if !object || len(keys) == 0 || len(keys) > maxFindDepth {
			pf.state = Unknown
		}
		f.paths = append(f.paths, pf)
	}
	f.searchAgain()
	marks := make(Marks, len(line)/64+1)
	refMarkSWAR(line, marks)
	p := refWalk(line, marks, &f)
	where := make([]Where, len(f.paths))
	for k := range f.paths {
		where[k] = f.paths[k].where()
	}
	return p, where
}

var diffPaths = [][]string{{"type"}, {"event", "text"}, {"a", "0", "b"}, {"n"}, {"é"}, {}, make([]string, maxFindDepth+1)}

// diffCheck fails t unless every walk of b agrees with the reference.
func diffCheck(t *testing.T, b []byte) {
	t.Helper()
	marks := make(Marks, len(b)/64+1)
	refMarkSWAR(b, marks)
	want := refWalk(b, marks, nil)
	if unmarked := refWalk(b, nil, nil); unmarked != want {
		// The reference's own two paths may differ only where both JSON
		// and UTF-8 are wrong; the new walk must match each path for path.
		if got := walk(b, nil, nil); got != unmarked {
			t.Fatalf("unmarked walk(%q) = %v, reference %v", b, got, unmarked)
		}
	} else if got := walk(b, nil, nil); got != want {
		t.Fatalf("unmarked walk(%q) = %v, reference %v", b, got, want)
	}
	swar := make(Marks, len(b)/64+1)
	markSWAR(b, swar)
	if got := walk(b, swar, nil); got != want {
		t.Fatalf("scalar walk(%q) = %v, reference %v", b, got, want)
	}
	if got := Check(b); !agrees(got, want, b) {
		t.Fatalf("Check(%q) = %v, reference %v", b, got, want)
	}
	for name, mark := range markers() {
		if vec := make(Marks, len(b)/64+1); mark(b, vec) {
			vwant := refWalk(b, vec, nil)
			if got := walk(b, vec, nil); got != vwant {
				t.Fatalf("%s walk(%q) = %v, reference %v", name, b, got, vwant)
			}
		}
	}
	var c Checker
	rp, rw := refFindAll(b, diffPaths)
	gw := make([]Where, len(diffPaths))
	gp := c.FindAll(b, diffPaths, gw)
	if !agrees(gp, rp, b) {
		t.Fatalf("FindAll(%q) = %v, reference %v", b, gp, rp)
	}
	if gp == Valid {
		for k := range gw {
			if gw[k] != rw[k] {
				t.Fatalf("FindAll(%q) %v = %+v, reference %+v", b, diffPaths[k], gw[k], rw[k])
			}
		}
	}
}

// diffPieces are what random lines are made of: numbers of every form,
// good and bad; strings with escapes, good and bad, unicode, bad UTF-8 and
// control bytes; literals; whitespace.
var diffPieces = []string{
	"0", "-0", "1", "-1", "12", "123456789", "1234567890123456789012", "-0.5", "0.12345678",
	"-1.2345678e-05", "1E+300", "2e9", "01", "-", "1.", ".5", "1e", "1e+", "-a", "0x1", "1.5e3.2",
	"9.999999999999999999", "3.14159265358979", "-12345678.87654321",
	`"plain"`, `"a much longer string of plain ascii text that crosses a word edge or two"`,
	`"esc \" \\ \/ \b \f \n \r \t"`, `"\u00e9\ud83d\ude80\u2028"`, `"\uD834\uDD1E"`, `"bad \x"`,
	`"bad \u12G4"`, `"\u00"`, "\"nai\u0308ve 日本語 🚀\"", "\"\xff\"", "\"\xc3(\"", "\"\xed\xa0\x80\"",
	"\"tab\there\"", "\"nul\x00\"", `""`, "\"\\", "\"", "true", "false", "null", "tru", "nul",
	" ", "\t", "\r\n", "",
}

func randValue(r *rand.Rand, b []byte, depth int) []byte {
	switch k := r.IntN(10); {
	case k < 2 && depth < 6:
		b = append(b, '{')
		for j := range r.IntN(4) {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, `"`+[]string{"type", "event", "text", "a", "b", "n", "é", `\u0074ype`, "k\\\"ey"}[r.IntN(9)]+`"`...)
			b = append(b, []string{":", " : ", ":\t"}[r.IntN(3)]...)
			b = randValue(r, b, depth+1)
		}
		return append(b, '}')
	case k < 3 && depth < 6:
		b = append(b, '[')
		for j := range r.IntN(5) {
			if j > 0 {
				b = append(b, []string{",", ", "}[r.IntN(2)]...)
			}
			b = randValue(r, b, depth+1)
		}
		return append(b, ']')
	}
	return append(b, diffPieces[r.IntN(len(diffPieces))]...)
}

func TestWalkDiffRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 34))
	n := 30000
	if testing.Short() {
		n = 3000
	}
	for range n {
		b := randValue(r, nil, 0)
		if r.IntN(4) == 0 { // across the 64-byte words and the stack bitmap's edge
			b = append([]byte(strings.Repeat(" ", r.IntN(600))), b...)
		}
		diffCheck(t, b)
		for range 4 { // and mutated: a byte changed, dropped or cut off
			m := append([]byte(nil), b...)
			if len(m) == 0 {
				break
			}
			switch j := r.IntN(len(m)); r.IntN(3) {
			case 0:
				m[j] = "0123456789.eE+-\"\\{}[],: \xff\xc3tfnu"[r.IntN(27)]
			case 1:
				m = append(m[:j], m[j+1:]...)
			default:
				m = m[:j]
			}
			diffCheck(t, m)
		}
	}
}

// TestWalkDiffNumbers tries every number of up to four bytes from a
// number's alphabet, alone, in an array and as a member's value, at
// offsets that put it across a word's edge.
func TestWalkDiffNumbers(t *testing.T) {
	alpha := []byte("0129-+.eE x")
	var rec func(prefix []byte, n int)
	rec = func(prefix []byte, n int) {
		for _, pad := range []int{0, 5, 61} {
			sp := strings.Repeat(" ", pad)
			diffCheck(t, []byte(sp+string(prefix)))
			diffCheck(t, []byte(sp+"["+string(prefix)+"]"))
			diffCheck(t, []byte(sp+`{"n":`+string(prefix)+`}`))
			diffCheck(t, []byte(sp+`{"n":`+string(prefix)+`12345678901234567,"a":1}`))
		}
		if n == 0 {
			return
		}
		for _, c := range alpha {
			rec(append(prefix, c), n-1)
		}
	}
	rec(nil, 4)
}

// TestWalkDiffEscapes tries every byte after a backslash, and every
// \u form over a few hex-digit edges, in a key and in a value.
func TestWalkDiffEscapes(t *testing.T) {
	for c := range 256 {
		for _, s := range []string{"\\" + string(rune(c)), "\\" + string([]byte{byte(c)})} {
			diffCheck(t, []byte(`"`+s+`"`))
			diffCheck(t, []byte(`{"`+s+`":1}`))
			diffCheck(t, []byte(`"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa`+s+`"`))
		}
	}
	for _, h := range []string{"0", "9", "a", "f", "A", "F", "g", "G", "/", ":", "@", "`", " "} {
		for _, u := range []string{`\u` + h + `000`, `\u0` + h + `00`, `\u00` + h + `0`, `\u000` + h, `\u00` + h} {
			diffCheck(t, []byte(`"`+u+`"`))
			diffCheck(t, []byte(`{"`+u+`":"`+u+`"}`))
		}
	}
}

func FuzzWalkDiff(f *testing.F) {
	for _, s := range diffPieces {
		f.Add([]byte(s))
	}
	for _, c := range checkCases {
		if len(c.in) < 1000 {
			f.Add([]byte(c.in))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		diffCheck(t, b)
		diffCheck(t, append([]byte("                                                                "), b...))
	})
}

// TestFindAllPathsChange holds a Checker that keeps its paths' search
// bits from line to line to a fresh one, as the paths asked for change
// between lines: other keys, the same keys rewritten in place, more or
// fewer paths, and lines that are not objects between.
func TestFindAllPathsChange(t *testing.T) {
	lines := []string{`{"type":"a","event":{"text":"x"},"n":[1,{"b":2}]}`, `[{"type":1}]`, `{"n":{"0":{"b":3}},"a":[{"b":4}]}`, ` {"é":5,"type":null}`}
	keys := []string{"type"}
	sets := [][][]string{{keys}, {{"event", "text"}, keys}, {{"a", "0", "b"}}, {keys}, {{"n", "0", "b"}, {"é"}}, {{}, keys}, {make([]string, maxFindDepth+1), {"n"}}}
	var kept Checker
	for round := range 3 {
		for si, set := range sets {
			if round == 1 && si == 3 {
				keys[0] = "n" // the same slice, rewritten
			}
			for _, l := range lines {
				var fresh Checker
				w1, w2 := make([]Where, len(set)), make([]Where, len(set))
				p1, p2 := kept.FindAll([]byte(l), set, w1), fresh.FindAll([]byte(l), set, w2)
				if p1 != p2 || !slices.Equal(w1, w2) {
					t.Fatalf("round %d, paths %v, line %s: kept %v %v, fresh %v %v", round, set, l, p1, w1, p2, w2)
				}
			}
		}
	}
}

// TestNonDigits holds the eight-byte digit test to a byte-by-byte one, for
// every byte value at every place among others of every kind.
func TestNonDigits(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for v := range 256 {
		for p := range 8 {
			for range 50 {
				var b [8]byte
				for k := range b {
					b[k] = byte(r.IntN(256))
					if r.IntN(2) == 0 {
						b[k] = '0' + byte(r.IntN(10))
					}
				}
				b[p] = byte(v)
				got := nonDigits(binary.LittleEndian.Uint64(b[:]))
				for k, c := range b {
					if want := c < '0' || c > '9'; (got>>(8*k+7)&1 == 1) != want || got>>(8*k)&0x7f != 0 {
						t.Fatalf("nonDigits(%q) = %#x: byte %d wrong", b, got, k)
					}
				}
			}
		}
	}
}

// TestShortNumber holds the sixteen-byte number test to number: where it
// takes a number, number reads the same one to the same end; and it takes
// the forms it is for (an embedding's -0.40058833, 1.9323302, -7).
func TestShortNumber(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 16))
	alpha := []byte("0123456789-+.eE ,]x\"")
	taken := 0
	for range 400000 {
		var b [24]byte
		n := r.IntN(18)
		for k := range b {
			switch {
			case k < n && r.IntN(4) != 0:
				b[k] = '0' + byte(r.IntN(10))
			default:
				b[k] = alpha[r.IntN(len(alpha))]
			}
		}
		if r.IntN(3) == 0 {
			b[0] = '-'
		}
		line := b[:16+r.IntN(9)]
		j := shortNumber(line, 0)
		if j == 0 {
			continue
		}
		taken++
		if k, p := number(line, 0); p != Valid || k != j {
			t.Fatalf("shortNumber(%q) = %d, number %d %v", line, j, k, p)
		}
	}
	if taken < 1000 {
		t.Fatalf("shortNumber took %d numbers of 400000", taken)
	}
	for _, s := range []string{"-0.40058833,", "1.9323302]", "-7]", "0,", "-0.5}", "123456789012345,"} {
		if j := shortNumber([]byte(s+"                "), 0); j != len(s)-1 {
			t.Errorf("shortNumber(%q) = %d, want %d", s, j, len(s)-1)
		}
	}
	for _, s := range []string{"01,", "-,", "1.,", "1.e5", "1e5,", "1.5e3", "1.5.3", "-01", "1234567890123456,", "- 1"} {
		if j := shortNumber([]byte(s+"                "), 0); j != 0 {
			t.Errorf("shortNumber(%q) = %d, want 0 (left to number)", s, j)
		}
	}
}
