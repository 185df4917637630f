package svc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A project is a directory whose services svc up started. Its services
// are named PROJECT/NAME, where PROJECT is the name the directory was
// given the first time: its base name, cleaned, or that with -2, -3 …
// when another directory already has it — so two checkouts of one
// project (worktrees) never share a service. The names are kept in
// HOME/.projects, one file a name holding its directory.

func projectsDir(home string) string { return filepath.Join(home, ".projects") }

// ProjectName is the name of the project in dir, claimed for it on first
// use. dir must be absolute.
func ProjectName(home, dir string) (string, error) {
	if name, err := FindProject(home, dir); err != nil || name != "" {
		return name, err
	}
	if err := ensureHome(home); err != nil {
		return "", err
	}
	pd := projectsDir(home)
	if err := os.MkdirAll(pd, 0o700); err != nil {
		return "", err
	}
	base := cleanName(filepath.Base(dir))
	for i := 1; i < 10000; i++ {
		name := base
		if i > 1 {
			name = base + "-" + strconv.Itoa(i)
		}
		ok, err := claimProject(pd, name, dir)
		if err != nil || ok {
			return name, err
		}
	}
	return "", fmt.Errorf("no free project name for %s", dir)
}

// claimProject gives name to dir unless another directory has it. The
// name's file appears whole or not at all (a hard link of a written
// file), so a concurrent svc up for another directory never reads half
// of it.
func claimProject(pd, name, dir string) (bool, error) {
	f, err := os.CreateTemp(pd, ".claim-")
	if err != nil {
		return false, err
	}
	defer os.Remove(f.Name())
	_, err = f.WriteString(dir + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	err = os.Link(f.Name(), filepath.Join(pd, name))
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, os.ErrExist) {
		return false, err
	}
	held, err := os.ReadFile(filepath.Join(pd, name))
	return err == nil && strings.TrimSuffix(string(held), "\n") == dir, err
}

// ClaimScope claims name for a scope of svc mcp (its services are
// name/…), unless a project's directory or another scope's owner has it.
// owner says who: runagent's run, or a user's name for a long-lived
// scope; the same owner may claim it again.
func ClaimScope(home, name, owner string) error {
	if err := ValidPlainName(name); err != nil {
		return err // a *NameError
	}
	if err := ensureHome(home); err != nil {
		return err
	}
	pd := projectsDir(home)
	if err := os.MkdirAll(pd, 0o700); err != nil {
		return err
	}
	ok, err := claimProject(pd, name, "scope:"+owner)
	if err == nil && !ok {
		held, _ := os.ReadFile(filepath.Join(pd, name))
		err = &ScopeTakenError{Name: name, Holder: strings.TrimSuffix(strings.TrimPrefix(string(held), "scope:"), "\n")}
	}
	return err
}

// ReleaseScope forgets a scope's name, once nothing of it is left.
func ReleaseScope(home, name string) error {
	return os.Remove(filepath.Join(projectsDir(home), name))
}

// FindProject is the name dir's project has, or "" when svc up never ran
// there. dir must be absolute.
func FindProject(home, dir string) (string, error) {
	entries, err := os.ReadDir(projectsDir(home))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if ValidPlainName(e.Name()) != nil {
			continue
		}
		held, err := os.ReadFile(filepath.Join(projectsDir(home), e.Name()))
		if err == nil && strings.TrimSuffix(string(held), "\n") == dir {
			return e.Name(), nil
		}
	}
	return "", nil
}

// ProjectServices are the names of the services of the project in dir
// (a path, made absolute here), sorted; none when it has no project.
func ProjectServices(home, dir string) (project string, names []string, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, err
	}
	if project, err = FindProject(home, abs); err != nil || project == "" {
		return "", nil, err
	}
	names, err = Members(home, project)
	return project, names, err
}

// Members are the names of the services of a project or scope, sorted.
func Members(home, project string) ([]string, error) {
	all, err := List(home)
	var names []string
	for _, n := range all {
		if strings.HasPrefix(n, project+"/") {
			names = append(names, n)
		}
	}
	return names, err
}
