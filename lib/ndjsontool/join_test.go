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
)

func joined(t *testing.T, left, right string, o JoinOptions) string {
	t.Helper()
	var out bytes.Buffer
	st := &Stream{In: strings.NewReader(left), Out: &out, Voice: testVoice{io.Discard}, Workers: 4}
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
	st := &Stream{In: strings.NewReader(in.String()), Out: io.Discard, Voice: testVoice{io.Discard}, Workers: 4}
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

// readLog records which side was read when: the stream and File each
// append their name on every read.
type readLog struct {
	r    io.Reader
	name string
	log  *[]string
}

func (l readLog) Read(p []byte) (int, error) {
	*l.log = append(*l.log, l.name)
	return l.r.Read(p)
}

// joinPath runs Join with the stream's and File's sizes as given, and
// says which side was read to its end first.
func joinPath(t *testing.T, left, right string, o JoinOptions) (out, first string) {
	t.Helper()
	var b bytes.Buffer
	var log []string
	st := &Stream{In: readLog{strings.NewReader(left), "stream", &log}, Out: &b, Voice: testVoice{io.Discard}, Workers: 3}
	o.File, o.FileName, o.TempDir = readLog{strings.NewReader(right), "file", &log}, "right", t.TempDir()
	if err := Join(context.Background(), st, o); err != nil {
		t.Fatal(err)
	}
	if len(log) > 0 {
		first = log[0]
	}
	return b.String(), first
}

// joinSides are two sides with what join must keep straight: keys
// repeated on both sides (a stream line written once per File line, in
// File's order), numbers written as 7, 7.0 and 7e0, one key by the number
// rule, and "1" another, big integers told apart past float64's
// precision, keys missing or null, lines that are not objects, and
// malformed lines on both sides.
func joinSides(lines int) (left, right string) {
	special := []string{`1`, `1.0`, `1e0`, `"1"`, `-0`, `0`, `12345678901234567890`, `12345678901234567891`, `null`, `{"a":[1,2]}`, `{"a":[1,2.0]}`, `"x"`}
	forms := []string{"%d", "%d.0", "%de0", "%d.00"}
	var l, r strings.Builder
	for i := range lines {
		switch {
		case i%17 == 3:
			fmt.Fprintf(&l, "{\"i\":%d}\n", i) // no key
		case i%17 == 7:
			fmt.Fprintf(&l, "[%d]\n", i)
		case i%17 == 11:
			fmt.Fprintf(&l, "{\"k\":1,\"i\":%d\n", i) // malformed
		case i%50 == 0:
			fmt.Fprintf(&l, "{\"k\":%s,\"i\":%d,\"same\":\"L\"}\n", special[(i/50)%len(special)], i)
		default:
			fmt.Fprintf(&l, "{\"k\":"+forms[i%3]+",\"i\":%d,\"same\":\"L\"}\n", i%4000, i)
		}
	}
	for j := range lines / 3 {
		switch {
		case j%13 == 5:
			fmt.Fprintf(&r, "{\"j\":%d}\n", j)
		case j%13 == 6:
			fmt.Fprintf(&r, "\"s%d\"\n", j)
		case j%13 == 9:
			fmt.Fprintf(&r, "{\"id\":\n")
		case j%50 == 1:
			fmt.Fprintf(&r, "{\"id\":%s,\"j\":%d,\"same\":\"R\"}\n", special[(j/50)%len(special)], j)
		default:
			fmt.Fprintf(&r, "{\"id\":"+forms[j%4]+",\"j\":%d,\"same\":\"R\",\"pad\":\"%s\"}\n", j%3000, j, strings.Repeat("p", j%300))
		}
	}
	return l.String(), r.String()
}

// With the stream hashed and with File hashed, in memory or spilled to
// disk, join writes the same bytes.
func TestJoinHashesEitherSideToTheSameOutput(t *testing.T) {
	left, right := joinSides(30000)
	for _, keep := range []bool{false, true} {
		for _, as := range []string{"", "r"} {
			o := JoinOptions{Left: "k", Right: "id", KeepLeft: keep, As: as}
			o.StreamSize, o.FileSize = -1, int64(len(right))
			want, first := joinPath(t, left, right, o)
			if first != "file" || len(want) == 0 {
				t.Fatalf("stream size unknown: read %s first, wrote %d bytes", first, len(want))
			}
			if as == "" && (len(want) < 8<<20 || len(left)+96*30000 > 4<<20) {
				// The stream must fit in half of 8MiB, the output not in the rest.
				t.Fatalf("stream %d bytes, output %d bytes: not the sizes the cases need", len(left), len(want))
			}
			for _, c := range []struct {
				name             string
				stream, file, mb int64
				first            string // the side read first: the side hashed
			}{
				{"file hashed, spilled", 2, 1, 1, "file"},
				{"stream hashed", 1, 2, 0, "stream"},
				{"stream hashed, spilled", 1, 2, 1, "stream"},
				{"stream hashed, output spilled", 1, 2, 8, "stream"},
				{"stream smaller but past half of memory", 1<<20 + 1, 4 << 20, 2, "file"},
			} {
				o.StreamSize, o.FileSize, o.Memory = c.stream, c.file, c.mb<<20
				got, first := joinPath(t, left, right, o)
				if first != c.first {
					t.Errorf("%s: read %s first, want %s", c.name, first, c.first)
				}
				if got != want {
					t.Errorf("--left %v --as %q, %s: %d bytes, not the %d bytes of File hashed", keep, as, c.name, len(got), len(want))
				}
			}
		}
	}
}
