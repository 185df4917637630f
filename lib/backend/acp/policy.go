package acp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// Policy is what a level lets an ACP agent do in a working copy: a pure
// function of the level and the working copy, the same for every agent.
//
//	level 1  read, search, fetch and think (and "other", which is asked
//	         for and so refused); no edit, delete, move or command, no
//	         write through fs/write_text_file, no terminal
//	level 2  as 1, and edit, delete and move within the working copy,
//	         and commands (terminals run in it)
//	level 3  as 2
//
// Ask puts what the level does not allow outright to the daemon (or
// editor): at level 1 everything but reads, at levels 2 and 3 commands and
// changes outside the working copy.
type Policy struct {
	Level int
	Ask   bool
	// AskAll: a policy applies to the run (host.Turn.AskAll), so every
	// call is to be put to the host, and the agent's mode is the one that
	// asks the most, as when the run asks.
	AskAll bool
	// Root is the working copy, its symlinks resolved.
	Root string
}

// ACP's kinds of tool call that change something.
var changing = map[string]bool{"edit": true, "delete": true, "move": true, "execute": true}

// Allows reports whether a call of kind touching paths may run without
// asking anyone.
func (p Policy) Allows(kind string, paths []string) bool {
	switch kind {
	case "read", "search", "fetch", "think":
		return true
	case "edit", "delete", "move":
		return p.Level >= 2 && p.inside(paths)
	case "execute":
		return p.Level >= 2 && !p.Ask
	}
	return p.Level >= 2 // other, or none said
}

// Forbids reports whether a call of kind touching paths is one the level
// forbids running unless agentry allowed it: a changing call (edit,
// delete, move, execute) the level does not allow outright. It is the
// tripwire's test. "other" is too vague to end a turn over.
func (p Policy) Forbids(kind string, paths []string) bool {
	return changing[kind] && !p.Allows(kind, paths)
}

func (p Policy) inside(paths []string) bool {
	for _, path := range paths {
		if _, err := Confine(p.Root, path); err != nil {
			return false
		}
	}
	return true
}

// ErrOutside is a path outside the working copy, once its symlinks are
// resolved.
var ErrOutside = errors.New("outside the working copy")

// Confine resolves path's symlinks (those of the part that exists: a file
// to be written need not) and returns it when it lies within root, itself
// already resolved; otherwise ErrOutside. A relative path is taken from
// root.
func Confine(root, path string) (string, error) {
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
