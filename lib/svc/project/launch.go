package project

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agentry/agentry/lib/svc"
)

// The files svc up reads besides svc.toml and a Procfile, which other
// tools' users already have in their repositories.
const (
	// LaunchFile is Claude Code's launch configurations, under the
	// project's directory.
	LaunchFile = ".claude/launch.json"
	// ConductorFile is Conductor's workspace scripts.
	ConductorFile = "conductor.json"
)

// The services a conductor.json makes.
const (
	conductorSetup = "setup"
	conductorRun   = "run"
	// conductorPorts is the block of ports Conductor gives a workspace,
	// $CONDUCTOR_PORT the first.
	conductorPorts = 10
)

// launchFile is .claude/launch.json as decoded.
type launchFile struct {
	Configurations []launchConfig `json:"configurations"`
}

type launchConfig struct {
	Name              string            `json:"name"`
	RuntimeExecutable string            `json:"runtimeExecutable"`
	RuntimeArgs       []string          `json:"runtimeArgs"`
	Port              int               `json:"port"`
	AutoPort          bool              `json:"autoPort"`
	URL               string            `json:"url"`
	Env               map[string]string `json:"env"`
	Cwd               string            `json:"cwd"`
}

// parseLaunch reads .claude/launch.json: each configuration a service,
// its runtimeExecutable and runtimeArgs its command (executed directly),
// autoPort a port svc picks (else port, as given), url where it is ready
// (the port in it following the port svc picks). Comments and trailing
// commas, which launch files often have, are allowed.
func (f *File) parseLaunch(b []byte) error {
	var lf launchFile
	if err := json.Unmarshal(jsonc(b), &lf); err != nil {
		return fmt.Errorf("%s: %v", f.Path, err)
	}
	if len(lf.Configurations) == 0 {
		return fmt.Errorf("%s has no configurations", f.Path)
	}
	for i, c := range lf.Configurations {
		where := fmt.Sprintf("%s: configurations[%d]", f.Path, i)
		name := plainName(c.Name)
		switch {
		case name == "":
			return fmt.Errorf("%s has no name", where)
		case c.RuntimeExecutable == "":
			return fmt.Errorf("%s (%s) has no runtimeExecutable", where, c.Name)
		case f.Lookup(name) != nil:
			return fmt.Errorf("%s: %s is defined twice", where, name)
		case c.Port < 0 || c.Port > 65535:
			return fmt.Errorf("%s (%s): port %d is not a port", where, c.Name, c.Port)
		}
		d := &Def{Name: name, Line: i + 1, Command: append([]string{c.RuntimeExecutable}, c.RuntimeArgs...),
			Cwd: f.Dir, ReadyURL: c.URL, From: f.Path}
		if c.Cwd != "" {
			d.Cwd = f.abs(c.Cwd)
		}
		for _, k := range sortedKeys(c.Env) {
			d.Env = append(d.Env, k+"="+c.Env[k])
		}
		switch {
		case c.AutoPort:
			d.Port = svc.PortAuto
			if c.Port > 0 {
				d.ReadyURL = followPort(c.URL, c.Port)
			}
		case c.Port > 0:
			d.Port = strconv.Itoa(c.Port)
		}
		d.Serves = d.Port != "" || d.ReadyURL != ""
		f.Services = append(f.Services, d)
	}
	return nil
}

// followPort is url with {port} for the given port, so that it follows
// the port svc picks.
func followPort(u string, port int) string {
	p, err := url.Parse(u)
	if err != nil || p.Port() != strconv.Itoa(port) {
		return u
	}
	p.Host = p.Hostname() + ":{port}"
	return strings.Replace(p.String(), "%7Bport%7D", "{port}", 1)
}

// plainName makes a service name of a configuration's name: its letters,
// digits, '.', '_' and '-', other runs of characters as one '-'.
func plainName(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.TrimSpace(s) {
		ok := r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
		switch {
		case ok:
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	n := strings.Trim(b.String(), "-.")
	if len(n) > 64 {
		n = n[:64]
	}
	return n
}

// conductorFile is conductor.json as decoded.
type conductorFile struct {
	Scripts struct {
		Setup   string `json:"setup"`
		Run     string `json:"run"`
		Archive string `json:"archive"`
	} `json:"scripts"`
}

// parseConductor reads conductor.json: setup a one-shot, run a service
// that needs setup to have succeeded, archive what svc down --archive
// runs once they are stopped. As in Conductor, the worktree has a block
// of ten ports (port_block = 10), the first in $CONDUCTOR_PORT for every
// script and run's own port ($PORT). Each script runs through /bin/sh -c
// in the project's directory, with CONDUCTOR_WORKSPACE_NAME (the
// worktree's slug) and CONDUCTOR_WORKSPACE_PATH.
func (f *File) parseConductor(b []byte) error {
	var cf conductorFile
	if err := json.Unmarshal(jsonc(b), &cf); err != nil {
		return fmt.Errorf("%s: %v", f.Path, err)
	}
	s := cf.Scripts
	if s.Setup == "" && s.Run == "" {
		return fmt.Errorf("%s has no scripts.setup or scripts.run", f.Path)
	}
	f.PortBlock = conductorPorts
	env := ConductorEnv(f.Dir, "{worktree}", "{port+0}")
	if s.Setup != "" {
		f.Services = append(f.Services, &Def{Name: conductorSetup, Line: 1, Command: []string{s.Setup}, Cwd: f.Dir,
			Env: env, Oneshot: true, From: f.Path})
	}
	if s.Run != "" {
		d := &Def{Name: conductorRun, Line: 2, Command: []string{s.Run}, Cwd: f.Dir, Port: svc.PortAuto, PortBase: true,
			Env: env, From: f.Path}
		if s.Setup != "" {
			d.Needs = []Need{{Name: conductorSetup, Cond: Succeeded, Line: 1}}
		}
		f.Services = append(f.Services, d)
	}
	f.Archive = s.Archive
	return nil
}

// ConductorEnv is what Conductor gives each of its scripts: the
// workspace's name and directory, and the first of its ports.
func ConductorEnv(dir, name, port string) []string {
	return []string{"CONDUCTOR_PORT=" + port, "CONDUCTOR_WORKSPACE_NAME=" + name, "CONDUCTOR_WORKSPACE_PATH=" + dir}
}

// jsonc is JSON with comments (// and /* */) and trailing commas made
// plain JSON; strings are left as they are.
func jsonc(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '"':
			j := i + 1
			for ; j < len(b) && b[j] != '"'; j++ {
				if b[j] == '\\' {
					j++
				}
			}
			end := min(j+1, len(b))
			out = append(out, b[i:end]...)
			i = end - 1
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				i++
			}
			i--
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			end := strings.Index(string(b[i+2:]), "*/")
			if end < 0 {
				return out
			}
			i += end + 3
		case c == ']' || c == '}':
			k := len(out) - 1
			for k >= 0 && (out[k] == ' ' || out[k] == '\t' || out[k] == '\n' || out[k] == '\r') {
				k--
			}
			if k >= 0 && out[k] == ',' {
				out = append(out[:k], out[k+1:]...)
			}
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return out
}

// NotFoundError is a project looked for and not found: no project file
// in Dir nor in any directory above it up to Top (the git checkout's
// top; Dir itself outside git).
type NotFoundError struct {
	Dir, Top string
}

func (e *NotFoundError) Error() string {
	where := e.Dir
	if e.Top != e.Dir {
		where += " or above it up to " + e.Top
	}
	return fmt.Sprintf("no svc.toml, Procfile, %s or %s in %s", LaunchFile, ConductorFile, where)
}

// Locate is the directory of the project dir (absolute) is in: dir, or
// the nearest above it that has a project file or that known says is a
// project's (nil: none is), looking no higher than the top of dir's git
// checkout, as git and docker compose look for theirs. Outside git only
// dir is looked in: with no checkout to stop at, a stray svc.toml in /tmp
// or a home directory would be every directory's below it. A
// *NotFoundError when there is none.
func Locate(dir string, known func(dir string) bool) (string, error) {
	dir = filepath.Clean(dir)
	top, ok := svc.CheckoutTop(dir)
	if !ok {
		top = dir
	}
	for d := dir; ; d = filepath.Dir(d) {
		if hasProjectFile(d) || known != nil && known(d) {
			return d, nil
		}
		if d == top || d == filepath.Dir(d) {
			return "", &NotFoundError{Dir: dir, Top: d}
		}
	}
}

// hasProjectFile reports whether dir has a file svc up reads.
func hasProjectFile(dir string) bool { return FileIn(dir) != "" }

// FileIn is the path of the first file svc up reads in dir (svc.toml,
// Procfile, .claude/launch.json, conductor.json), or "".
func FileIn(dir string) string {
	for _, name := range []string{"svc.toml", "Procfile", LaunchFile, ConductorFile} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return ""
}

// FileAbove is, for a directory outside git (where Locate looks in dir
// alone), the project file of the nearest directory above dir that has
// one and that ok accepts (nil: any), or "": what a person who ran svc
// in a project's subdirectory most likely meant.
func FileAbove(dir string, ok func(dir string) bool) string {
	dir = filepath.Clean(dir)
	if _, in := svc.CheckoutTop(dir); in {
		return ""
	}
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		if f := FileIn(d); f != "" && (ok == nil || ok(d)) {
			return f
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

// FindNearest is FindAll of the project dir is in (Locate), or of the
// file given.
func FindNearest(given, dir string) ([]string, error) {
	if given == "" {
		var err error
		if dir, err = Locate(dir, nil); err != nil {
			return nil, err
		}
	}
	return FindAll(given, dir)
}

// FindAll is the files svc up reads in dir: the one given, else svc.toml
// (or a Procfile when there is none) and .claude/launch.json and
// conductor.json, those of them that exist.
func FindAll(given, dir string) ([]string, error) {
	if given != "" {
		return []string{given}, nil
	}
	var out []string
	for _, name := range []string{"svc.toml", "Procfile", LaunchFile, ConductorFile} {
		if name == "Procfile" && len(out) > 0 {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			out = append(out, filepath.Join(dir, name))
		}
	}
	if len(out) == 0 {
		return nil, &NotFoundError{Dir: dir, Top: dir}
	}
	return out, nil
}

// LoadAll reads each file and makes one project of them, checked: the
// first file's directory (a launch file's, the one above .claude) is
// the project's. A name two files define is an error.
func LoadAll(paths []string) (*File, error) {
	var all *File
	for _, p := range paths {
		f, err := readFile(p)
		if err != nil {
			return nil, err
		}
		if all == nil {
			all = f
			continue
		}
		for _, d := range f.Services {
			if o := all.Lookup(d.Name); o != nil {
				return nil, fmt.Errorf("%s defines %s, which %s defines too", f.Path, d.Name, o.source(all))
			}
			all.Services = append(all.Services, d)
		}
		all.Sources = append(all.Sources, f.Path)
		if f.Archive != "" {
			all.Archive = f.Archive
		}
		all.PortBlock = max(all.PortBlock, f.PortBlock)
	}
	return all, all.check()
}

// source is the file that defines d.
func (d *Def) source(f *File) string {
	if d.From != "" {
		return d.From
	}
	return f.Path
}

// kindOf is how a project file is read, by its name.
func kindOf(path string) string {
	switch {
	case strings.HasSuffix(path, ".toml"):
		return "toml"
	case filepath.Base(path) == "launch.json":
		return "launch"
	case filepath.Base(path) == ConductorFile:
		return "conductor"
	}
	return "procfile"
}
