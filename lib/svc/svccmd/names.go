package svccmd

import (
	"os"
	"slices"
	"strings"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/svc"
)

// Resolve is the service a name given on the command line means: the
// service of that name, else, for a bare name, the service of that name
// in this directory's project (the one svc up started here). A name no
// service has is a usage error (exit 2) for every verb, with the nearest
// name as its hint.
func (v *Verbs) Resolve(name string) (svc.Dir, error) {
	d, err := v.Dir(name)
	if err != nil {
		return d, err
	}
	if exists(d) {
		return d, nil
	}
	proj := v.hereProject()
	if proj != "" && !strings.Contains(name, "/") {
		if pd := (svc.Dir{Home: v.Home, Name: proj + "/" + name}); exists(pd) {
			return pd, nil
		}
	}
	return d, unknownName(name, proj, v.names())
}

// ResolveAll resolves every name, or returns the first that is unknown;
// each service once.
func (v *Verbs) ResolveAll(names []string) ([]svc.Dir, error) {
	var ds []svc.Dir
	for _, n := range names {
		d, err := v.Resolve(n)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(ds, d) {
			ds = append(ds, d)
		}
	}
	return ds, nil
}

func exists(d svc.Dir) bool {
	_, err := os.Stat(d.Path())
	return err == nil
}

// hereProject is the project svc up started in this directory, or "".
func (v *Verbs) hereProject() string {
	cwd, err := os.Getwd()
	if err != nil {
		return ""
	}
	proj, _ := svc.Registry(v.Home).FindProject(cwd)
	return proj
}

func (v *Verbs) names() []string {
	all, _ := svc.List(v.Home)
	return all
}

// unknownName is the error for a name no service has, its hint the
// service the user most likely meant: a project's service of that bare
// name, else the nearest name by spelling (this project's services by
// their bare names).
func unknownName(name, proj string, all []string) error {
	err := cli.Usagef("no service called %s", name)
	if s := suggestName(name, proj, all); s != "" {
		return cli.WithHint(err, "did you mean "+s+"?")
	}
	if len(all) == 0 {
		return cli.WithHint(err, "there are no services: svc start or svc up starts one")
	}
	return cli.WithHint(err, "svc ls lists every service")
}

// suggestName is what unknownName suggests, or "".
func suggestName(name, proj string, all []string) string {
	var same []string
	for _, n := range all {
		if _, bare, ok := strings.Cut(n, "/"); ok && bare == name {
			same = append(same, n)
		}
	}
	if len(same) > 0 {
		return strings.Join(same, " or ")
	}
	// a letter wrong in a short name, two in a longer one
	best, bestD := "", min(2, len(name)/3+1)+1
	for _, n := range all {
		said := n
		if p, bare, ok := strings.Cut(n, "/"); ok && p == proj {
			said = bare
		}
		for _, cand := range []string{said, n} {
			if d := editDistance(name, cand); d < bestD {
				best, bestD = said, d
			}
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, by bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// OtherVerb is the error for a verb svc does not have that another tool
// taught (logs and log, kill, ps), naming svc's own, and the line it
// would be: with the name given last, and -f for a log followed.
func OtherVerb(verb string, args []string) error {
	ours := map[string]string{"logs": "tail", "log": "tail", "kill": "stop", "ps": "ls"}[verb]
	line := []string{"svc", ours}
	if ours == "tail" && (slices.Contains(args, "-f") || slices.Contains(args, "--follow")) {
		line = append(line, "-f")
	}
	switch n := len(args); {
	case ours == "ls":
	case n > 0 && !strings.HasPrefix(args[n-1], "-"):
		line = append(line, args[n-1])
	default:
		line = append(line, "NAME")
	}
	return cli.WithHint(cli.Usagef("svc has no %s command: it is svc %s here", verb, ours), strings.Join(line, " "))
}
