// Package systemd is svc export systemd: a project's services (lib/svc/project)
// as systemd units, one a service and a target that groups them, the way
// foreman exports a Procfile. What svc works out when it starts a service
// — ports, the worktree's slug, the program on PATH, the env files'
// lines — is worked out here, once, and fixed in the units; what a unit
// cannot say (readiness found by svc, a pseudo-terminal) is a Note, and a
// comment in the unit. It prints nothing and writes only in Write.
package systemd

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/agentry/agentry/lib/svc"
	"github.com/agentry/agentry/lib/svc/dotenv"
	"github.com/agentry/agentry/lib/svc/project"
)

// Options are what Export needs besides the project.
type Options struct {
	Home string // svc's state home: ports and worktrees are its registry's
	// Project is the project's name under svc: the units' prefix and the
	// target's name.
	Project string
	// User: units for a user's manager (systemctl --user); else the
	// system's.
	User bool
	// Dir is where the files go (absolute): the units' EnvironmentFile=
	// name files there.
	Dir string
	// Names are the services to export, with what they depend on; none:
	// all.
	Names []string
	// LookPath finds a program the way the shell would (exec.LookPath);
	// nil leaves a bare program name to systemd's own search.
	LookPath func(string) (string, error)
	// RunAs is User= of system units; "" leaves it out (root's).
	RunAs string
}

// File is one file of the export, named within Options.Dir.
type File struct {
	Name    string      `json:"name"`
	Mode    fs.FileMode `json:"mode"`
	Data    []byte      `json:"-"`
	Service string      `json:"service,omitempty"` // "" for the target
}

// Note is what a unit cannot say as svc would do it, or what was fixed at
// export that svc works out at each start.
type Note struct {
	Service string `json:"service"`
	Text    string `json:"text"`
}

// Export is a project as systemd units.
type Export struct {
	Target string `json:"target"` // the target's unit name
	Files  []File `json:"files"`
	Notes  []Note `json:"notes,omitempty"`
}

// ServiceError is what stops one service's unit: its env file cannot be
// read, or its port cannot be fixed.
type ServiceError struct {
	Service string
	Err     error
}

func (e *ServiceError) Error() string { return e.Service + ": " + e.Err.Error() }
func (e *ServiceError) Unwrap() error { return e.Err }

// Units makes the units of the named services of f (and what they depend
// on): one .service a service, NAME.env (mode 0600) beside it for the
// environment the file gives it, and PROJECT.target that wants them all.
func Units(f *project.File, o Options) (*Export, error) {
	defs, err := f.Closure(o.Names)
	if err != nil {
		return nil, err
	}
	x := &exporter{f: f, o: o, out: &Export{Target: UnitName("target", o.Project)}}
	if err := x.fixPorts(); err != nil {
		return nil, err
	}
	var wants []string
	for _, d := range defs {
		if err := x.service(d); err != nil {
			return nil, &ServiceError{Service: d.Name, Err: err}
		}
		wants = append(wants, x.unitOf(d.Name))
	}
	x.out.Files = append(x.out.Files, File{Name: x.out.Target, Mode: 0o644, Data: x.target(wants)})
	return x.out, nil
}

// exporter is one run of Units.
type exporter struct {
	f     *project.File
	o     Options
	out   *Export
	ports map[string]string // every service's port, fixed: "" for none
	// portHow says how an "auto" port was fixed, by service.
	portHow map[string]string
	base    int // the port_block's first port, 0 for none
}

func (x *exporter) unitOf(name string) string { return UnitName("service", x.o.Project, name) }

func (x *exporter) note(service, format string, args ...any) {
	x.out.Notes = append(x.out.Notes, Note{Service: service, Text: fmt.Sprintf(format, args...)})
}

// fixPorts gives every service of the file (so that {port:NAME} of a
// dependency is known) its port: the file's number; for "auto", the
// port_block's as svc up gives it, else the one svc gave the service now
// running, else a free one picked as svc picks.
func (x *exporter) fixPorts() error {
	block, base, err := x.f.BlockPorts(x.o.Home)
	if err != nil {
		return err
	}
	x.base = base
	x.ports, x.portHow = map[string]string{}, map[string]string{}
	for _, d := range x.f.Services {
		p := d.Port
		if p == svc.PortAuto {
			var how string
			p, how, err = x.autoPort(d, block)
			if err != nil {
				return &ServiceError{Service: d.Name, Err: err}
			}
			x.portHow[d.Name] = how
		}
		x.ports[d.Name] = p
	}
	return nil
}

func (x *exporter) autoPort(d *project.Def, block map[string]string) (port, how string, err error) {
	if p, ok := block[d.Name]; ok {
		return p, "the worktree's port_block", nil
	}
	dir := svc.Dir{Home: x.o.Home, Name: x.o.Project + "/" + d.Name}
	if l, err := svc.Look(dir); err == nil && l.Status.Live() {
		if p, err := svc.Port(dir); err == nil {
			return strconv.Itoa(p), "the port svc gave it, running now", nil
		}
	}
	p, err := pickFree(dir.Name, d.Cwd)
	if err != nil {
		return "", "", err
	}
	return strconv.Itoa(p), "free now", nil
}

// The placeholders of a project file svc up fills in.
var (
	portRef  = regexp.MustCompile(`\{port:([^{}]*)\}`)
	blockRef = regexp.MustCompile(`\{port\+([0-9]+)\}`)
)

// resolver fills in one service's placeholders as svc up and svc start
// would: {port+K}, {port:NAME}, then {worktree} and {slot}, then {port}.
type resolver struct {
	x    *exporter
	port string
	wt   *svc.WorktreeTag
}

func (r resolver) fill(s string) string {
	s = blockRef.ReplaceAllStringFunc(s, func(m string) string {
		k, _ := strconv.Atoi(blockRef.FindStringSubmatch(m)[1])
		return strconv.Itoa(r.x.base + k)
	})
	s = portRef.ReplaceAllStringFunc(s, func(m string) string { return r.x.ports[portRef.FindStringSubmatch(m)[1]] })
	if r.wt != nil {
		s = r.wt.Placeholders().Replace(s)
	}
	if r.port != "" {
		s = strings.ReplaceAll(s, "{port}", r.port)
	}
	return s
}

func (r resolver) fillAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = r.fill(s)
	}
	return out
}

// worktree is the worktree svc would record for a service in cwd, nil
// outside git.
func (x *exporter) worktree(cwd string) (*svc.WorktreeTag, error) {
	w, err := svc.Registry(x.o.Home).WorktreeOf(cwd)
	if err != nil || w == nil {
		return nil, err
	}
	return &svc.WorktreeTag{Top: w.Top, Repo: w.Repo, Main: w.Main, Slug: w.Slug, Slot: w.Slot}, nil
}

// service adds one service's unit, and its env file when the project
// file gives it an environment.
func (x *exporter) service(d *project.Def) error {
	wt, err := x.worktree(d.Cwd)
	if err != nil {
		return err
	}
	r := resolver{x: x, port: x.ports[d.Name], wt: wt}
	if how, ok := x.portHow[d.Name]; ok {
		x.note(d.Name, "port \"auto\" is fixed at %s (%s): the unit has it, not a port picked at each start", r.port, how)
	}
	own, err := x.fileEnv(d)
	if err != nil {
		return err
	}
	own = r.fillAll(own)
	if uses(d, own, "{worktree}", "{slot}") {
		if wt != nil {
			x.note(d.Name, "{worktree} and {slot} are fixed at %s and %d, this worktree's", wt.Slug, wt.Slot)
		} else {
			x.note(d.Name, "{worktree} and {slot} are left as they are: %s is not in a git worktree (svc leaves them so too)", d.Cwd)
		}
	}
	argv := x.argv(d, r.fillAll(d.Command))
	u := &unit{name: x.unitOf(d.Name), def: d, argv: argv, env: svcEnv(own, r.port, wt)}
	if len(own) > 0 {
		envName := strings.TrimSuffix(u.name, ".service") + ".env"
		u.envFile = filepath.Join(x.o.Dir, envName)
		x.out.Files = append(x.out.Files, File{Name: envName, Mode: 0o600, Data: envFileData(own), Service: d.Name})
		if len(d.EnvFile) > 0 {
			x.note(d.Name, "env_file is copied into %s at export: export again after editing it", envName)
		}
	}
	u.readyCmd = r.fill(d.ReadyCmd)
	x.readiness(d)
	x.watched(d)
	if d.PTY {
		x.note(d.Name, "pty = true is not expressed: systemd gives it no terminal (its output goes to the journal)")
	}
	u.deps = x.deps(d)
	u.project, u.target, u.user, u.runAs = x.o.Project, x.out.Target, x.o.User, x.o.RunAs
	u.source = x.f.Path
	if d.From != "" {
		u.source = d.From
	}
	if d.MaxRestarts > 0 {
		x.note(d.Name, "max_restarts = %d is StartLimitBurst=%d over the unit's life; svc's backoff between restarts is not expressed", d.MaxRestarts, d.MaxRestarts+1)
	}
	u.notes = notesOf(x.out.Notes, d.Name)
	x.out.Files = append(x.out.Files, File{Name: u.name, Mode: 0o644, Data: u.render(), Service: d.Name})
	return nil
}

// fileEnv is the environment the project file gives a service: its
// env_file lines, then env.
func (x *exporter) fileEnv(d *project.Def) ([]string, error) {
	var env []string
	for _, ef := range d.EnvFile {
		kvs, err := dotenv.Read(ef)
		if err != nil {
			return nil, fmt.Errorf("env_file %v", err)
		}
		env = append(env, kvs...)
	}
	return append(env, d.Env...), nil
}

// svcEnv is what svc adds to a service's environment, which is no secret
// and goes in the unit itself: SVC_WORKTREE and SVC_SLOT, and
// PYTHONUNBUFFERED=1, unless the file sets them; PORT, whatever it sets.
func svcEnv(own []string, port string, wt *svc.WorktreeTag) []string {
	sets := func(k string) bool {
		return slices.ContainsFunc(own, func(kv string) bool { return strings.HasPrefix(kv, k+"=") })
	}
	var out []string
	if wt != nil && !sets("SVC_WORKTREE") {
		out = append(out, "SVC_WORKTREE="+wt.Slug)
	}
	if wt != nil && !sets("SVC_SLOT") {
		out = append(out, "SVC_SLOT="+strconv.Itoa(wt.Slot))
	}
	if !sets("PYTHONUNBUFFERED") {
		out = append(out, "PYTHONUNBUFFERED=1")
	}
	if port != "" {
		out = append(out, "PORT="+port)
	}
	return out
}

func uses(d *project.Def, env []string, refs ...string) bool {
	all := strings.Join(slices.Concat(d.Command, d.Env, env, []string{d.ReadyCmd}), "\x00")
	return slices.ContainsFunc(refs, func(r string) bool { return strings.Contains(all, r) })
}

// argv is the command as ExecStart= runs it: one string through /bin/sh
// -c, as svc runs it; several executed directly, the program found on
// PATH now (systemd searches only its own fixed one).
func (x *exporter) argv(d *project.Def, cmd []string) []string {
	if len(cmd) == 1 {
		return []string{"/bin/sh", "-c", cmd[0]}
	}
	argv := slices.Clone(cmd)
	switch prog := argv[0]; {
	case filepath.IsAbs(prog):
	case strings.Contains(prog, "/"):
		argv[0] = filepath.Join(d.Cwd, prog)
	case x.o.LookPath != nil:
		if p, err := x.o.LookPath(prog); err == nil && filepath.IsAbs(p) {
			argv[0] = p
		} else {
			x.note(d.Name, "%s is not on PATH here: it is left for systemd to find in its own", prog)
		}
	}
	return argv
}

// readiness notes what svc would wait for that systemd does not: it
// takes a service as started once its process is.
func (x *exporter) readiness(d *project.Def) {
	var how string
	switch {
	case d.ReadyURL != "":
		how = "ready_url " + d.ReadyURL
	case d.ReadyPort != 0:
		how = fmt.Sprintf("ready_port %d", d.ReadyPort)
	case d.ReadyRegex != "":
		how = "ready_regex " + d.ReadyRegex
	case d.ReadyCmd != "":
		return // ExecStartPost= waits for it
	case !x.awaitedReady(d):
		return
	default:
		how = "the port it listens on, which svc finds"
	}
	x.note(d.Name, "readiness (%s) is not expressed: what is ordered after it starts once its process has started", how)
}

// awaitedReady tells whether a service of the file waits for d to be
// ready.
func (x *exporter) awaitedReady(d *project.Def) bool {
	for _, o := range x.f.Services {
		for _, n := range o.Needs {
			if n.Name == d.Name && n.Cond == project.Ready {
				return true
			}
		}
	}
	return false
}

// dep is one dependency as unit settings: ordered after it, and required
// (it must start, or a one-shot succeed) or only wanted (a one-shot
// that need only have completed).
type dep struct {
	unit     string
	required bool
}

func (x *exporter) deps(d *project.Def) []dep {
	var out []dep
	for _, n := range d.Needs {
		out = append(out, dep{unit: x.unitOf(n.Name), required: n.Cond != project.Completed})
	}
	return out
}

func notesOf(notes []Note, service string) []string {
	var out []string
	for _, n := range notes {
		if n.Service == service {
			out = append(out, n.Text)
		}
	}
	return out
}

func envFileData(env []string) []byte {
	var b strings.Builder
	b.WriteString("# The environment the project file gives the service (env_file, then env): keep it 0600.\n")
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		b.WriteString(envFileLine(k, v))
	}
	return []byte(b.String())
}

// Stale are the unit files in dir an earlier export of project wrote
// (their first line says so) that files, this export's, does not have:
// a service no longer in the project file, whose unit a link of
// dir/*.service would still take.
func Stale(dir, project string, files []File) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	ours := map[string]bool{}
	for _, f := range files {
		ours[f.Name] = true
	}
	mark := " of svc project " + project + ", made by svc export systemd "
	var out []string
	for _, e := range entries {
		name := e.Name()
		if ours[name] || !e.Type().IsRegular() || !strings.HasSuffix(name, ".service") {
			continue
		}
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		first, _ := bufio.NewReader(io.LimitReader(f, 4096)).ReadString('\n')
		f.Close()
		if strings.HasPrefix(first, "# ") && strings.Contains(first, mark) {
			out = append(out, name)
		}
	}
	return out
}
