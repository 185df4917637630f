package ndjsontool

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/cli"
)

func joined(t *testing.T, left, right string, o JoinOptions) string {
	t.Helper()
	var out bytes.Buffer
	st := &Stream{In: strings.NewReader(left), Out: &out, Voice: cli.Voice{Prog: "ndjson", W: io.Discard}, Workers: 4}
	o.File, o.FileName, o.TempDir = strings.NewReader(right), "right", t.TempDir()
	if err := Join(context.Background(), st, o); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// In memory and spilled to disk, join writes the same lines in the same
// order, several workers at once.
func TestJoinSpillsToTheSameOutput(t *testing.T) {
	var left, right strings.Builder
	for i := range 60000 {
		fmt.Fprintf(&left, "{\"k\":%d,\"i\":%d}\n", i%7001, i)
	}
	for i := range 20000 {
		fmt.Fprintf(&right, "{\"id\":%d.0,\"name\":\"n%d\",\"pad\":\"%s\"}\n", i%9001, i, strings.Repeat("p", 40))
	}
	for _, keep := range []bool{false, true} {
		o := JoinOptions{Left: "k", Right: "id", KeepLeft: keep}
		mem := joined(t, left.String(), right.String(), o)
		o.Memory = 1 << 20
		disk := joined(t, left.String(), right.String(), o)
		if mem != disk || len(mem) == 0 {
			t.Fatalf("--left %v: in memory %d bytes, spilled %d bytes, not the same", keep, len(mem), len(disk))
		}
		if !strings.HasPrefix(mem, `{"k":0,"i":0,"id":0.0,"name":"n0",`) {
			t.Fatalf("first line %.80s", mem)
		}
	}
}

func TestSplitFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	var in strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&in, "{\"m\":%d,\"i\":%d}\n", i%50, i)
	}
	st := &Stream{In: strings.NewReader(in.String()), Out: io.Discard, Voice: cli.Voice{Prog: "ndjson", W: io.Discard}, Workers: 4}
	if err := Split(context.Background(), st, SplitOptions{Key: "m", Dir: dir, Open: 3}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "7.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for i := 7; i < 20000; i += 50 {
		fmt.Fprintf(&want, "{\"m\":7,\"i\":%d}\n", i)
	}
	if string(b) != want.String() {
		t.Fatalf("7.ndjson holds %d bytes, want %d", len(b), want.Len())
	}
}
