package svc

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentry/agentry/lib/svc/registry"
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

// Port blocks: stable, never overlapping, given again at a new size.
func TestReservePorts(t *testing.T) {
	home := t.TempDir()
	_, wts := fakeRepo(t, "a", "b", "c")
	var blocks []*registry.Worktree
	for _, d := range wts {
		w, err := ReservePorts(home, d, 10)
		must(t, err)
		blocks = append(blocks, w)
	}
	for i, a := range blocks {
		if a.PortBlock != 10 || a.PortBase < registry.BlockPortLow || a.PortBase+10 > registry.BlockPortHigh {
			t.Errorf("block %+v", a)
		}
		for _, b := range blocks[i+1:] {
			if a.PortBase < b.PortBase+10 && b.PortBase < a.PortBase+10 {
				t.Errorf("blocks overlap: %d and %d", a.PortBase, b.PortBase)
			}
		}
	}
	again, _ := ReservePorts(home, filepath.Join(wts[0], "src"), 10)
	if again.PortBase != blocks[0].PortBase {
		t.Errorf("a block moved: %d then %d", blocks[0].PortBase, again.PortBase)
	}
	if _, err := ReservePorts(home, wts[0], 0); err == nil {
		t.Errorf("a block of 0 ports")
	}
}

func TestWithWorktree(t *testing.T) {
	s := Spec{Command: []string{"redis-cli -n {slot} set k {worktree}"}, Env: []string{"DB=app_{worktree}", "SVC_SLOT=9"},
		ReadyURL: "http://127.0.0.1/{worktree}"}.withWorktree(&WorktreeTag{Slug: "feat", Slot: 3})
	if s.Command[0] != "redis-cli -n 3 set k feat" || s.ReadyURL != "http://127.0.0.1/feat" {
		t.Errorf("spec %+v", s)
	}
	want := []string{"DB=app_feat", "SVC_SLOT=9", "SVC_WORKTREE=feat"}
	if len(s.Env) != len(want) {
		t.Fatalf("env %v", s.Env)
	}
	for i := range want {
		if s.Env[i] != want[i] {
			t.Errorf("env %v, want %v", s.Env, want)
		}
	}
}
