package ndjson

import (
	"bytes"
	"os"
	"testing"
)

func BenchmarkCheckCorpus(b *testing.B) {
	data, _ := os.ReadFile("/tmp/bench/corpus.ndjson")
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		rest := data
		bad := 0
		for len(rest) > 0 {
			j := bytes.IndexByte(rest, '\n')
			line := rest[:j]
			rest = rest[j+1:]
			if Check(line) != Valid {
				bad++
			}
		}
		if bad != 0 {
			b.Fatal(bad)
		}
	}
}
