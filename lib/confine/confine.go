// Package confine tells whether a path lies within a working copy once
// its symlinks are resolved: what a level's "in the working copy" means
// for a write, whichever agent asks for it.
package confine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutside is a path outside the working copy, once its symlinks are
// resolved.
var ErrOutside = errors.New("outside the working copy")

// Within resolves path's symlinks (those of the part that exists: a file
// to be written need not) and returns it when it lies within root, itself
// already resolved; otherwise ErrOutside. A relative path is taken from
// root.
func Within(root, path string) (string, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	path = filepath.Clean(path)
	resolved, err := resolve(path, 40)
	if err != nil {
		return "", err
	}
	if resolved != root && !strings.HasPrefix(resolved, root+string(filepath.Separator)) && root != "/" {
		return "", ErrOutside
	}
	return resolved, nil
}

// ErrGitDir is a path in a .git of the working copy (the repository's
// directory, or a submodule's .git file): its config and hooks name
// programs git runs (core.fsmonitor, diff.external, a filter's clean
// command, a hook), so that a write there is a command, not an edit.
var ErrGitDir = errors.New("in the repository's .git, whose config and hooks name programs git runs")

// Writable is Within for a write that a level lets edit the working copy:
// it is ErrGitDir when the path, its symlinks resolved, is in a .git
// below root (as codex's workspace-write sandbox keeps the working copy's
// .git read-only).
func Writable(root, path string) (string, error) {
	resolved, err := Within(root, path)
	if err != nil {
		return "", err
	}
	for _, part := range strings.Split(strings.TrimPrefix(resolved, root), string(filepath.Separator)) {
		if strings.EqualFold(part, ".git") {
			return "", ErrGitDir
		}
	}
	return resolved, nil
}

// resolve resolves the symlinks of the longest part of path that exists,
// following at most hops dangling links.
func resolve(path string, hops int) (string, error) {
	if hops == 0 {
		return "", ErrOutside // a loop: nowhere to be confined
	}
	r, err := filepath.EvalSymlinks(path)
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	dir, base := filepath.Split(path)
	dir = filepath.Clean(dir)
	if dir == path {
		return path, nil
	}
	if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
		// A dangling symlink: where it points is what a write makes.
		target, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
		return resolve(filepath.Clean(target), hops-1)
	}
	d, err := resolve(dir, hops)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, base), nil
}

// Root is a working copy as Within takes it: dir ("" the current
// directory) made absolute, its symlinks resolved.
func Root(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// Roots are dirs as Within takes them ("" the current directory), each as
// given where it cannot be resolved.
func Roots(dirs []string) []string {
	out := make([]string, len(dirs))
	for i, d := range dirs {
		if r, err := Root(d); err == nil {
			d = r
		}
		out[i] = d
	}
	return out
}
