package monitor

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFilesWants(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "src", "pkg"), 0o755)
	f := newFiles(dir, []string{"src", "*.toml", "lib/**/*.go"}, []string{"*_test.py", "src/gen"})
	for rel, want := range map[string]bool{
		"src/a.py": true, "src/pkg/b.py": true, "src/.a.py.swp": false, "src/a.py~": false, "src/a_test.py": false,
		"src/.git/x": false, "src/__pycache__/a.pyc": false, "src/gen/x.py": false, "app.toml": true, "sub/app.toml": true,
		"lib/x.go": true, "lib/a/b/x.go": true, "lib/x.c": false, "other/a.py": false, "src/4913": false, "src/#a.py#": false,
	} {
		if _, got := f.wants(filepath.Join(dir, rel)); got != want {
			t.Errorf("wants(%s) = %v, want %v", rel, got, want)
		}
	}
	if _, ok := newFiles(dir, []string{"."}, nil).wants(filepath.Join(dir, "src", "a.py")); !ok {
		t.Errorf(". does not watch src/a.py")
	}
	roots := f.roots()
	if len(roots) != 1 || roots[0] != dir {
		t.Errorf("roots = %v, want [%s] (*.toml is any depth)", roots, dir)
	}
	if r := newFiles(dir, []string{"src/**/*.py"}, nil).roots(); len(r) != 1 || r[0] != filepath.Join(dir, "src") {
		t.Errorf("roots = %v, want src", r)
	}
	if !f.skipDir(filepath.Join(dir, "src", "gen")) || !f.skipDir(filepath.Join(dir, ".git")) || f.skipDir(filepath.Join(dir, "src")) {
		t.Errorf("skipDir wrong")
	}
}
