package svc

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc/registry"
)

// writeService records a stopped service with the given spec, as a
// monitor would have left it.
func writeService(t *testing.T, home, name string, spec Spec) {
	t.Helper()
	d := Dir{Home: home, Name: name}
	must(t, os.MkdirAll(d.Path(), 0o700))
	must(t, WriteState(d, &State{Name: name, Status: Stopped, Spec: spec}))
}

func TestGC(t *testing.T) {
	home := t.TempDir()
	_, wts := fakeRepo(t, "keep", "gone")
	keep, _ := Registry(home).WorktreeOf(wts[0])
	gone, _ := Registry(home).WorktreeOf(wts[1])
	dead := exec.Command("true")
	must(t, dead.Run())
	writeService(t, home, "keep/web", Spec{Command: []string{"x"}, Cwd: wts[0], Worktree: worktreeTag(keep)})
	writeService(t, home, "gone/web", Spec{Command: []string{"x"}, Cwd: wts[1], Worktree: worktreeTag(gone)})
	writeService(t, home, "tmp", Spec{Command: []string{"x"}, Cwd: filepath.Join(home, "nowhere")})
	writeService(t, home, "plain", Spec{Command: []string{"x"}, Cwd: home})
	must(t, ClaimScope(home, "agent", "agent"))
	writeService(t, home, "agent/db", Spec{Command: []string{"x"}, Cwd: home, UntilExit: dead.Process.Pid})
	// Tied to this test's process, alive, but by a start time that is not
	// its own: its pid was given to another process since.
	me, err := proc.Stat(os.Getpid())
	must(t, err)
	writeService(t, home, "agent/reused", Spec{Command: []string{"x"}, Cwd: home, UntilExit: me.PID, UntilExitStart: me.Start + 1})
	writeService(t, home, "mine", Spec{Command: []string{"x"}, Cwd: home, UntilExit: me.PID, UntilExitStart: me.Start})
	must(t, os.RemoveAll(wts[1]))

	g, err := FindGarbage(home)
	must(t, err)
	if len(g) != 4 {
		t.Fatalf("garbage %+v", g)
	}
	res, err := GC(home, 0, nil, nil)
	must(t, err)
	names, _ := List(home)
	if len(names) != 3 || names[0] != "keep/web" || names[1] != "mine" || names[2] != "plain" {
		t.Errorf("left: %v", names)
	}
	if len(res.Worktrees) != 1 || res.Worktrees[0] != wts[1] || len(res.Scopes) != 1 || res.Scopes[0] != "agent" {
		t.Errorf("result %+v", res)
	}
	ws, _ := Registry(home).Worktrees()
	if len(ws) != 1 || ws[0].Top != wts[0] {
		t.Errorf("worktrees left: %+v", ws)
	}
	// A worktree named as going is collected while it still exists.
	res, err = GC(home, 0, []string{wts[0]}, nil)
	must(t, err)
	if len(res.Services) != 1 || res.Services[0].Name != "keep/web" {
		t.Errorf("going: %+v", res.Services)
	}
}

// A place that cannot be read now (here a symbolic link that loops,
// ELOOP, as root reads through any permission) is not taken for gone:
// gc stops what is gone, so only a certain absence counts.
func TestGoneOnlyWhenCertain(t *testing.T) {
	_, dirs := fakeRepo(t, "feat")
	wt := dirs[0]
	top, repo, _, ok := registry.FindGit(wt)
	if !ok {
		t.Fatal("no worktree")
	}
	w := registry.Worktree{Top: top, Repo: repo}
	if w.Gone() {
		t.Fatal("a live worktree is gone")
	}
	g := filepath.Join(wt, ".git")
	must(t, os.Rename(g, g+".real"))
	must(t, os.Symlink(g, g)) // .git -> .git: ELOOP
	if w.Gone() {
		t.Error("a worktree whose .git cannot be read now is gone")
	}
	loop := filepath.Join(wt, "loop")
	must(t, os.Symlink(loop, loop))
	if why, _ := gone(Spec{Cwd: filepath.Join(loop, "x")}); why != "" {
		t.Errorf("a directory that cannot be read now: %s", why)
	}
	must(t, os.Remove(g))
	if !w.Gone() {
		t.Error("a worktree whose .git was removed is not gone")
	}
	if why, _ := gone(Spec{Cwd: filepath.Join(wt, "nothing")}); why == "" {
		t.Error("a directory that does not exist is not gone")
	}
	if why, _ := gone(Spec{Cwd: g + ".real"}); why == "" {
		t.Error("a file where the directory was is not gone")
	}
}

// A service whose working directory is there is never gone, whatever
// became of its checkout: gc would stop what still runs where it ran.
func TestNotGoneWhileCwdIsThere(t *testing.T) {
	_, dirs := fakeRepo(t, "feat")
	wt := dirs[0]
	top, repo, _, _ := registry.FindGit(wt)
	tag := &WorktreeTag{Top: top, Repo: repo, Slug: "feat", Slot: 1}
	must(t, os.Remove(filepath.Join(wt, ".git")))
	if !tag.Worktree().Gone() {
		t.Fatal("a worktree whose .git was removed is not gone")
	}
	if why, _ := gone(Spec{Cwd: filepath.Join(wt, "src"), Worktree: tag}); why != "" {
		t.Errorf("its directory is there, yet: %s", why)
	}
	must(t, os.RemoveAll(wt))
	if why, _ := gone(Spec{Cwd: filepath.Join(wt, "src"), Worktree: tag}); why != "its worktree "+top+" is gone" {
		t.Errorf("all gone: %q", why)
	}
}
