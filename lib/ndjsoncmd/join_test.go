package ndjsoncmd

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/cli"
)

// join knows a side's size when it is regular files, and not when it is a
// pipe: then FILE is the side hashed.
func TestJoinSizes(t *testing.T) {
	dir := t.TempDir()
	small, big := filepath.Join(dir, "s.ndjson"), filepath.Join(dir, "b.ndjson")
	os.WriteFile(small, []byte("{\"k\":1}\n"), 0o600)
	os.WriteFile(big, []byte(strings.Repeat("{\"k\":1,\"v\":2}\n", 10)), 0o600)
	in, err := os.Open(small)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	pipe := strings.NewReader("{\"k\":1}\n")
	for _, c := range []struct {
		name         string
		files        cli.Operands
		stdin        io.Reader
		stream, file int64
	}{
		{"files", cli.Operands{small, small}, pipe, 16, 140},
		{"stdin a file", nil, in, 8, 140},
		{"stdin a pipe", nil, pipe, -1, 140},
		{"a pipe among files", cli.Operands{small, "-"}, pipe, -1, 140},
	} {
		cmd := &joinCmd{File: big}
		cmd.files = c.files
		env := &cli.Env{Stdin: c.stdin, Getenv: func(string) string { return "" }}
		if s, f := cmd.sizes(env); s != c.stream || f != c.file {
			t.Errorf("%s: sizes %d, %d; want %d, %d", c.name, s, f, c.stream, c.file)
		}
	}
}
