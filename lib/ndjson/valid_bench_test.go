package ndjson

import (
	"bytes"
	"fmt"
	"testing"
)

// benchLines is agent traffic like make bench's corpus: mostly English and
// code, some unicode, escaped quotes.
func benchLines(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"type":"event","runId":"run-%d","seq":%d,"event":{"type":"text_delta","text":"I will run the \"tests\" in main.go — naïve café 日本語 then fix the back\\slash case %d"}}`+"\n", i/30, i%30, i)
	}
	return b.Bytes()
}

func BenchmarkCheck(b *testing.B) {
	data := benchLines(10000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		for rest := data; len(rest) > 0; {
			var line []byte
			line, rest = Cut(rest)
			if Check(line) != Valid {
				b.Fatal("invalid")
			}
		}
	}
}

// denseLines is the other corpus's shape: short strings, many keys, 15%
// non-ASCII, \u escapes with surrogate pairs and \u2028.
func denseLines(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"type":"span","i":%d,"a":"id ж ñ","b":"go ж\ud83d\ude80","c":%d,"d":"ñ 1.0 ok","e":{"f":"err 中文 ts","g":false,"h":"\ud83d\ude80é k=v","i":[20,"x",null]},"j":"naïve Ω","k":%d.42,"l":"go 日本 ü","m":"err naïve\u2029","n":"err 🚀"}`+"\n", i, i%1000, i%900)
	}
	return b.Bytes()
}

func BenchmarkCheckerDense(b *testing.B) {
	data := denseLines(10000)
	b.SetBytes(int64(len(data)))
	var c Checker
	for b.Loop() {
		for rest := data; len(rest) > 0; {
			var line []byte
			line, rest = Cut(rest)
			if c.Check(line) != Valid {
				b.Fatal("invalid")
			}
		}
	}
}
