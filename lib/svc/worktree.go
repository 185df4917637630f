package svc

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/agentry/agentry/lib/atomicfile"
)

// A worktree is the git checkout a service's directory belongs to: the
// main one, or one made by git worktree add. svc learns it by reading
// .git itself (a directory in the main checkout; in a linked worktree a
// file "gitdir: DIR", whose DIR/commondir names the repository's own
// directory — gitrepository-layout(5)), not by running git rev-parse: a
// start pays no exec, svc needs no git, and what tells a removed
// worktree is the same files being gone.
//
// Each worktree svc has met is kept in HOME/.worktrees.json, changed only
// under HOME/.worktrees.lock: its slot, a small integer unique among the
// live worktrees of its repository (the main checkout 0, the others from
// 1), its slug, a DNS label unique among all it holds, and the block of
// ports it reserved. An entry lives until svc gc finds its worktree gone,
// so the slot, slug and block stay the worktree's while it exists.

// Worktree is a git worktree as svc knows it.
type Worktree struct {
	Top  string `json:"top"`            // its top directory
	Repo string `json:"repo,omitempty"` // the repository's common git directory; "" outside git
	Main bool   `json:"main,omitempty"` // the repository's main checkout
	Slug string `json:"slug"`           // a short name: letters, digits and '-'
	Slot int    `json:"slot"`
	// PortBase and PortBlock are the ports it reserved: PortBlock of them
	// from PortBase on; none when PortBlock is 0.
	PortBase  int `json:"portBase,omitempty"`
	PortBlock int `json:"portBlock,omitempty"`
}

// FindGit is the git checkout dir belongs to: its top directory, the
// repository's common git directory, and whether it is the main
// checkout; ok is false outside git. dir must be absolute.
func FindGit(dir string) (top, repo string, main, ok bool) {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		g := filepath.Join(d, ".git")
		st, err := os.Stat(g)
		switch {
		case err == nil && st.IsDir():
			return d, g, true, true
		case err == nil:
			gitdir, err := readGitFile(g)
			if err != nil {
				return "", "", false, false
			}
			common := gitdir
			if b, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
				c := strings.TrimSpace(string(b))
				if !filepath.IsAbs(c) {
					c = filepath.Join(gitdir, c)
				}
				return d, filepath.Clean(c), false, true
			}
			// A submodule's .git file: its own repository's main checkout.
			return d, common, true, true
		}
		if d == filepath.Dir(d) {
			return "", "", false, false
		}
	}
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
	if dirGone(w.Top) {
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

// dirGone reports whether dir is certainly not a directory any more: it
// does not exist, or is something else now.
func dirGone(dir string) bool {
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

// worktreeFile is the registry's file.
func worktreeFile(home string) string { return filepath.Join(home, ".worktrees.json") }

// WorktreeOf is the worktree dir belongs to, its slot and slug claimed on
// first use; nil outside git. dir must be absolute.
func WorktreeOf(home, dir string) (*Worktree, error) {
	top, repo, main, ok := FindGit(dir)
	if !ok {
		return nil, nil
	}
	var out *Worktree
	err := editWorktrees(home, func(ws []Worktree) ([]Worktree, error) {
		ws, i := claimWorktree(ws, top, repo, main)
		w := ws[i]
		out = &w
		return ws, nil
	})
	return out, err
}

// claimWorktree is the index of top's entry, added when it has none.
func claimWorktree(ws []Worktree, top, repo string, main bool) ([]Worktree, int) {
	if i := slices.IndexFunc(ws, func(w Worktree) bool { return w.Top == top }); i >= 0 {
		if ws[i].Repo == repo && ws[i].Main == main {
			return ws, i
		}
		// Another checkout at the same place since (of another
		// repository, or now the main one): it is a worktree of its own.
		ws = slices.Delete(ws, i, i+1)
	}
	w := Worktree{Top: top, Repo: repo, Main: main}
	if !main {
		slots := map[int]bool{0: true}
		for _, o := range ws {
			if o.Repo == repo {
				slots[o.Slot] = true
			}
		}
		for w.Slot = 1; slots[w.Slot]; w.Slot++ {
		}
	}
	base := slug(filepath.Base(top))
	w.Slug = base
	for n := 2; slices.ContainsFunc(ws, func(o Worktree) bool { return o.Slug == w.Slug }); n++ {
		w.Slug = base + "-" + strconv.Itoa(n)
	}
	return append(ws, w), len(ws)
}

// slug makes a DNS label of a directory's name: lower-case letters,
// digits and '-', at most 40 of them.
func slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if len(s) > 40 {
		s = strings.TrimRight(s[:40], "-")
	}
	if s == "" {
		s = "wt"
	}
	return s
}

// The range port blocks are taken from: below PortAuto's, so that a
// block and a port picked alone never meet.
const (
	blockPortLow  = 10000
	blockPortHigh = autoPortLow
)

// ReservePorts gives the worktree of dir (or dir itself, outside git) a
// block of n consecutive ports, the same for as long as it is listed, and
// returns its first port. Ports another worktree reserved, or that cannot
// be listened on now, are not given; a block reserved before with
// another size is given again.
func ReservePorts(home, dir string, n int) (*Worktree, error) {
	if n < 1 || n > 1000 {
		return nil, &FieldError{Field: "port_block", Value: strconv.Itoa(n), Err: ErrZero}
	}
	top, repo, main, ok := FindGit(dir)
	if !ok {
		top, main = dir, true
	}
	var out *Worktree
	err := editWorktrees(home, func(ws []Worktree) ([]Worktree, error) {
		ws, i := claimWorktree(ws, top, repo, main)
		if ws[i].PortBlock != n {
			base, err := pickBlock(ws, i, n)
			if err != nil {
				return nil, err
			}
			ws[i].PortBase, ws[i].PortBlock = base, n
		}
		w := ws[i]
		out = &w
		return ws, nil
	})
	return out, err
}

// pickBlock finds n free ports in a row for ws[i]: from a place its top
// directory hashes to, on by whole blocks.
func pickBlock(ws []Worktree, i, n int) (int, error) {
	h := fnv.New32a()
	h.Write([]byte(ws[i].Top))
	count := (blockPortHigh - blockPortLow) / n
	first := int(h.Sum32() % uint32(count))
	for k := range count {
		base := blockPortLow + ((first+k)%count)*n
		if blockFree(ws, i, base, n) {
			return base, nil
		}
	}
	return 0, fmt.Errorf("no %d free ports in a row between %d and %d", n, blockPortLow, blockPortHigh)
}

func blockFree(ws []Worktree, i, base, n int) bool {
	for j, o := range ws {
		if j != i && o.PortBlock > 0 && base < o.PortBase+o.PortBlock && o.PortBase < base+n {
			return false
		}
	}
	for p := base; p < base+n; p++ {
		if !free(p) {
			return false
		}
	}
	return true
}

// Worktrees are the worktrees svc has met, as listed.
func Worktrees(home string) ([]Worktree, error) {
	b, err := os.ReadFile(worktreeFile(home))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ws []Worktree
	if err := json.Unmarshal(b, &ws); err != nil {
		return nil, fmt.Errorf("%s: %v", worktreeFile(home), err)
	}
	return ws, nil
}

// ForgetWorktree drops the entry of the worktree at top, freeing its
// slot, slug and ports.
func ForgetWorktree(home, top string) error {
	return editWorktrees(home, func(ws []Worktree) ([]Worktree, error) {
		return slices.DeleteFunc(ws, func(w Worktree) bool { return w.Top == top }), nil
	})
}

// editWorktrees changes the registry under its lock, and writes it back
// atomically.
func editWorktrees(home string, edit func([]Worktree) ([]Worktree, error)) error {
	if err := ensureHome(home); err != nil {
		return err
	}
	lf, err := os.OpenFile(filepath.Join(home, ".worktrees.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer lf.Close()
	if err := unix.Flock(int(lf.Fd()), unix.LOCK_EX); err != nil {
		return err
	}
	ws, err := Worktrees(home)
	if err != nil {
		return err
	}
	before, _ := json.Marshal(ws)
	if ws, err = edit(ws); err != nil {
		return err
	}
	b, err := json.Marshal(ws)
	if err != nil || string(b) == string(before) {
		return err
	}
	return atomicfile.Write(worktreeFile(home), append(b, '\n'), 0o600)
}

// WorktreeTag is what a service records of its worktree.
type WorktreeTag struct {
	Top  string `json:"top"`
	Repo string `json:"repo,omitempty"`
	Main bool   `json:"main,omitempty"`
	Slug string `json:"slug"`
	Slot int    `json:"slot"`
}

// Tag is what a service records of w.
func (w *Worktree) Tag() *WorktreeTag {
	return &WorktreeTag{Top: w.Top, Repo: w.Repo, Main: w.Main, Slug: w.Slug, Slot: w.Slot}
}

// Worktree is the tag as a Worktree, for Gone.
func (t *WorktreeTag) Worktree() Worktree {
	return Worktree{Top: t.Top, Repo: t.Repo, Main: t.Main, Slug: t.Slug, Slot: t.Slot}
}

// Placeholders are what {worktree} and {slot} stand for in a service of
// the worktree.
func (t *WorktreeTag) Placeholders() *strings.Replacer {
	return strings.NewReplacer("{worktree}", t.Slug, "{slot}", strconv.Itoa(t.Slot))
}

// withWorktree records the service's worktree, puts its slug and slot in
// place of {worktree} and {slot} in the command, the environment's
// values and the readiness, and gives the command SVC_WORKTREE and
// SVC_SLOT (unless its environment sets them).
func (s Spec) withWorktree(t *WorktreeTag) Spec {
	r := t.Placeholders()
	s.Worktree = t
	s.Command = replaceAll(r, s.Command)
	s.ReadyURL, s.ReadyCmd = r.Replace(s.ReadyURL), r.Replace(s.ReadyCmd)
	env := make([]string, 0, len(s.Env)+2)
	has := map[string]bool{}
	for _, kv := range s.Env {
		k, v, _ := strings.Cut(kv, "=")
		has[k] = true
		env = append(env, k+"="+r.Replace(v))
	}
	if !has["SVC_WORKTREE"] {
		env = append(env, "SVC_WORKTREE="+t.Slug)
	}
	if !has["SVC_SLOT"] {
		env = append(env, "SVC_SLOT="+strconv.Itoa(t.Slot))
	}
	s.Env = env
	return s
}

func replaceAll(r *strings.Replacer, ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = r.Replace(s)
	}
	return out
}
