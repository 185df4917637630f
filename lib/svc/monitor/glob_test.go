package monitor

import (
	"os"
	"path/filepath"
	"slices"
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
	// What tools write as they run is not watched, unless a pattern names
	// it: vite's cache under node_modules restarted vite in a loop.
	all := newFiles(dir, []string{"."}, nil)
	for _, rel := range []string{"node_modules/.vite/lock/x.json", "web/node_modules/pkg/index.js", ".next/cache/a", ".pytest_cache/v/x"} {
		if _, ok := all.wants(filepath.Join(dir, rel)); ok {
			t.Errorf(". watches %s", rel)
		}
	}
	if !all.skipDir(filepath.Join(dir, "node_modules")) {
		t.Errorf(". walks node_modules")
	}
	named := newFiles(dir, []string{"src", "node_modules/mylib"}, nil)
	if _, ok := named.wants(filepath.Join(dir, "node_modules", "mylib", "index.js")); !ok || named.skipDir(filepath.Join(dir, "node_modules")) {
		t.Errorf("a pattern naming node_modules/mylib does not watch it")
	}
}

// A root that is gone is watched from the nearest directory that exists,
// up to the service's own; once that is gone too (a worktree removed),
// nothing is watched, never its parent's whole tree.
func TestRootsStayInTheServiceDirectory(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "wt")
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := newFiles(dir, []string{"src/**/*.py", "lib/x"}, nil)
	if got := f.roots(); !slices.Equal(got, []string{dir}) {
		t.Errorf("roots %v, want %v (lib/x missing: its nearest, the service's directory, holds src)", got, dir)
	}
	os.RemoveAll(dir)
	if got := f.roots(); len(got) != 0 {
		t.Errorf("with the service's directory gone, roots %v, want none", got)
	}
}
