package ndjsontool

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
)

// uniq over many chunks and workers keeps exactly the first line of each
// value, in order (run under -race: the ordered stage and the workers
// share no buffer).
func TestUniqManyChunks(t *testing.T) {
	var in strings.Builder
	for i := 0; i < 200000; i++ {
		fmt.Fprintf(&in, `{"v":"k%d","i":%d}`+"\n", (i*13)%997, i)
	}
	var out bytes.Buffer
	st := &Stream{In: strings.NewReader(in.String()), Out: &out, Voice: testVoice{io.Discard}, Workers: 4}
	if err := Uniq(context.Background(), st, "v"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 997 {
		t.Fatalf("%d lines", len(lines))
	}
	for i, l := range lines {
		if want := fmt.Sprintf(`{"v":"k%d","i":%d}`, (i*13)%997, i); l != want {
			t.Fatalf("line %d: %s, want %s", i, l, want)
		}
	}
}
