package monitor

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/svc"
)

// A burst of changes is one restart, naming its first file and counting
// the files.
func TestDebounceBurst(t *testing.T) {
	in, out := make(chan fileChange), make(chan svc.Change, 4)
	go debounce(in, 50*time.Millisecond, func(string) bool { return true }, out)
	for i := range 20 {
		name := "a.py"
		if i%2 == 1 {
			name = "b.py"
		}
		in <- fileChange{rel: name, at: time.Now()}
		time.Sleep(5 * time.Millisecond) // the burst itself, not a wait for something
	}
	if c := burstEnd(t, out); c.File != "a.py" || c.Files != 2 {
		t.Errorf("change %+v, want a.py of 2 files", c)
	}
	in <- fileChange{rel: "c.py", at: time.Now()}
	if c := <-out; c.File != "c.py" {
		t.Errorf("the next burst is %+v, want c.py: the first burst was sent twice", c)
	}
}

// burstEnd is the change debounce sends at a burst's end, within 5s.
func burstEnd(t *testing.T, out <-chan svc.Change) svc.Change {
	t.Helper()
	select {
	case c := <-out:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("no change after the burst")
	}
	return svc.Change{}
}

// A burst whose first file is gone at its end (sed -i's temporary file,
// renamed onto the file it edits) names the first that is still there.
func TestDebounceNamesAFileThatIsThere(t *testing.T) {
	in, out := make(chan fileChange), make(chan svc.Change, 4)
	there := map[string]bool{"conf/app.conf": true}
	go debounce(in, 30*time.Millisecond, func(rel string) bool { return there[rel] }, out)
	in <- fileChange{rel: "conf/sedtZohXA", at: time.Now()}
	in <- fileChange{rel: "conf/app.conf", at: time.Now()}
	if c := burstEnd(t, out); c.File != "conf/app.conf" || c.Files != 2 {
		t.Errorf("change %+v, want conf/app.conf of 2 files", c)
	}
	in <- fileChange{rel: "gone.py", at: time.Now()}
	if c := <-out; c.File != "gone.py" {
		t.Errorf("a burst of files all gone is %+v, want its first", c)
	}
}

// Where inotify cannot watch, files are polled: a change, a new file and
// one removed are each seen, and what the patterns do not want is not.
func TestPollFiles(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.py"), nil, 0o600)
	os.WriteFile(filepath.Join(dir, "gone.py"), nil, 0o600)
	out := make(chan fileChange, 16)
	f := newFiles(dir, []string{"*.py"}, nil)
	first := f.stamps()
	go pollFrom(f, first, out)
	os.WriteFile(filepath.Join(dir, "a.py~"), []byte("x"), 0o600)
	os.WriteFile(filepath.Join(dir, "a.py"), []byte("changed"), 0o600)
	os.WriteFile(filepath.Join(dir, "new.py"), nil, 0o600)
	os.Remove(filepath.Join(dir, "gone.py"))
	seen := map[string]bool{}
	deadline := time.After(3 * pollEvery)
	for len(seen) < 3 {
		select {
		case c := <-out:
			seen[c.rel] = true
		case <-deadline:
			t.Fatalf("seen %v, want a.py, new.py and gone.py", seen)
		}
	}
	if seen["a.py~"] {
		t.Errorf("an editor's backup was taken for a change")
	}
}
