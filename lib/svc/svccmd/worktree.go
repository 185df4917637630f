package svccmd

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/svc"
	"github.com/agentry/agentry/lib/svc/registry"
)

// EnvArgs are svc env's flags.
type EnvArgs struct {
	All     bool     // every service of this worktree, not only this directory's project
	Command []string // run this with the variables, instead of printing them
}

// Env prints the variables of this directory's project (or, with All or
// when svc up never ran here, of every service of its worktree) as
// KEY=VALUE lines, or as one JSON object, or runs a command with them.
func (v *Verbs) Env(a EnvArgs) error {
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	wt, err := svc.Registry(v.Home).WorktreeOf(cwd)
	if err != nil {
		return err
	}
	rows, err := v.envRows(cwd, wt, a.All)
	if err != nil {
		return err
	}
	vars := svc.Env(v.Home, wt, rows)
	if len(vars) == 0 && len(a.Command) == 0 && !v.JSON { // outside a worktree: within one, SVC_WORKTREE is said
		if proj, _ := svc.Registry(v.Home).FindProject(cwd); proj != "" && !a.All {
			v.Voice.Notef("nothing to print: no service of %s is live with a port", proj)
		} else {
			v.Voice.Notef("nothing to print: no live service with a port was started in this directory or below it (it is in no git worktree)")
		}
	}
	if len(a.Command) > 0 {
		return execWith(a.Command, vars)
	}
	if v.JSON {
		obj := map[string]string{}
		for _, e := range vars {
			obj[e.Key] = e.Value
		}
		cli.PrintJSON(v.Out, obj)
		return nil
	}
	for _, e := range vars {
		fmt.Fprintf(v.Out, "%s=%s\n", e.Key, e.Value)
	}
	return nil
}

// envRows are the services svc env speaks of: the project svc up started
// from dir, else (or with all) every service of dir's worktree.
func (v *Verbs) envRows(dir string, wt *registry.Worktree, all bool) ([]*svc.Listing, error) {
	rows, _ := svc.LookAll(v.Home)
	if !all {
		if proj, err := svc.Registry(v.Home).FindProject(dir); err != nil {
			return nil, err
		} else if proj != "" {
			return slices.DeleteFunc(rows, func(l *svc.Listing) bool { return !strings.HasPrefix(l.Name, proj+"/") }), nil
		}
	}
	if wt == nil {
		// No worktree (outside git): the services started in dir or
		// below it.
		return slices.DeleteFunc(rows, func(l *svc.Listing) bool { return !within(l.Spec.Cwd, dir) }), nil
	}
	return slices.DeleteFunc(rows, func(l *svc.Listing) bool {
		return l.Spec.Worktree == nil || l.Spec.Worktree.Top != wt.Top
	}), nil
}

// within tells whether path is dir or a path below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// execWith replaces svc with the command, the variables added to its
// environment: its exit status and signals are the command's own.
func execWith(argv []string, vars []svc.EnvVar) error {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return cli.WithCode(fmt.Errorf("%s: command not found", argv[0]), 127)
	}
	env := os.Environ()
	for _, e := range vars {
		env = append(env, e.Key+"="+e.Value)
	}
	return syscall.Exec(path, argv, env)
}

// Who says who holds a port: 0 when a service does, 1 when a process
// that is no service does (or a process svc cannot see), 3 when nothing
// listens there.
func (v *Verbs) Who(given string) error {
	port, err := strconv.Atoi(given)
	if err != nil || port < 1 || port > 65535 {
		return cli.Usagef("%s is not a port number", given)
	}
	u := svc.Who(v.Home, port)
	if v.JSON {
		cli.PrintJSON(v.Out, u)
	} else {
		fmt.Fprintln(v.Out, WhoLine(u))
	}
	switch {
	case u.Service != "" && !u.Given:
		return nil
	case u.Listening:
		return cli.Quiet(cli.ExitFailure)
	}
	return cli.Quiet(3)
}

// WhoLine says who holds a port, in a sentence.
func WhoLine(u *svc.PortUse) string {
	where := func() string {
		var parts []string
		if u.Worktree != nil {
			parts = append(parts, "worktree "+u.Worktree.Slug+" (slot "+strconv.Itoa(u.Worktree.Slot)+", "+u.Worktree.Top+")")
		}
		if u.Scope != "" {
			parts = append(parts, "project or scope "+u.Scope)
		}
		if len(parts) == 0 {
			return ""
		}
		return "; " + strings.Join(parts, ", ")
	}
	switch {
	case u.Given:
		return fmt.Sprintf("port %d: nothing listens yet; it is given to %s, which is starting%s", u.Port, u.Service, where())
	case u.Service != "":
		return fmt.Sprintf("port %d: pid %d (%s) of service %s%s", u.Port, u.PID, u.Comm, u.Service, where())
	case u.PID != 0:
		return fmt.Sprintf("port %d: pid %d (%s), which is no service of svc's: stopping it is not svc's to do", u.Port, u.PID, u.Comm)
	case u.Listening:
		return fmt.Sprintf("port %d: a process svc cannot see (another user's, or another namespace's)", u.Port)
	}
	return fmt.Sprintf("port %d: nothing listens", u.Port)
}

// GCArgs are svc gc's flags.
type GCArgs struct {
	DryRun bool
	Grace  time.Duration
	// Going are worktrees about to be removed; Hook: read a Claude Code
	// hook's JSON input on Stdin, whose worktree_path is one.
	Going []string
	Hook  bool
	Stdin io.Reader
}

// GC stops and removes the services whose worktree, directory or owner
// is gone: 0, or 1 when one could not be stopped whole.
func (v *Verbs) GC(a GCArgs) error {
	going, err := v.goingDirs(a)
	if err != nil {
		return err
	}
	if a.DryRun {
		gs, err := svc.FindGarbage(v.Home, going...)
		if err != nil {
			return err
		}
		for _, g := range gs {
			if v.JSON {
				cli.PrintJSON(v.Out, g)
				continue
			}
			verb := "would remove"
			if g.Live {
				verb = "would stop and remove"
			}
			fmt.Fprintf(v.Out, "%s %s: %s\n", verb, g.Name, g.Reason)
		}
		if len(gs) == 0 && !v.JSON {
			fmt.Fprintln(v.Out, "nothing to collect")
		}
		return nil
	}
	failed := false
	res, err := svc.GC(v.Home, a.Grace, going, func(c svc.Collected) {
		if c.Err != nil {
			failed = true
			v.Voice.Error(fmt.Errorf("%s: %w", c.Name, c.Err))
			return
		}
		failed = failed || c.Report != nil && len(c.Report.StillAlive) > 0
		if v.JSON {
			cli.PrintJSON(v.Out, c)
			return
		}
		if c.Report != nil {
			fmt.Fprintf(v.Out, "%s, and removed: %s\n", strings.TrimSuffix(FormatStop(c.Report), "\n"), c.Reason)
			return
		}
		fmt.Fprintf(v.Out, "%s removed: %s\n", c.Name, c.Reason)
	})
	if err != nil {
		return err
	}
	if v.JSON && len(res.Worktrees)+len(res.Projects)+len(res.Scopes) > 0 {
		// What was given back besides the services, last.
		cli.PrintJSON(v.Out, map[string][]string{"worktrees": res.Worktrees, "projects": res.Projects, "scopes": res.Scopes})
	}
	if !v.JSON {
		for _, w := range res.Worktrees {
			fmt.Fprintf(v.Out, "forgot worktree %s: its slot and ports are free\n", w)
		}
		for _, sc := range res.Scopes {
			fmt.Fprintf(v.Out, "gave back scope %s: its owner has ended\n", sc)
		}
		if len(res.Services) == 0 && len(res.Worktrees) == 0 {
			fmt.Fprintln(v.Out, "nothing to collect")
		}
	}
	if failed {
		return cli.Quiet(cli.ExitFailure)
	}
	return nil
}

// goingDirs are the worktrees svc gc is told are going: the arguments,
// and with --hook the worktree_path of a Claude Code hook's input (a
// WorktreeRemove hook's; SessionEnd's has none).
// Each must be a worktree's top directory.
func (v *Verbs) goingDirs(a GCArgs) ([]string, error) {
	var out []string
	for _, d := range a.Going {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		out = append(out, abs)
	}
	if a.Hook {
		p, err := hookPath(a.Stdin)
		if err != nil {
			return nil, err
		}
		if p != "" {
			out = append(out, p)
		}
	}
	for _, d := range out {
		if !svc.MayBeGoing(v.Home, d) {
			return nil, cli.Usagef("%s is not a git worktree's top directory: gc is given only a worktree about to be removed, and stops every service under it", d)
		}
	}
	return out, nil
}

// hookPath is the worktree_path of a Claude Code hook's input on r, ""
// for none.
func hookPath(r io.Reader) (string, error) {
	var in struct {
		WorktreePath string `json:"worktree_path"`
	}
	b, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return "", err
	}
	if len(strings.TrimSpace(string(b))) > 0 {
		if err := json.Unmarshal(b, &in); err != nil {
			return "", cli.Usagef("--hook: the input is not a hook's JSON: %v", err)
		}
	}
	if in.WorktreePath == "" {
		return "", nil
	}
	return filepath.Abs(in.WorktreePath)
}
