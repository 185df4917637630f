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
	switch {
	case s.Worktree != nil && s.Worktree.Worktree().Gone():
		return "its worktree " + s.Worktree.Top + " is gone", false
	case s.Cwd != "" && dirGone(s.Cwd):
		return "its directory " + s.Cwd + " is gone", false
	case s.Project != nil && dirGone(s.Project.Dir):
		return "its project's directory " + s.Project.Dir + " is gone", false
	case s.UntilExit > 0 && !ownerRuns(s):
		return fmt.Sprintf("its owner, process %d, has ended", s.UntilExit), true
	}
	return "", false
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
	if top, _, _, ok := FindGit(dir); ok && top == dir {
		return true
	}
	ws, _ := Worktrees(home)
	return slices.ContainsFunc(ws, func(w Worktree) bool { return w.Top == dir })
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
		c := Collected{Garbage: g}
		d := Dir{Home: home, Name: g.Name}
		if g.Live {
			c.Report, c.Err = Stop(d, grace)
		}
		if c.Err == nil {
			if err := Remove(d); err != nil && !errors.Is(err, ErrNotFound) {
				c.Err = err
			}
		}
		res.Services = append(res.Services, c)
		if report != nil {
			report(c)
		}
	}
	names, _ := List(home)
	ws, err := Worktrees(home)
	if err != nil {
		return res, err
	}
	for _, w := range ws {
		if (w.Gone() || slices.Contains(going, w.Top)) && !anyUnder(home, names, w.Top) {
			if err := ForgetWorktree(home, w.Top); err != nil {
				return res, err
			}
			res.Worktrees = append(res.Worktrees, w.Top)
		}
	}
	// A scope whose services were collected because their owner ended,
	// and that has none left, is given back.
	for _, c := range res.Services {
		scope, _, ok := strings.Cut(c.Name, "/")
		if ok && c.OwnerGone && c.Err == nil && !hasMember(names, scope) && !slices.Contains(res.Scopes, scope) {
			if held, err := os.ReadFile(filepath.Join(projectsDir(home), scope)); err == nil && strings.HasPrefix(string(held), "scope:") {
				if ReleaseScope(home, scope) == nil {
					res.Scopes = append(res.Scopes, scope)
				}
			}
		}
	}
	res.Projects, err = forgetProjects(home, names)
	return res, err
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
func forgetProjects(home string, names []string) ([]string, error) {
	entries, err := os.ReadDir(projectsDir(home))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		p := e.Name()
		if ValidPlainName(p) != nil {
			continue
		}
		held, err := os.ReadFile(filepath.Join(projectsDir(home), p))
		dir := strings.TrimSuffix(string(held), "\n")
		if err != nil || strings.HasPrefix(dir, "scope:") || isDir(dir) {
			continue
		}
		if hasMember(names, p) {
			continue
		}
		if err := os.Remove(filepath.Join(projectsDir(home), p)); err == nil {
			out = append(out, p)
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
