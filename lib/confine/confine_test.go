package confine

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Writable refuses a path in a .git of the working copy, however it is
// reached, and takes every other path within it; Within takes both.
func TestWritable(t *testing.T) {
	root, err := Root(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{".git/hooks", "sub/mod", "docs"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "sub/mod/.git"), []byte("gitdir: ../../.git/modules/mod\n"), 0o644)
	os.Symlink(".git/hooks", filepath.Join(root, "hooks"))
	os.Symlink(".git/config", filepath.Join(root, "cfg"))
	for path, want := range map[string]error{
		".git/config":             ErrGitDir,
		".git/hooks/pre-commit":   ErrGitDir,
		".git":                    ErrGitDir,
		root + "/.git/info/x":     ErrGitDir,
		"sub/mod/.git":            ErrGitDir,
		"hooks/post-checkout":     ErrGitDir, // a link into .git
		"cfg":                     ErrGitDir, // a dangling link to .git/config
		".GIT/config":             ErrGitDir,
		".gitignore":              nil,
		".github/workflows/a.yml": nil,
		"docs/.git-notes":         nil,
		"sub/mod/main.go":         nil,
		"../elsewhere":            ErrOutside,
	} {
		_, err := Writable(root, path)
		if !errors.Is(err, want) && !(want == nil && err == nil) {
			t.Errorf("Writable(%q) = %v, want %v", path, err, want)
		}
		if want == ErrGitDir {
			if _, err := Within(root, path); err != nil {
				t.Errorf("Within(%q) = %v: a .git is within the working copy", path, err)
			}
		}
	}
}
