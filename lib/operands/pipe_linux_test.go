package operands

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
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
	r := New([]string{name}, nil, openFile)
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

// TestReadyOnAPipe: a pipe has more ready when bytes wait in it.
func TestReadyOnAPipe(t *testing.T) {
	pr, pw := newPipe(t)
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
	if got := bufferOf(t, pr); got != 64<<10 {
		t.Fatalf("a slow writer's pipe was grown to %d bytes", got)
	}
}

// TestAFullPipeIsGrown: a read that finds the pipe full grows it to
// pipeSize, where the system lets this user.
func TestAFullPipeIsGrown(t *testing.T) {
	if !mayGrow(t) {
		t.Skip("this user may not give a pipe 1 MiB")
	}
	pr, pw := newPipe(t)
	line := []byte(strings.Repeat("x", 63) + "\n")
	full := bytes.Repeat(line, bufferOf(t, pr)/len(line))
	if _, err := pw.Write(full); err != nil { // fits: no reader needed
		t.Fatal(err)
	}
	pw.Close()
	r := New([]string{Stdin}, pr, nil)
	buf := make([]byte, 256<<10) // as ndjson's Chunker reads
	n, err := r.Read(buf)
	if err != nil || !bytes.Equal(buf[:n], full) {
		t.Fatalf("read %d bytes of %d, %v", n, len(full), err)
	}
	if size := bufferOf(t, pr); size != pipeSize {
		t.Fatalf("the full pipe holds %d bytes, not %d", size, pipeSize)
	}
}

// bufferOf is the pipe's buffer size.
func bufferOf(t *testing.T, f *os.File) int {
	t.Helper()
	n := 0
	control(f, func(fd int) {
		var err error
		if n, err = unix.FcntlInt(uintptr(fd), unix.F_GETPIPE_SZ, 0); err != nil {
			t.Fatal(err)
		}
	})
	return n
}

// mayGrow tells whether a pipe of this user's can be given pipeSize.
func mayGrow(t *testing.T) bool {
	pr, _ := newPipe(t)
	ok := false
	control(pr, func(fd int) {
		_, err := unix.FcntlInt(uintptr(fd), unix.F_SETPIPE_SZ, pipeSize)
		ok = err == nil
	})
	return ok
}

// TestReadyAsACompressedFileIsRead: Ready between the reads of a .zst
// file, whose decoder reads the file on a goroutine of its own (the race
// detector watches), and of a .gz one: true while there is more, false
// at the end.
func TestReadyAsACompressedFileIsRead(t *testing.T) {
	var text strings.Builder
	for i := range 200000 {
		fmt.Fprintf(&text, "{\"n\":%d,\"p\":\"%s\"}\n", i, strings.Repeat("x", i%50))
	}
	dir := t.TempDir()
	for name, data := range map[string][]byte{"a.zst": zst(t, text.String()), "a.gz": gz(t, text.String())} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		r := New([]string{path}, nil, openFile)
		buf := make([]byte, 256<<10)
		var got bytes.Buffer
		ready := 0
		for {
			n, err := r.Read(buf)
			got.Write(buf[:n])
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Ready() {
				ready++
			}
		}
		if got.String() != text.String() || ready == 0 || r.Ready() {
			t.Fatalf("%s: read %d bytes of %d, ready %d times, ready at the end %v", name, got.Len(), text.Len(), ready, r.Ready())
		}
	}
}

// TestACompressedPipeIsNeverReady: bytes waiting in a pipe of gzip may be
// part of a block that needs more to be decoded, so a compressed pipe
// never says it has more ready: the lines it gave go on at once.
func TestACompressedPipeIsNeverReady(t *testing.T) {
	pr, pw := newPipe(t)
	var a, b bytes.Buffer // the first line, flushed, and the rest
	zw := gzip.NewWriter(&a)
	zw.Write([]byte("{\"a\":1}\n"))
	zw.Flush()
	zw.Reset(&b) // (a second member: the reader reads on into it)
	zw.Write([]byte("{\"a\":2}\n"))
	zw.Close()
	if _, err := pw.Write(a.Bytes()); err != nil {
		t.Fatal(err)
	}
	r := New([]string{Stdin}, pr, nil)
	buf := make([]byte, 64)
	if n, err := r.Read(buf); string(buf[:n]) != "{\"a\":1}\n" || err != nil {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	if _, err := pw.Write(b.Bytes()[:5]); err != nil { // a part of what follows
		t.Fatal(err)
	}
	if r.Ready() {
		t.Fatal("a compressed pipe said it was ready")
	}
}

// openFile opens a file operand from the disk, as ndjson does.
func openFile(name string) (io.ReadCloser, error) { return os.Open(name) }
