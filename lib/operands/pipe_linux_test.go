package operands

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReadyOnAFile: a regular file has more ready until it is read to
// its end; between files the next read opens the next, and Ready says no.
func TestReadyOnAFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "a.ndjson")
	if err := os.WriteFile(name, []byte("{\"a\":1}\n{\"a\":2}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := New([]string{name}, nil, func(n string) (io.ReadCloser, error) { return os.Open(n) })
	if r.Ready() {
		t.Fatal("ready before the file is opened")
	}
	buf := make([]byte, 8)
	if n, err := r.Read(buf); n != 8 || err != nil {
		t.Fatalf("read %d, %v", n, err)
	}
	if !r.Ready() {
		t.Fatal("not ready with half the file left")
	}
	if _, err := io.ReadAll(r); err != nil {
		t.Fatal(err)
	}
	if r.Ready() {
		t.Fatal("ready at the end")
	}
}

// TestReadyOnAPipe: a pipe has more ready when bytes wait in it, and is
// given a 1 MiB buffer so that its writer can run ahead.
func TestReadyOnAPipe(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	if _, err := pw.Write([]byte("{\"a\":1}\n")); err != nil {
		t.Fatal(err)
	}
	r := New([]string{Stdin}, pr, nil)
	buf := make([]byte, 64)
	if n, err := r.Read(buf); n != 8 || err != nil {
		t.Fatalf("read %d, %v", n, err)
	}
	if r.Ready() {
		t.Fatal("ready with the pipe empty")
	}
	if _, err := pw.Write([]byte("{\"a\":2}\n")); err != nil {
		t.Fatal(err)
	}
	if !r.Ready() {
		t.Fatal("not ready with a line in the pipe")
	}
	size, err := unix.FcntlInt(pr.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	if max := pipeMax(t); size < min(pipeSize, max) {
		t.Fatalf("the pipe holds %d bytes, not %d", size, min(pipeSize, max))
	}
}

// pipeMax is the system's most for a pipe's buffer.
func pipeMax(t *testing.T) int {
	b, err := os.ReadFile("/proc/sys/fs/pipe-max-size")
	if err != nil {
		return pipeSize
	}
	n := 0
	for _, c := range b {
		if c >= '0' && c <= '9' {
			n = n*10 + int(c-'0')
		}
	}
	return n
}
