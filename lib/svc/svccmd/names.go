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
		v.noteShadowed(d)
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

// noteShadowed says, for a bare name that means a stopped service while
// this directory's project has a live one of that name, which one the
// name means and how to name the other: the rule (the bare name's own
// service first) stands, so that no verb acts on another service than
// the one it names, but the person who meant the running one is told.
func (v *Verbs) noteShadowed(d svc.Dir) {
	if strings.Contains(d.Name, "/") {
		return
	}
	proj := v.hereProject()
	if proj == "" {
		return
	}
	pd := svc.Dir{Home: v.Home, Name: proj + "/" + d.Name}
	if !exists(pd) {
		return
	}
	own, err := svc.Look(d)
	if err != nil || own.Status.Live() {
		return
	}
	if l, err := svc.Look(pd); err == nil && l.Status.Live() {
		v.Voice.Notef("%s is the %s service started outside a project; this project's %s, %s, is named %s", d.Name, own.Status, d.Name, l.Status, pd.Name)
	}
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

// hereProject is the project svc up started in this directory, or in
// the one svc up and svc down find from here (a subdirectory of a git
// checkout finds its project above it), or "".
func (v *Verbs) hereProject() string {
	dir, err := v.projectDir("")
	if err != nil {
		return ""
	}
	proj, _ := svc.Registry(v.Home).FindProject(dir)
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
		said, cands := n, []string{n}
		if p, bare, ok := strings.Cut(n, "/"); ok {
			cands = append(cands, bare)
			if p == proj {
				said = bare
			}
		}
		for _, c := range cands {
			if d := editDistance(name, c); d < bestD {
				best, bestD = said, d
			}
		}
	}
	return best
}

// editDistance is the number of letters to insert, delete, change or
// swap with the next to make b of a (optimal string alignment), by bytes.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
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
