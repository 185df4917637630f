package registry

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// fakeRepo lays out a main checkout and linked worktrees as git does
// (gitrepository-layout(5)): .git a directory in the main one, a file
// naming .git/worktrees/NAME, whose commondir leads back, in the others.
func fakeRepo(t *testing.T, linked ...string) (root string, dirs []string) {
	t.Helper()
	root = t.TempDir()
	main := filepath.Join(root, "shop")
	must(t, os.MkdirAll(filepath.Join(main, ".git", "worktrees"), 0o755))
	must(t, os.MkdirAll(filepath.Join(main, ".git", "objects"), 0o755))
	must(t, os.MkdirAll(filepath.Join(main, ".git", "refs"), 0o755))
	must(t, os.WriteFile(filepath.Join(main, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	for _, name := range linked {
		gd := filepath.Join(main, ".git", "worktrees", name)
		must(t, os.MkdirAll(gd, 0o755))
		must(t, os.WriteFile(filepath.Join(gd, "commondir"), []byte("../..\n"), 0o644))
		wt := filepath.Join(root, name)
		must(t, os.MkdirAll(filepath.Join(wt, "src"), 0o755))
		must(t, os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+gd+"\n"), 0o644))
		dirs = append(dirs, wt)
	}
	return main, dirs
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestFindGit(t *testing.T) {
	main, wts := fakeRepo(t, "feat")
	top, repo, isMain, ok := FindGit(filepath.Join(wts[0], "src"))
	if !ok || top != wts[0] || repo != filepath.Join(main, ".git") || isMain {
		t.Errorf("in the linked worktree: %q %q %v %v", top, repo, isMain, ok)
	}
	top, repo, isMain, ok = FindGit(main)
	if !ok || top != main || repo != filepath.Join(main, ".git") || !isMain {
		t.Errorf("in the main checkout: %q %q %v %v", top, repo, isMain, ok)
	}
	if _, _, _, ok := FindGit(t.TempDir()); ok {
		t.Errorf("a directory outside git is in one")
	}
}

// Slots: 0 for the main checkout, the lowest free from 1 for the others,
// unique under concurrent claims, stable, and free again once forgotten.
func TestWorktreeSlots(t *testing.T) {
	home := t.TempDir()
	main, wts := fakeRepo(t, "a", "b", "c", "d", "e", "f")
	got := make([]*Worktree, len(wts))
	var wg sync.WaitGroup
	for i, d := range wts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := Home{Dir: home}.WorktreeOf(d)
			must(t, err)
			got[i] = w
		}()
	}
	wg.Wait()
	seen := map[int]bool{}
	for _, w := range got {
		if w.Slot < 1 || w.Slot > len(wts) || seen[w.Slot] {
			t.Fatalf("slot %d of %s: not unique in 1..%d (%v)", w.Slot, w.Top, len(wts), seen)
		}
		seen[w.Slot] = true
	}
	m, err := Home{Dir: home}.WorktreeOf(main)
	must(t, err)
	if m.Slot != 0 || !m.Main || m.Slug != "shop" {
		t.Errorf("main checkout: %+v", m)
	}
	again, _ := Home{Dir: home}.WorktreeOf(filepath.Join(wts[2], "src"))
	if again.Slot != got[2].Slot || again.Slug != "c" {
		t.Errorf("the same worktree again: %+v, first %+v", again, got[2])
	}
	// b goes: gc forgets it, and the next worktree gets its slot.
	must(t, os.RemoveAll(wts[1]))
	ws, _ := Home{Dir: home}.Worktrees()
	for _, w := range ws {
		if w.Gone() != (w.Top == wts[1]) {
			t.Errorf("%s gone: %v", w.Top, w.Gone())
		}
	}
	must(t, Home{Dir: home}.ForgetWorktree(wts[1]))
	_, more := fakeRepo(t, "g")
	// Another repository's worktree has slots of its own.
	g, _ := Home{Dir: home}.WorktreeOf(more[0])
	if g.Slot != 1 {
		t.Errorf("the first worktree of another repository: slot %d", g.Slot)
	}
}

func TestSlugs(t *testing.T) {
	for in, want := range map[string]string{"Feat_Login.x": "feat-login-x", "--": "wt", "a--b": "a-b", "ÜBER": "ber"} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
	// Two worktrees of one base name (in two repositories) get two slugs.
	home := t.TempDir()
	_, a := fakeRepo(t, "feat")
	_, b := fakeRepo(t, "feat")
	wa, _ := Home{Dir: home}.WorktreeOf(a[0])
	wb, _ := Home{Dir: home}.WorktreeOf(b[0])
	if wa.Slug != "feat" || wb.Slug != "feat-2" {
		t.Errorf("slugs %q %q", wa.Slug, wb.Slug)
	}
}

// A home's .worktrees.json as svc has written it is read, and written
// back, as it was.
func TestWorktreesFileAsHomesHaveIt(t *testing.T) {
	h := Home{Dir: t.TempDir()}
	old := `[{"top":"/src/shop","repo":"/src/shop/.git","main":true,"slug":"shop","slot":0},` +
		`{"top":"/src/feat","repo":"/src/shop/.git","slug":"feat","slot":1,"portBase":12340,"portBlock":10}]` + "\n"
	must(t, os.WriteFile(filepath.Join(h.Dir, ".worktrees.json"), []byte(old), 0o600))
	ws, err := h.Worktrees()
	must(t, err)
	if len(ws) != 2 || ws[1] != (Worktree{Top: "/src/feat", Repo: "/src/shop/.git", Slug: "feat", Slot: 1, PortBase: 12340, PortBlock: 10}) {
		t.Fatalf("read %+v", ws)
	}
	must(t, h.ForgetWorktree("/src/feat"))
	b, _ := os.ReadFile(filepath.Join(h.Dir, ".worktrees.json"))
	if want := `[{"top":"/src/shop","repo":"/src/shop/.git","main":true,"slug":"shop","slot":0}]` + "\n"; string(b) != want {
		t.Errorf("written back %q, want %q", b, want)
	}
}

// An empty .git directory (another program's, in a shared directory) is
// not a checkout: git looks above it, and so does FindGit.
func TestEmptyGitDirIsNotACheckout(t *testing.T) {
	main, _ := fakeRepo(t)
	sub := filepath.Join(main, "tmp", "app")
	must(t, os.MkdirAll(filepath.Join(main, "tmp", ".git"), 0o755))
	must(t, os.MkdirAll(sub, 0o755))
	if top, _, _, ok := FindGit(sub); !ok || top != main {
		t.Errorf("below an empty .git: %q %v, want %q", top, ok, main)
	}
	if _, _, _, ok := FindGit(t.TempDir()); ok {
		t.Error("outside git: a checkout")
	}
}
