package svc

import (
	"path/filepath"
	"strings"
)

// A project is a directory whose services svc up started. Its services
// are named PROJECT/NAME, where PROJECT is the name the directory was
// given the first time: its base name, cleaned, or that with -2, -3 …
// when another directory already has it — so two checkouts of one
// project (worktrees) never share a service. A scope of svc mcp is a
// name its services are under too. The names are the home's registry's
// (lib/svc/registry); what a name may be is svc's.

// ProjectName is the name of the project in dir, claimed for it on first
// use. dir must be absolute.
func ProjectName(home, dir string) (string, error) {
	return Registry(home).ClaimProject(dir, cleanName(filepath.Base(dir)))
}

// ClaimScope claims name for a scope of svc mcp (its services are
// name/…), unless a project's directory or another scope's owner has it
// (a *ScopeTakenError). owner says who: runagent's run, or a user's name
// for a long-lived scope; the same owner may claim it again.
func ClaimScope(home, name, owner string) error {
	if err := ValidPlainName(name); err != nil {
		return err // a *NameError
	}
	return Registry(home).ClaimScope(name, owner)
}

// ReleaseScope forgets a scope's name, once nothing of it is left.
func ReleaseScope(home, name string) error { return Registry(home).Release(name) }

// ProjectServices are the names of the services of the project in dir
// (a path, made absolute here), sorted; none when it has no project.
func ProjectServices(home, dir string) (project string, names []string, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, err
	}
	if project, err = Registry(home).FindProject(abs); err != nil || project == "" {
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
