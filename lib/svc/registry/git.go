package registry

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// A worktree is the git checkout a directory belongs to: the main one, or
// one made by git worktree add. It is learnt by reading .git itself (a
// directory in the main checkout; in a linked worktree a file "gitdir:
// DIR", whose DIR/commondir names the repository's own directory —
// gitrepository-layout(5)), not by running git rev-parse: a start pays no
// exec, svc needs no git, and what tells a removed worktree is the same
// files being gone.

// FindGit is the git checkout dir belongs to: its top directory, the
// repository's common git directory, and whether it is the main
// checkout; ok is false outside git. dir must be absolute.
func FindGit(dir string) (top, repo string, main, ok bool) {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		g := filepath.Join(d, ".git")
		st, err := os.Stat(g)
		switch {
		case err == nil && st.IsDir() && isGitDir(g):
			return d, g, true, true
		case err == nil && !st.IsDir():
			return linkedGit(d, g)
		}
		if d == filepath.Dir(d) {
			return "", "", false, false
		}
	}
}

// isGitDir reports whether g is a repository's directory as git tells
// one (setup.c's is_git_directory): HEAD, objects/ and refs/ in it. An
// empty .git another program made is not, and git looks above it.
func isGitDir(g string) bool {
	for _, p := range []struct {
		name string
		dir  bool
	}{{"HEAD", false}, {"objects", true}, {"refs", true}} {
		st, err := os.Stat(filepath.Join(g, p.name))
		if err != nil || st.IsDir() != p.dir {
			return false
		}
	}
	return true
}

// linkedGit is the checkout at top whose .git, g, is a file.
func linkedGit(top, g string) (string, string, bool, bool) {
	gitdir, err := readGitFile(g)
	if err != nil {
		return "", "", false, false
	}
	if b, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitdir, c)
		}
		return top, filepath.Clean(c), false, true
	}
	// A submodule's .git file: its own repository's main checkout.
	return top, gitdir, true, true
}

// readGitFile reads a .git file: "gitdir: DIR", DIR relative to the file.
func readGitFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return "", fmt.Errorf("%s is not a .git file", path)
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(filepath.Dir(path), dir)
	}
	return filepath.Clean(dir), nil
}

// Gone reports whether the worktree no longer exists: its directory, or
// its .git, is gone (git worktree remove, or rm -rf), or git has pruned
// it from the repository.
// What cannot be read now (a permission, an I/O error) is not gone: gc
// stops what it finds gone, so only a certain absence counts.
func (w Worktree) Gone() bool {
	if DirGone(w.Top) {
		return true
	}
	if w.Repo == "" {
		return false
	}
	g := filepath.Join(w.Top, ".git")
	st, err := os.Stat(g)
	if err != nil {
		return missing(err)
	}
	if !st.IsDir() {
		if _, err := os.ReadFile(g); err != nil {
			return missing(err)
		}
	}
	top, repo, _, ok := FindGit(w.Top)
	return !ok || top != w.Top || repo != w.Repo
}

// DirGone reports whether dir is certainly not a directory any more: it
// does not exist, or is something else now.
func DirGone(dir string) bool {
	st, err := os.Stat(dir)
	if err != nil {
		return missing(err)
	}
	return !st.IsDir()
}

// missing reports whether err says a path does not exist.
func missing(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ENOTDIR)
}
