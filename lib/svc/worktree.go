package svc

import (
	"strconv"
	"strings"

	"github.com/agentry/agentry/lib/svc/registry"
)

// A service started in a git worktree records it (Spec.Worktree), and
// its slug and slot stand for {worktree} and {slot}. The worktrees
// themselves — their slots, slugs and port blocks — are the home's
// registry's (lib/svc/registry), as are the names of projects and scopes.

// Registry is the home's registries, written in only once the home is
// made and found safe (ensureHome).
func Registry(home string) registry.Home {
	return registry.Home{Dir: home, Ready: func() error { return ensureHome(home) }}
}

// CheckoutTop is the top directory of the git checkout dir (absolute)
// is in; ok is false outside git.
func CheckoutTop(dir string) (top string, ok bool) {
	top, _, _, ok = registry.FindGit(dir)
	return top, ok
}

// ReservePorts gives the worktree of dir (or dir itself, outside git) a
// block of n consecutive ports, 1 to 1000, the same for as long as it is
// listed: ports another worktree reserved, or that cannot be listened on
// now, are not given; a block reserved before with another size is given
// again.
func ReservePorts(home, dir string, n int) (*registry.Worktree, error) {
	if n < 1 || n > 1000 {
		return nil, &FieldError{Field: "port_block", Value: strconv.Itoa(n), Err: ErrZero}
	}
	return Registry(home).ReservePorts(dir, n, free)
}

// WorktreeTag is what a service records of its worktree.
type WorktreeTag struct {
	Top  string `json:"top"`
	Repo string `json:"repo,omitempty"`
	Main bool   `json:"main,omitempty"`
	Slug string `json:"slug"`
	Slot int    `json:"slot"`
}

// worktreeTag is what a service records of w.
func worktreeTag(w *registry.Worktree) *WorktreeTag {
	return &WorktreeTag{Top: w.Top, Repo: w.Repo, Main: w.Main, Slug: w.Slug, Slot: w.Slot}
}

// Worktree is the tag as the registry's Worktree, for Gone.
func (t *WorktreeTag) Worktree() registry.Worktree {
	return registry.Worktree{Top: t.Top, Repo: t.Repo, Main: t.Main, Slug: t.Slug, Slot: t.Slot}
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
	s.HealthURL, s.HealthCmd = r.Replace(s.HealthURL), r.Replace(s.HealthCmd)
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
