package policy

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// tree is the working copy a call's paths are relative to: as given and
// with its symlinks resolved.
type tree struct{ abs, real string }

func newTree(root string) tree {
	if root == "" {
		root = "."
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		abs = filepath.Clean(root)
	}
	return tree{abs: abs, real: realpath(abs)}
}

// place is one form of a path as rules match it: rel is relative to the
// working copy (slash-separated), or absolute when outside it; abs is the
// path whole.
type place struct{ rel, abs string }

// places are the forms a path p is matched in: as given (.. taken out by
// its text) and with its symlinks resolved, when that differs.
func (t tree) places(p, dir string) []place {
	base := t.abs
	if dir != "" {
		if filepath.IsAbs(dir) {
			base = dir
		} else {
			base = filepath.Join(t.abs, dir)
		}
	}
	raw := p
	if !filepath.IsAbs(raw) {
		raw = base + string(filepath.Separator) + p
	}
	given := filepath.Clean(raw)
	real := realpath(raw)
	ps := []place{t.place(given)}
	if real != given {
		ps = append(ps, t.place(real))
	}
	// ~/x: the home directory's x, as a shell's word and a tool's path
	// expand it (and, strictest wins, a file named ~ here too).
	if rest, ok := strings.CutPrefix(filepath.ToSlash(p), "~"); ok && (rest == "" || rest[0] == '/') {
		if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
			h := filepath.Join(home, rest)
			ps = append(ps, t.place(h))
			if hr := realpath(h); hr != h {
				ps = append(ps, t.place(hr))
			}
		}
	}
	return ps
}

func (t tree) place(abs string) place {
	for _, r := range []string{t.abs, t.real} {
		rel, err := filepath.Rel(r, abs)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return place{rel: filepath.ToSlash(rel), abs: filepath.ToSlash(abs)}
		}
	}
	return place{rel: filepath.ToSlash(abs), abs: filepath.ToSlash(abs)}
}

// matches tells whether a path pattern matches a place: an absolute
// pattern the absolute path; a relative one the path in the working
// copy, and a path outside it only when it starts with ** (**/.env).
func (pl place) matches(pat string) bool {
	switch {
	case strings.HasPrefix(pat, "/"):
		return matchPath(pat, pl.abs)
	case !strings.HasPrefix(pl.rel, "/"):
		return matchPath(pat, pl.rel)
	default:
		return strings.HasPrefix(pat, "**") && matchPath(pat, pl.abs)
	}
}

// maxLinks is how many symlinks realpath follows, as the kernel's limit.
const maxLinks = 40

// realpath resolves every symlink of an absolute path as the kernel
// would, .. after a link included, as far as the path exists; the rest,
// not yet created, is added by its text.
func realpath(p string) string {
	todo := strings.Split(filepath.ToSlash(p), "/")
	cur := string(filepath.Separator)
	links := 0
	for len(todo) > 0 {
		part := todo[0]
		todo = todo[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 || links >= maxLinks {
			if err != nil || links >= maxLinks {
				return filepath.Join(append([]string{next}, todo...)...)
			}
			cur = next
			continue
		}
		links++
		target, err := os.Readlink(next)
		if err != nil {
			return filepath.Join(append([]string{next}, todo...)...)
		}
		if filepath.IsAbs(target) {
			cur = string(filepath.Separator)
		}
		todo = append(strings.Split(filepath.ToSlash(target), "/"), todo...)
	}
	return cur
}

// The bounds of a directory's walk: past them, what is below could be
// any file.
const (
	maxWalk      = 50000 // entries
	maxWalkDepth = 32    // directories below the one read
)

// checkRead is the verdict of a read of a path: its own, and when it is
// a directory, the strictest of a read of everything below it that an
// ask or deny read rule names (a Grep or Glob of . reads every file in
// it), the first in the walk's (lexical) order; Match names that file.
// Symlinks below are matched as themselves and as what they point to,
// and not followed into. Past maxWalk entries or maxWalkDepth levels, the
// rest could be any file: the strictest ask or deny read rule.
func (t tree) checkRead(rules []rule, p, dir string) Decision {
	pls := t.places(p, dir)
	d := checkPath(rules, pls)
	if d.Verdict == Deny || !hasStrict(rules) {
		return d
	}
	top := realpath(filepath.FromSlash(pls[0].abs))
	if fi, err := os.Stat(top); err != nil || !fi.IsDir() {
		return d
	}
	var worst Decision
	entries := 0
	over := false
	_ = filepath.WalkDir(top, func(fp string, e fs.DirEntry, err error) error {
		if err != nil || fp == top {
			return nil
		}
		entries++
		rel, _ := filepath.Rel(top, fp)
		if entries > maxWalk || strings.Count(rel, string(filepath.Separator)) >= maxWalkDepth {
			over = true
			return fs.SkipAll
		}
		given := filepath.Join(filepath.FromSlash(pls[0].abs), rel)
		forms := []place{t.place(given)}
		if fp != given {
			forms = append(forms, t.place(fp))
		}
		if e.Type()&fs.ModeSymlink != 0 {
			if r := realpath(fp); r != fp {
				forms = append(forms, t.place(r))
			}
		}
		if c := checkPath(rules, forms); c.Verdict >= Ask && c.Verdict > worst.Verdict {
			worst = c
			if c.Verdict == Deny {
				return fs.SkipAll
			}
		}
		return nil
	})
	if over && worst.Verdict < Deny {
		worst = anyPath(rules, pls[0].rel)
		worst.Match = pls[0].rel + " (a directory of more than agentry walks, so it could hold any file)"
	}
	if worst.Verdict > d.Verdict {
		return worst
	}
	return d
}

// hasStrict tells whether any rule asks or denies.
func hasStrict(rules []rule) bool {
	for _, r := range rules {
		if r.verdict >= Ask {
			return true
		}
	}
	return false
}
