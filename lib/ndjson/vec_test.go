package ndjson

import (
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

func checkUTF8(t *testing.T, b []byte) {
	t.Helper()
	marks := make(Marks, len(b)/64+1)
	want := utf8.Valid(b)
	for name, mark := range markers() {
		if got := mark(b, marks); got != want {
			t.Fatalf("%s: markUTF8(%q) = %v, unicode/utf8 says %v", name, b, got, want)
		}
	}
}

// TestValidUTF8Pairs tries every two-byte and, over interesting bytes,
// every three- and four-byte sequence at every offset around a block edge.
func TestValidUTF8Pairs(t *testing.T) {
	if !fastUTF8 {
		t.Skip("no vector UTF-8 check here")
	}
	var edge []byte
	for _, c := range []int{0, 0x20, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xf7, 0xf8, 0xff} {
		edge = append(edge, byte(c))
	}
	buf := make([]byte, 70)
	for _, off := range []int{0, 1, 28, 29, 30, 31, 32, 33, 60, 61, 62, 63} { // the AVX2 blocks' edges, and the AVX-512 one at 64
		for i := range buf {
			buf[i] = 'z'
		}
		for a := range 256 {
			for b := range 256 {
				buf[off], buf[off+1] = byte(a), byte(b)
				checkUTF8(t, buf[:off+2])
				checkUTF8(t, buf[:off+3])
			}
		}
		if off%32 < 29 {
			continue // three and four bytes: only where they cross a block edge
		}
		buf[off+4] = 'q'
		for _, a := range edge {
			for _, b := range edge {
				for _, c := range edge {
					buf[off], buf[off+1], buf[off+2] = a, b, c
					checkUTF8(t, buf[:off+3])
					if off > 32 && off < 61 {
						continue // four bytes: across the edges at 32 and 64 only, for time
					}
					for _, d := range edge {
						buf[off+3] = d
						checkUTF8(t, buf[:off+4])
						checkUTF8(t, buf[:off+5])
					}
				}
			}
		}
	}
}

func TestValidUTF8Random(t *testing.T) {
	if !fastUTF8 {
		t.Skip("no vector UTF-8 check here")
	}
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "é", "日", "🚀", "\x80", "\xc3", "\xe6\x97", "\xf0\x9f\x9a", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xff", " "}
	for range 200000 {
		var b []byte
		for range r.IntN(80) {
			b = append(b, pieces[r.IntN(len(pieces))]...)
		}
		checkUTF8(t, b)
	}
}

func FuzzValidUTF8(f *testing.F) {
	f.Add([]byte("naïve café 日本語 🚀"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if fastUTF8 {
			checkUTF8(t, b)
		}
	})
}

// TestMarkUTF8 holds markUTF8 to unicode/utf8 and to a byte-by-byte
// bitmap, at every length across a few block edges, and Next to the first
// stop from every position.
func TestMarkUTF8(t *testing.T) {
	if !fastUTF8 {
		t.Skip("no vector UTF-8 check here")
	}
	alphabet := []byte("ab\"\\\x00\x1f \x7fé日🚀\xff")
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 140 {
		for range 200 {
			var b []byte
			for len(b) < n {
				k := r.IntN(len(alphabet))
				b = append(b, alphabet[k])
			}
			b = b[:n]
			marks := make(Marks, n/64+1)
			for name, mark := range markers() {
				if got, want := mark(b, marks), utf8.Valid(b); got != want {
					t.Fatalf("%s: markUTF8(%q) = %v, unicode/utf8 says %v", name, b, got, want)
				}
				for i := range (n/32 + 1) * 32 { // the blocks every marking writes
					want := i >= n || b[i] == '"' || b[i] == '\\' || b[i] < 0x20
					if got := marks[i>>6]>>(i&63)&1 == 1; got != want {
						t.Fatalf("%s: markUTF8(%q): stop at %d is %v, want %v", name, b, i, got, want)
					}
				}
			}
			markUTF8(b, marks)
			for i := 0; i <= n; i++ {
				want := i
				for want < n && b[want] != '"' && b[want] != '\\' && b[want] >= 0x20 {
					want++
				}
				if got := marks.Next(i); got != want {
					t.Fatalf("Next(%d) in %q = %d, want %d", i, b, got, want)
				}
			}
		}
	}
}

// TestMarkSWAR holds the eight-byte marking to a byte-by-byte bitmap, with
// every non-ASCII byte a stop, at every length across a few word edges.
func TestMarkSWAR(t *testing.T) {
	alphabet := []byte("ab\"\\\x00\x1f \x7f\x80\x9f\xa2\xdc\xffé日🚀")
	r := rand.New(rand.NewPCG(5, 6))
	for n := range 200 {
		for range 100 {
			b := make([]byte, n)
			for i := range b {
				b[i] = alphabet[r.IntN(len(alphabet))]
			}
			marks := make(Marks, n/64+1)
			for i := range marks {
				marks[i] = 0x5555 // stale bits from an earlier line
			}
			markSWAR(b, marks)
			for i := range len(marks) * 64 {
				want := i >= n || b[i] == '"' || b[i] == '\\' || b[i] < 0x20 || b[i] >= 0x80
				if got := marks[i>>6]>>(i&63)&1 == 1; got != want {
					t.Fatalf("markSWAR(%q): stop at %d is %v, want %v", b, i, got, want)
				}
			}
		}
	}
}

// TestMarkUTF8ASCIIBlocks holds the vector markings, which only carry a
// block of ASCII that follows one, to unicode/utf8 on lines of whole and
// partial blocks, each ASCII or with a sequence cut off at its end, one
// begun in the block before at its start, a valid one inside, or a bad
// byte: for every 32- and 64-byte block edge.
func TestMarkUTF8ASCIIBlocks(t *testing.T) {
	if !fastUTF8 {
		t.Skip("no vector UTF-8 check here")
	}
	r := rand.New(rand.NewPCG(51, 51))
	block := func(size int) []byte {
		b := make([]byte, size)
		for i := range b {
			b[i] = "ab\" \\{}:,0"[r.IntN(10)]
		}
		switch r.IntN(6) {
		case 0: // a sequence begun at the block's end, cut off or not
			seq := []string{"é", "日", "🚀"}[r.IntN(3)]
			copy(b[size-1-r.IntN(len(seq)):], seq)
		case 1: // continuation bytes at the start
			copy(b, []string{"\x80", "\xa9", "\x97\xa5", "\x9f\x9a\x80"}[r.IntN(4)])
		case 2:
			copy(b[r.IntN(size-4):], []string{"é", "日", "🚀"}[r.IntN(3)])
		case 3:
			b[r.IntN(size)] = []byte{0xff, 0xc0, 0xed, 0xf5}[r.IntN(4)]
		}
		return b
	}
	for range 20000 {
		var b []byte
		size := []int{32, 64}[r.IntN(2)]
		for range 1 + r.IntN(5) {
			b = append(b, block(size)...)
		}
		b = b[:len(b)-r.IntN(3)*r.IntN(size)/2]
		checkUTF8(t, b)
		marks := make(Marks, len(b)/64+1)
		for name, mark := range markers() {
			mark(b, marks)
			for i := range b {
				want := b[i] == '"' || b[i] == '\\' || b[i] < 0x20
				if got := marks[i>>6]>>(i&63)&1 == 1; got != want {
					t.Fatalf("%s: markUTF8(%q): stop at %d is %v, want %v", name, b, i, got, want)
				}
			}
		}
	}
}
