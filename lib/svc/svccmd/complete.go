package svccmd

import (
	"os"
	"strings"

	"github.com/agentry/agentry/lib/svc"
	"github.com/agentry/agentry/lib/svc/project"
)

// CompleteNames are the names a shell completes where svc takes a
// service: this directory's project's services by their bare names
// first (as Resolve reads them), then every service by its full name.
func CompleteNames(getenv func(string) string) []string {
	home, err := svc.Home(getenv)
	if err != nil {
		return nil
	}
	all, _ := svc.List(home)
	var out []string
	if proj := (&Verbs{Home: home}).hereProject(); proj != "" {
		for _, n := range all {
			if p, bare, ok := strings.Cut(n, "/"); ok && p == proj {
				out = append(out, bare)
			}
		}
	}
	return append(out, all...)
}

// CompleteProjectNames are the names of the services of this directory's
// project file, which svc up and svc down take.
func CompleteProjectNames() []string {
	cwd, err := os.Getwd()
	if err != nil {
		return nil
	}
	paths, err := project.FindAll("", cwd)
	if err != nil {
		return nil
	}
	f, err := project.LoadAll(paths)
	if err != nil {
		return nil
	}
	var out []string
	for _, d := range f.Services {
		out = append(out, d.Name)
	}
	return out
}
