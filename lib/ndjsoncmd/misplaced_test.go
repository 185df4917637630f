package ndjsoncmd

import (
	"os"
	"path/filepath"
	"testing"
)

// What is a file among a verb's own arguments: a file's end always; an
// existing regular file's name only when stdin brings no lines, and never
// the file stdout writes to; never a predicate, a field or an escaped path.
func TestFileLike(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, name := range []string{"data", "out"} {
		if err := os.WriteFile(name, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir("logs", 0o700); err != nil {
		t.Fatal(err)
	}
	out, err := os.Stat(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	noLines := places{existing: true, out: out}
	lines := places{existing: false, out: out}
	for _, c := range []struct {
		arg            string
		noLines, piped bool
	}{
		{"x.jsonl", true, true},
		{"a/b.json", true, true},
		{"x.ndjson.gz", true, true},
		{"x.zst", true, true},
		{"data", true, false},
		{"out", false, false},  // stdout's file
		{"logs", false, false}, // a directory
		{"type", false, false}, // no such file
		{"name==x.json", false, false},
		{"n>1.json", false, false},
		{"k=x.json", false, false},
		{"!x.json", false, false},
		{`x\.json`, false, false},
		{`\data`, false, false},
		{"", false, false},
	} {
		if got := noLines.fileLike(c.arg); got != c.noLines {
			t.Errorf("%q, stdin bringing no lines: %v, want %v", c.arg, got, c.noLines)
		}
		if got := lines.fileLike(c.arg); got != c.piped {
			t.Errorf("%q, stdin bringing lines: %v, want %v", c.arg, got, c.piped)
		}
	}
}
