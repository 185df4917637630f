package monitor

import (
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// files decides which changed files restart the service (Spec.Watch,
// less Spec.WatchExclude and what is never watched), by their paths
// relative to the service's directory.
type files struct {
	dir              string // the service's directory, absolute
	include, exclude []string
}

func newFiles(dir string, include, exclude []string) *files {
	f := &files{dir: dir}
	for _, p := range include {
		f.include = append(f.include, f.norm(p))
	}
	for _, p := range exclude {
		f.exclude = append(f.exclude, f.norm(p))
	}
	return f
}

// norm is a pattern relative to the directory, without "./" or a
// trailing slash.
func (f *files) norm(p string) string {
	if filepath.IsAbs(p) {
		if r, err := filepath.Rel(f.dir, p); err == nil {
			p = r
		}
	}
	p = strings.TrimSuffix(path.Clean(filepath.ToSlash(p)), "/")
	if p == "." {
		return "**" // the directory itself: everything under it
	}
	return p
}

// neverDirs are directories never watched: version control's, and
// Python's bytecode, which a service writes itself as it imports.
var neverDirs = []string{".git", ".hg", ".svn", ".jj", ".bzr", "_darcs", "__pycache__"}

// generatedDirs are directories of what tools write as they run — the
// packages npm installs, bundlers' and test runners' caches, build output
// — which a watch of the whole directory would otherwise take for an
// edit, and restart the service on its own writes (vite writes
// node_modules/.vite as it starts). They are watched only when a --watch
// pattern names them.
var generatedDirs = []string{"node_modules", ".vite", ".next", ".nuxt", ".svelte-kit", ".turbo", ".parcel-cache",
	".cache", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox", ".venv", "coverage", ".nyc_output"}

// named reports whether an include pattern names dir itself: then what is
// under it is watched though it is a generated directory.
func (f *files) named(dir string) bool {
	return slices.ContainsFunc(f.include, func(p string) bool { return slices.Contains(strings.Split(p, "/"), dir) })
}

// generated reports whether a path's directories hold a generated one no
// pattern names.
func (f *files) generated(dirs []string) bool {
	return slices.ContainsFunc(dirs, func(s string) bool { return slices.Contains(generatedDirs, s) && !f.named(s) })
}

// editorFile reports an editor's swap, backup or temporary file: vim's
// .a.py.swp and 4913, emacs's a.py~, #a.py# and .#a.py, JetBrains'
// a.py___jb_tmp___.
func editorFile(name string) bool {
	for _, p := range []string{".*.sw?", "*.sw?", "*~", "#*#", ".#*", "4913", "*___jb_tmp___", "*___jb_old___", "*.tmp", ".DS_Store"} {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// wants reports whether a change to the file at abs restarts the
// service, and its path relative to the directory.
func (f *files) wants(abs string) (string, bool) {
	rel, err := filepath.Rel(f.dir, abs)
	if err != nil {
		return "", false
	}
	rel = filepath.ToSlash(rel)
	segs := strings.Split(rel, "/")
	if editorFile(segs[len(segs)-1]) || slices.ContainsFunc(segs[:len(segs)-1], func(s string) bool { return slices.Contains(neverDirs, s) }) ||
		f.generated(segs[:len(segs)-1]) {
		return rel, false
	}
	return rel, matchAny(f.include, segs) && !matchAny(f.exclude, segs)
}

// skipDir reports a directory not to watch at all: never watched, or
// excluded.
func (f *files) skipDir(abs string) bool {
	if base := filepath.Base(abs); slices.Contains(neverDirs, base) || f.generated([]string{base}) {
		return true
	}
	rel, err := filepath.Rel(f.dir, abs)
	if err != nil || rel == "." {
		return false
	}
	return matchAny(f.exclude, strings.Split(filepath.ToSlash(rel), "/"))
}

// roots are the directories to watch: for each pattern, the directory
// its fixed part names (the service's directory for a pattern without
// a slash), or the nearest one that exists up to the service's
// directory; none inside another.
func (f *files) roots() []string {
	var out []string
	for _, p := range f.include {
		root := f.dir
		if strings.Contains(p, "/") || !hasMeta(p) {
			var fixed []string
			for _, s := range strings.Split(p, "/") {
				if hasMeta(s) {
					break
				}
				fixed = append(fixed, s)
			}
			root = filepath.Join(f.dir, filepath.FromSlash(strings.Join(fixed, "/")))
			if !strings.Contains(p, "/") && !isDir(root) {
				root = f.dir // a name at any depth
			}
		}
		// Up to the service's directory, not above it: once that is
		// gone (a worktree removed), nothing of it is watched, not its
		// parent's whole tree.
		for !isDir(root) && root != f.dir && root != filepath.Dir(root) {
			root = filepath.Dir(root)
		}
		if isDir(root) {
			out = append(out, root)
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	return slices.DeleteFunc(out, func(r string) bool {
		return slices.ContainsFunc(out, func(o string) bool { return o != r && strings.HasPrefix(r, o+string(filepath.Separator)) })
	})
}

func hasMeta(s string) bool { return strings.ContainsAny(s, "*?[") }

// matchAny reports whether a path, as its segments, matches one of the
// patterns: a pattern without a slash matches any of its segments (a
// name at any depth, or a directory's and everything under it); one
// with slashes matches from the start, ** standing for any number of
// directories, and a match of its leading directories is a match of
// everything under them.
func matchAny(patterns []string, segs []string) bool {
	for _, p := range patterns {
		if !strings.Contains(p, "/") {
			if slices.ContainsFunc(segs, func(s string) bool { ok, _ := path.Match(p, s); return ok }) {
				return true
			}
			continue
		}
		if matchSegs(strings.Split(p, "/"), segs) {
			return true
		}
	}
	return false
}

func matchSegs(p, s []string) bool {
	for len(p) > 0 {
		if p[0] == "**" {
			for i := 0; i <= len(s); i++ {
				if matchSegs(p[1:], s[i:]) {
					return true
				}
			}
			return false
		}
		if len(s) == 0 {
			return false
		}
		if ok, _ := path.Match(p[0], s[0]); !ok {
			return false
		}
		p, s = p[1:], s[1:]
	}
	return true // the pattern named a directory: everything under it
}
