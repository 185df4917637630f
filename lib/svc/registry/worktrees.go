package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/agentry/agentry/lib/atomicfile"
)

// Worktree is a git worktree as the home knows it: an entry of
// .worktrees.json.
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

func (h Home) worktreeFile() string { return filepath.Join(h.Dir, ".worktrees.json") }
func (h Home) worktreeLock() string { return filepath.Join(h.Dir, ".worktrees.lock") }

// WorktreeOf is the worktree dir belongs to, its slot and slug claimed on
// first use; nil outside git. dir must be absolute.
func (h Home) WorktreeOf(dir string) (*Worktree, error) {
	top, repo, main, ok := FindGit(dir)
	if !ok {
		return nil, nil
	}
	var out *Worktree
	err := h.editWorktrees(func(ws []Worktree) ([]Worktree, error) {
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
		w.Slot = freeSlot(ws, repo)
	}
	base := slug(filepath.Base(top))
	w.Slug = base
	for n := 2; slices.ContainsFunc(ws, func(o Worktree) bool { return o.Slug == w.Slug }); n++ {
		w.Slug = base + "-" + strconv.Itoa(n)
	}
	return append(ws, w), len(ws)
}

// freeSlot is the lowest slot from 1 no worktree of repo has.
func freeSlot(ws []Worktree, repo string) int {
	slots := map[int]bool{0: true}
	for _, o := range ws {
		if o.Repo == repo {
			slots[o.Slot] = true
		}
	}
	slot := 1
	for slots[slot] {
		slot++
	}
	return slot
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

// Worktrees are the worktrees the home has met, as listed.
func (h Home) Worktrees() ([]Worktree, error) {
	b, err := os.ReadFile(h.worktreeFile())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ws []Worktree
	if err := json.Unmarshal(b, &ws); err != nil {
		return nil, fmt.Errorf("%s: %v", h.worktreeFile(), err)
	}
	return ws, nil
}

// ForgetWorktree drops the entry of the worktree at top, freeing its
// slot, slug and ports.
func (h Home) ForgetWorktree(top string) error {
	return h.editWorktrees(func(ws []Worktree) ([]Worktree, error) {
		return slices.DeleteFunc(ws, func(w Worktree) bool { return w.Top == top }), nil
	})
}

// editWorktrees changes the registry under its lock, and writes it back
// atomically when the edit changed it.
func (h Home) editWorktrees(edit func([]Worktree) ([]Worktree, error)) error {
	if err := h.ready(); err != nil {
		return err
	}
	unlock, err := h.lockWorktrees()
	if err != nil {
		return err
	}
	defer unlock()
	ws, err := h.Worktrees()
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
	return atomicfile.Write(h.worktreeFile(), append(b, '\n'), 0o600)
}

// lockWorktrees takes .worktrees.lock, waiting for it.
func (h Home) lockWorktrees() (unlock func(), err error) {
	lf, err := os.OpenFile(h.worktreeLock(), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(lf.Fd()), unix.LOCK_EX); err != nil {
		lf.Close()
		return nil, err
	}
	return func() { lf.Close() }, nil
}
