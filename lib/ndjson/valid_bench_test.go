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
