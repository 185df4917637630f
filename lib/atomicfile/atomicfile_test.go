package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// The file is replaced with its mode, and nothing else is left in the
// directory.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	for _, text := range []string{"one\n", "two, longer\n"} {
		if err := Write(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		fi, _ := os.Stat(path)
		if err != nil || string(b) != text || fi.Mode().Perm() != 0o600 {
			t.Errorf("%q %v %v", b, err, fi.Mode())
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left in the directory: %v", entries)
	}
}

// A symlink planted at the path, or at the name a fixed temporary file
// would have had, is replaced or ignored: what it points at is untouched.
func TestWriteNeverFollowsASymlink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("keep\n"), 0o644)
	path := filepath.Join(dir, "pid")
	os.Symlink(victim, path)
	os.Symlink(victim, path+".tmp")
	if err := Write(path, []byte("42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
		t.Errorf("the symlink's target was written: %q", b)
	}
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("%s is not a regular file: %v %v", path, fi.Mode(), err)
	}
}

// A directory that cannot be written to is an error, and path is as it
// was.
func TestWriteFails(t *testing.T) {
	if err := Write(filepath.Join(t.TempDir(), "no", "such", "f"), []byte("x"), 0o600); err == nil {
		t.Error("no error for a missing directory")
	}
}
