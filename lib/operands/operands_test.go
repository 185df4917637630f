package operands

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"compress/gzip"
	"github.com/klauspost/compress/zstd"
)

func gz(t *testing.T, s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	io.WriteString(w, s)
	w.Close()
	return b.Bytes()
}

func zst(t *testing.T, s string) []byte {
	var b bytes.Buffer
	w, err := zstd.NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, s)
	w.Close()
	return b.Bytes()
}

func opener(files map[string][]byte) Open {
	return func(name string) (io.ReadCloser, error) {
		b, ok := files[name]
		if !ok {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		return io.NopCloser(bytes.NewReader(b)), nil
	}
}

func TestReadsFilesInOrderDecompressed(t *testing.T) {
	files := map[string][]byte{
		"a":          []byte("1\n2\n"),
		"b.txt":      gz(t, "3\n4"), // gzip by its bytes, whatever the name; no final newline
		"c":          zst(t, "5\n"),
		"d":          []byte{},
		"e":          []byte("\xef\xbb\xbf6\n"),
		"two-member": append(gz(t, "7\n"), gz(t, "8\n")...),
	}
	var seen []string
	r := New([]string{"a", "b.txt", "missing", "c", "-", "d", "e", "two-member"}, strings.NewReader("stdin\n"), opener(files))
	r.OnError = func(e *Error) { seen = append(seen, e.Name) }
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := "1\n2\n3\n4\n5\nstdin\n6\n7\n8\n"; string(got) != want {
		t.Fatalf("read %q, want %q", got, want)
	}
	if len(seen) != 1 || seen[0] != "missing" || len(r.Errors()) != 1 || !errors.Is(r.Errors()[0], fs.ErrNotExist) {
		t.Fatalf("errors %v, %v", seen, r.Errors())
	}
	for line, want := range map[int64]string{1: "a:1", 2: "a:2", 3: "b.txt:1", 4: "b.txt:2", 5: "c:1", 6: "-:1", 7: "e:1", 8: "two-member:1", 9: "two-member:2"} {
		f, n := r.Locate(line)
		if got := f + ":" + string(rune('0'+n)); got != want {
			t.Errorf("line %d is %s, want %s", line, got, want)
		}
	}
}

func TestLastFileKeepsItsMissingNewline(t *testing.T) {
	r := New([]string{"a"}, nil, opener(map[string][]byte{"a": []byte("1\n2")}))
	got, _ := io.ReadAll(r)
	if string(got) != "1\n2" {
		t.Fatalf("read %q", got)
	}
	if f, n := r.Locate(2); f != "a" || n != 2 {
		t.Fatalf("line 2 at %s:%d", f, n)
	}
}

func TestTruncatedGzipIsTheFilesError(t *testing.T) {
	whole := gz(t, strings.Repeat("{\"a\":1}\n", 1000))
	r := New([]string{"cut", "b"}, nil, opener(map[string][]byte{"cut": whole[:len(whole)/2], "b": []byte("2\n")}))
	got, _ := io.ReadAll(r)
	if !bytes.HasSuffix(got, []byte("2\n")) {
		t.Fatalf("the next file was not read after the broken one: %q", got[max(0, len(got)-20):])
	}
	if len(r.Errors()) != 1 || r.Errors()[0].Name != "cut" {
		t.Fatalf("errors %v", r.Errors())
	}
}

func TestSniff(t *testing.T) {
	for head, want := range map[string]Format{"\x1f\x8b\x08": Gzip, "\x28\xb5\x2f\xfd": Zstd, "{}": Plain, "\x1f": Plain, "": Plain} {
		if got := Sniff([]byte(head)); got != want {
			t.Errorf("Sniff(%q) = %v, want %v", head, got, want)
		}
	}
}

// Size sums regular files as stored; a pipe, or a file that cannot be
// looked at, makes it unknown.
func TestSize(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b.gz")
	os.WriteFile(a, []byte("{\"a\":1}\n"), 0o600)
	os.WriteFile(b, gz(t, strings.Repeat("{\"b\":2}\n", 100)), 0o600)
	fb, _ := os.Stat(b)
	in, err := os.Open(a)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	in.Seek(2, io.SeekStart) // read from where stdin is
	if n, ok := Size([]string{a, b, Stdin}, in, os.Stat); !ok || n != 8+fb.Size()+6 {
		t.Errorf("a, b.gz, stdin: %d %v, want %d", n, ok, 8+fb.Size()+6)
	}
	pr, _ := newPipe(t)
	for _, c := range []struct {
		names []string
		stdin io.Reader
	}{
		{[]string{a, Stdin}, pr},
		{[]string{Stdin}, strings.NewReader("{}\n")},
		{[]string{a, filepath.Join(dir, "none")}, nil},
		{[]string{dir}, nil},
	} {
		if n, ok := Size(c.names, c.stdin, os.Stat); ok {
			t.Errorf("%q: size %d known, want unknown", c.names, n)
		}
	}
}

// bomb is a zstd frame of a few bytes that asks for a window of
// 1<<windowLog bytes: magic, a descriptor with no content size, the
// window, then one raw last block of "{}\n".
func bomb(windowLog int) []byte {
	return []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, byte(windowLog-10) << 3, 3<<3 | 1, 0, 0, '{', '}', '\n'}
}

func TestZstdWindowOverTheCapIsTheFilesError(t *testing.T) {
	files := map[string][]byte{
		"ok.zst":      bomb(20),
		"bomb.zst":    bomb(29),
		"later.zst":   append(zst(t, "1\n"), bomb(29)...),
		"the-max.zst": bomb(27),
	}
	r := New([]string{"ok.zst", "bomb.zst", "later.zst", "the-max.zst"}, nil, opener(files))
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{}\n1\n{}\n"; string(got) != want {
		t.Fatalf("read %q, want %q", got, want)
	}
	errs := r.Errors()
	if len(errs) != 2 || errs[0].Name != "bomb.zst" || errs[1].Name != "later.zst" {
		t.Fatalf("errors %v", errs)
	}
	var we *WindowError
	if !errors.As(errs[0], &we) || we.Window != 512<<20 || we.Max != MaxWindow {
		t.Fatalf("bomb.zst: %#v", errs[0].Err)
	}
	if got := errs[0].Error(); got != "bomb.zst: the zstd window is 512 MiB, over the 128 MiB read" {
		t.Errorf("bomb.zst's error says %q", got)
	}
	if !errors.As(errs[1], &we) || we.Window != 0 {
		t.Fatalf("later.zst: %#v", errs[1].Err)
	}
	if got := errs[1].Error(); got != "later.zst: a zstd frame needs a window over 128 MiB, the most read" {
		t.Errorf("later.zst's error says %q", got)
	}
}

// newPipe is a pipe whose ends are closed when the test ends (an end the
// test closes first is closed once more, harmlessly).
func newPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.Close()
		w.Close()
	})
	return r, w
}
