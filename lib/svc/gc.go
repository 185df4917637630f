package svc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc/registry"
)

// Garbage is a service svc gc stops and removes, and why.
type Garbage struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
	Live   bool   `json:"live"`
	// OwnerGone: collected because its owner process ended.
	OwnerGone bool `json:"-"`
}

// Collected is what GC did with one service.
type Collected struct {
	Garbage
	Report *StopReport `json:"stop,omitempty"`
	Err    error       `json:"-"`
}

// GCResult is what GC did besides the services: the worktrees and
// project names it forgot.
type GCResult struct {
	Services  []Collected `json:"services"`
	Worktrees []string    `json:"worktrees,omitempty"` // their top directories
	Projects  []string    `json:"projects,omitempty"`  // names given back
	Scopes    []string    `json:"scopes,omitempty"`    // scopes given back
}

// FindGarbage lists the services whose place is gone: their worktree,
// their working directory or their project's directory no longer
// exists, or the process they were started to end with (until-exit, a
// scope's owner) has ended.
// going are directories (worktrees) about to be removed: the services in
// them are collected as though they were gone.
func FindGarbage(home string, going ...string) ([]Garbage, error) {
	names, err := List(home)
	if err != nil {
		return nil, err
	}
	var out []Garbage
	for _, n := range names {
		d := Dir{Home: home, Name: n}
		l, err := Look(d)
		if err != nil {
			continue // damaged: svc rm is for that, not gc
		}
		why, owner := gone(l.Spec)
		if g := goingIn(l.Spec, going); g != "" {
			why, owner = g+" is being removed", false
		}
		if why != "" {
			out = append(out, Garbage{Name: n, Reason: why, Live: l.Status.Live(), OwnerGone: owner})
		}
	}
	return out, nil
}

// gone says why a service's place is gone, or ""; owner: because the
// process it was tied to ended.
func gone(s Spec) (why string, owner bool) {
	if why := placeGone(s); why != "" {
		return why, false
	}
	if s.UntilExit > 0 && !ownerRuns(s) {
		return fmt.Sprintf("its owner, process %d, has ended", s.UntilExit), true
	}
	return "", false
}

// placeGone says why the place a service runs in is gone, or "". A
// service whose working directory is there runs where it ran: a worktree
// that is no longer one (its .git removed, or one git never knew) or a
// project's directory elsewhere is no reason to stop it.
func placeGone(s Spec) string {
	switch {
	case s.Cwd != "" && !registry.DirGone(s.Cwd):
		return ""
	case s.Worktree != nil && s.Worktree.Worktree().Gone():
		return "its worktree " + s.Worktree.Top + " is gone"
	case s.Cwd != "":
		return "its directory " + s.Cwd + " is gone"
	case s.Project != nil && registry.DirGone(s.Project.Dir):
		return "its project's directory " + s.Project.Dir + " is gone"
	}
	return ""
}

// MayBeGoing reports whether svc gc may be told dir (absolute, clean) is
// going: the top directory of a git checkout, or of a worktree svc has
// met, or a place where nothing is any more; since every service under
// the one given is stopped, a parent directory given by mistake would be
// every worktree's.
func MayBeGoing(home, dir string) bool {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return true // only what is gone already can be under it
	}
	if top, _, _, ok := registry.FindGit(dir); ok && top == dir {
		return true
	}
	ws, _ := Registry(home).Worktrees()
	return slices.ContainsFunc(ws, func(w registry.Worktree) bool { return w.Top == dir })
}

// goingIn is the directory of going the service's worktree or working
// directory is in, or "".
func goingIn(s Spec, going []string) string {
	for _, g := range going {
		if s.Worktree != nil && s.Worktree.Top == g || s.Cwd != "" && within(s.Cwd, g) {
			return g
		}
	}
	return ""
}

func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// ownerRuns reports whether the process a service is tied to still runs:
// its pid, with the start time recorded when the service started (a
// service recorded before svc kept one: its pid alone).
func ownerRuns(s Spec) bool {
	p, err := proc.Stat(s.UntilExit)
	if err != nil || p.State == 'Z' {
		return false
	}
	return s.UntilExitStart == 0 || p.Start == s.UntilExitStart
}

// GC stops (grace as svc stop's; 0: each service's own) and removes the
// services FindGarbage lists, calling report after each, then forgets the
// worktrees that are gone and the project names whose directories are,
// once none of their services is left.
func GC(home string, grace time.Duration, going []string, report func(Collected)) (*GCResult, error) {
	garbage, err := FindGarbage(home, going...)
	if err != nil {
		return nil, err
	}
	res := &GCResult{}
	for _, g := range garbage {
		c := collect(Dir{Home: home, Name: g.Name}, g, grace)
		res.Services = append(res.Services, c)
		if report != nil {
			report(c)
		}
	}
	names, _ := List(home)
	reg := Registry(home)
	if res.Worktrees, err = forgetWorktrees(reg, names, going); err != nil {
		return res, err
	}
	res.Scopes = releaseScopes(reg, names, res.Services)
	res.Projects, err = forgetProjects(reg, names)
	return res, err
}

// collect stops (when live) and removes one service gc found.
func collect(d Dir, g Garbage, grace time.Duration) Collected {
	c := Collected{Garbage: g}
	if g.Live {
		c.Report, c.Err = Stop(d, grace)
	}
	if c.Err == nil {
		if err := Remove(d); err != nil && !errors.Is(err, ErrNotFound) {
			c.Err = err
		}
	}
	return c
}

// forgetWorktrees forgets the worktrees that are gone (or going) and
// that no service that is left belongs to, and returns their tops.
func forgetWorktrees(reg registry.Home, names, going []string) ([]string, error) {
	ws, err := reg.Worktrees()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, w := range ws {
		if (w.Gone() || slices.Contains(going, w.Top)) && !anyUnder(reg.Dir, names, w.Top) {
			if err := reg.ForgetWorktree(w.Top); err != nil {
				return out, err
			}
			out = append(out, w.Top)
		}
	}
	return out, nil
}

// releaseScopes gives back each scope whose services were collected
// because their owner ended, and that has none left.
func releaseScopes(reg registry.Home, names []string, collected []Collected) []string {
	var out []string
	for _, c := range collected {
		scope, _, ok := strings.Cut(c.Name, "/")
		if !ok || !c.OwnerGone || c.Err != nil || hasMember(names, scope) || slices.Contains(out, scope) {
			continue
		}
		if cl, ok := reg.Lookup(scope); ok && cl.Scope && reg.Release(scope) == nil {
			out = append(out, scope)
		}
	}
	return out
}

// anyUnder reports whether a service that is left belongs to the
// worktree at top.
func anyUnder(home string, names []string, top string) bool {
	for _, n := range names {
		if s, err := ReadState(Dir{Home: home, Name: n}); err == nil && s.Spec.Worktree != nil && s.Spec.Worktree.Top == top {
			return true
		}
	}
	return false
}

// forgetProjects gives back the names of projects whose directory is
// gone and which have no service left.
func forgetProjects(reg registry.Home, names []string) ([]string, error) {
	claims, err := reg.Claims()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range claims {
		if c.Scope || isDir(c.Dir) || hasMember(names, c.Name) {
			continue
		}
		if reg.Release(c.Name) == nil {
			out = append(out, c.Name)
		}
	}
	return out, nil
}

func hasMember(names []string, project string) bool {
	for _, n := range names {
		if strings.HasPrefix(n, project+"/") {
			return true
		}
	}
	return false
}
