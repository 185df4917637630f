// Package project is svc up and svc down: a project's services read from
// one file (svc.toml, or a Procfile), started in dependency order with
// independent ones in parallel, and stopped in the reverse order. It
// prints nothing: the command line's verbs for them are lib/svc/svccmd's.
package project

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentry/agentry/lib/svc"
	toml "github.com/pelletier/go-toml/v2"
)

// The conditions a service can wait for in another.
const (
	Started   = "started"   // its command is running
	Ready     = "ready"     // it was found ready (the default for a service)
	Completed = "completed" // a one-shot ended, however
	Succeeded = "succeeded" // a one-shot exited 0 (the default for a one-shot)
)

// File is a project file, read and checked.
type File struct {
	Path     string // as found or given
	Dir      string // the project's directory: the file's, absolute
	Services []*Def // in the order of the file
	// Sources are the files read besides Path (LoadAll), in order.
	Sources []string
	// PortBlock is port_block: the ports reserved for the worktree.
	PortBlock int
	// Archive is conductor.json's archive script, for svc down --archive.
	Archive string
}

// Def is one service as the file defines it.
type Def struct {
	Name    string
	Line    int      // where the file defines it
	Command []string // one element runs through /bin/sh -c
	Cwd     string   // absolute
	Env     []string // K=V, in key order
	EnvFile []string // absolute
	Port    string   // "", "auto" or a number
	// PortBase: an "auto" port that is the first of the worktree's
	// port_block (conductor.json's run, whose $CONDUCTOR_PORT is).
	PortBase bool
	Oneshot  bool
	Needs    []Need
	// Serves: the file says the service listens (a port or a ready_* key
	// in svc.toml, web in a Procfile), so svc up waits for it to be ready.
	Serves bool
	// Release: a Procfile's release, the one-shot every other entry
	// needs to have succeeded; it runs again whenever svc up starts one
	// of them.
	Release bool

	ReadyURL, ReadyRegex, ReadyCmd string
	ReadyPort                      int
	ReadyTimeout, StopGrace        time.Duration
	Restart                        string
	MaxRestarts                    int
	PTY                            bool
	StopKeys                       string // as written: svc send's escapes unread
	StopSignal                     string // "": the default
	NoFollow                       bool   // follow = false
	// Health and Watch: health_* and watch, watch_exclude, debounce,
	// cascade (watched.go).
	Health svc.HealthSpec
	Watch  svc.WatchSpec

	// From is the file that defines it when that is not the project's
	// own format (.claude/launch.json, conductor.json): "" for svc.toml
	// and a Procfile.
	From string

	lines map[string]int // the line of each of its keys, by name
}

// at is the line of one of the service's keys, else of the service.
func (d *Def) at(key string) int {
	if l, ok := d.lines[key]; ok {
		return l
	}
	return d.Line
}

// Need is a dependency: Name must meet Cond before the service starts.
type Need struct {
	Name string
	Cond string
	Line int
}

// Lookup is the service called name, or nil.
func (f *File) Lookup(name string) *Def {
	for _, d := range f.Services {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// Find locates the project file: given, else svc.toml in dir, else
// Procfile in dir.
func Find(given, dir string) (string, error) {
	if given != "" {
		return given, nil
	}
	for _, name := range []string{"svc.toml", "Procfile"} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no svc.toml or Procfile in %s", dir)
}

// Load reads and checks a project file: a name ending in .toml is
// svc.toml's format, anything else a Procfile. Every error names the file
// and the line.
func Load(path string) (*File, error) {
	f, err := readFile(path)
	if err != nil {
		return f, err
	}
	return f, f.check()
}

// readFile reads a project file of any kind, unchecked across services.
func readFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) { // said as "PATH: why", not "open PATH: why"
			err = fmt.Errorf("%s: %w", pe.Path, pe.Err)
		}
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	f := &File{Path: path, Dir: filepath.Dir(abs)}
	switch kindOf(path) {
	case "toml":
		err = f.parseTOML(b)
	case "launch":
		if filepath.Base(f.Dir) == ".claude" {
			f.Dir = filepath.Dir(f.Dir)
		}
		err = f.parseLaunch(b)
	case "conductor":
		err = f.parseConductor(b)
	default:
		err = f.parseProcfile(b)
	}
	return f, err
}

// fileError is an error at a line of the file.
func (f *File) errorf(line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", f.Path, line, fmt.Sprintf(format, args...))
}

// The Procfile entries Heroku gives a meaning to by name.
const (
	procWeb     = "web"     // receives the HTTP traffic: a server
	procRelease = "release" // runs once, first, and must succeed
)

// parseProcfile reads "name: command" lines; # starts a comment. Each
// service gets a port ($PORT), as foreman gives one. As on Heroku, web is
// a server, and release is a one-shot run first: every other entry
// depends on its having succeeded.
func (f *File) parseProcfile(b []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, cmd, ok := strings.Cut(line, ":")
		name, cmd = strings.TrimSpace(name), strings.TrimSpace(cmd)
		switch {
		case !ok:
			return f.errorf(n, "not NAME: COMMAND")
		case cmd == "":
			return f.errorf(n, "%s has no command", name)
		}
		if err := svc.ValidPlainName(name); err != nil {
			return f.errorf(n, "%v", err)
		}
		if f.Lookup(name) != nil {
			return f.errorf(n, "%s is defined twice", name)
		}
		d := &Def{Name: name, Line: n, Command: []string{cmd}, Cwd: f.Dir, Port: svc.PortAuto, Serves: name == procWeb}
		if name == procRelease {
			d.Port, d.Oneshot, d.Release = "", true, true
		}
		f.Services = append(f.Services, d)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %v", f.Path, err)
	}
	if len(f.Services) == 0 {
		return fmt.Errorf("%s defines no service", f.Path)
	}
	if rel := f.Lookup(procRelease); rel != nil {
		for _, d := range f.Services {
			if d != rel {
				d.Needs = []Need{{Name: rel.Name, Cond: Succeeded, Line: rel.Line}}
			}
		}
	}
	return nil
}

// tomlFile is svc.toml as decoded: [services.NAME] tables.
type tomlFile struct {
	PortBlock int                    `toml:"port_block"`
	Services  map[string]tomlService `toml:"services"`
}

type tomlService struct {
	Command      any               `toml:"command"`
	Cwd          string            `toml:"cwd"`
	Env          map[string]string `toml:"env"`
	EnvFile      any               `toml:"env_file"`
	Port         any               `toml:"port"`
	Oneshot      bool              `toml:"oneshot"`
	DependsOn    any               `toml:"depends_on"`
	ReadyURL     string            `toml:"ready_url"`
	ReadyPort    int               `toml:"ready_port"`
	ReadyRegex   string            `toml:"ready_regex"`
	ReadyCmd     string            `toml:"ready_cmd"`
	ReadyTimeout string            `toml:"ready_timeout"`
	StopGrace    string            `toml:"stop_grace"`
	StopSignal   string            `toml:"stop_signal"`
	Follow       *bool             `toml:"follow"`
	Restart      string            `toml:"restart"`
	MaxRestarts  int               `toml:"max_restarts"`
	Pty          bool              `toml:"pty"`
	StopKeys     string            `toml:"stop_keys"`
	// Health probes and the watch of files (watched.go).
	HealthURL      string `toml:"health_url"`
	HealthCmd      string `toml:"health_cmd"`
	HealthPort     int    `toml:"health_port"`
	HealthEvery    string `toml:"health_every"`
	HealthTimeout  string `toml:"health_timeout"`
	HealthFailures int    `toml:"health_failures"`
	Watch          any    `toml:"watch"`
	WatchExclude   any    `toml:"watch_exclude"`
	Debounce       string `toml:"debounce"`
	Cascade        bool   `toml:"cascade"`
}

func (f *File) parseTOML(b []byte) error {
	// First as plain TOML, so that an error of the typed decode below is
	// known to be a value of the wrong type, not one of the syntax.
	var plain map[string]any
	if err := toml.Unmarshal(b, &plain); err != nil {
		return f.tomlError(err, false)
	}
	var t tomlFile
	dec := toml.NewDecoder(bytes.NewReader(b)).DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return f.tomlError(err, true)
	}
	lines := keyLines(b)
	if t.PortBlock < 0 || t.PortBlock > 1000 {
		return f.errorf(lines["port_block"], "port_block is a number of ports from 1 to 1000, not %d", t.PortBlock)
	}
	f.PortBlock = t.PortBlock
	if len(t.Services) == 0 {
		return fmt.Errorf("%s defines no service ([services.NAME] tables)", f.Path)
	}
	for name, ts := range t.Services {
		line := lines["services."+name]
		if err := svc.ValidPlainName(name); err != nil {
			return f.errorf(line, "%v", err)
		}
		d, err := f.def(name, ts, lines)
		if err != nil {
			return err
		}
		f.Services = append(f.Services, d)
	}
	slices.SortFunc(f.Services, func(a, b *Def) int { return a.Line - b.Line })
	return nil
}

// tomlError names the file, the line and, for a key svc.toml does not
// have or a value of the wrong type (typed: the file is TOML, and this is
// the error of decoding it into svc.toml's shape), the key.
func (f *File) tomlError(err error, typed bool) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		e := strict.Errors[0]
		row, _ := e.Position()
		key := e.Key()
		msg := "unknown key " + strings.Join(key, ".")
		if near := suggestion(key); near != "" {
			msg += ": did you mean " + near + "?"
		}
		return f.errorf(row, "%s", msg)
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, _ := de.Position()
		if !typed {
			return f.errorf(row, "%s", strings.TrimPrefix(de.Error(), "toml: ")) // the parser's words, less its name
		}
		// The decoder's view is "cannot decode TOML integer into struct
		// field … of type string"; say what the file should hold.
		what := wanted(de.Key())
		if k := de.Key(); len(k) > 0 {
			return f.errorf(row, "%s has the wrong type: %s is wanted", strings.Join(k, "."), what)
		}
		return f.errorf(row, "the value there has the wrong type: %s is wanted", what)
	}
	return fmt.Errorf("%s: %v", f.Path, err)
}

// def checks one [services.NAME] table.
func (f *File) def(name string, t tomlService, lines map[string]int) (*Def, error) {
	d := &Def{Name: name, Line: lines["services."+name], Oneshot: t.Oneshot, ReadyURL: t.ReadyURL, ReadyPort: t.ReadyPort,
		ReadyRegex: t.ReadyRegex, ReadyCmd: t.ReadyCmd, Restart: t.Restart, MaxRestarts: t.MaxRestarts, PTY: t.Pty,
		StopSignal: t.StopSignal, NoFollow: t.Follow != nil && !*t.Follow, StopKeys: t.StopKeys, lines: map[string]int{}}
	prefix := "services." + name + "."
	for k, l := range lines {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			d.lines[rest] = l
		}
	}
	at := d.at
	var err error
	if d.Command, err = stringOrList(t.Command); err != nil || len(d.Command) == 0 || d.Command[0] == "" {
		return nil, f.errorf(at("command"), "%s needs a command: a string (run by /bin/sh -c) or an array of arguments", name)
	}
	d.Cwd = f.Dir
	if t.Cwd != "" {
		d.Cwd = f.abs(t.Cwd)
	}
	for _, k := range sortedKeys(t.Env) {
		if k == "" || strings.Contains(k, "=") {
			return nil, f.errorf(at("env"), "%s: %q is not an environment variable's name", name, k)
		}
		d.Env = append(d.Env, k+"="+t.Env[k])
	}
	files, err := stringOrList(t.EnvFile)
	if err != nil {
		return nil, f.errorf(at("env_file"), "%s: env_file is a file name or an array of them", name)
	}
	for _, ef := range files {
		d.EnvFile = append(d.EnvFile, f.abs(ef))
	}
	if d.Port, err = portValue(t.Port); err != nil {
		return nil, f.errorf(at("port"), "%s: %v", name, err)
	}
	if d.ReadyTimeout, err = duration(t.ReadyTimeout); err != nil {
		return nil, f.errorf(at("ready_timeout"), "%s: ready_timeout: %v", name, err)
	}
	if d.StopGrace, err = duration(t.StopGrace); err != nil {
		return nil, f.errorf(at("stop_grace"), "%s: stop_grace: %v", name, err)
	}
	if err := f.watched(d, t, at); err != nil {
		return nil, err
	}
	if err := f.checkOptions(d, at); err != nil {
		return nil, err
	}
	d.Serves = d.Port != "" || d.ReadyURL != "" || d.ReadyPort != 0 || d.ReadyRegex != "" || d.ReadyCmd != ""
	if d.Needs, err = needs(t.DependsOn, func(elem string) int { return at("depends_on" + elem) }); err != nil {
		return nil, f.errorf(at("depends_on"), "%s: %v", name, err)
	}
	return d, nil
}

func (f *File) checkOptions(d *Def, at func(string) int) error {
	var ready []string
	for key, set := range map[string]bool{"ready_url": d.ReadyURL != "", "ready_port": d.ReadyPort != 0, "ready_regex": d.ReadyRegex != "", "ready_cmd": d.ReadyCmd != ""} {
		if set {
			ready = append(ready, key)
		}
	}
	// The second of them in the file is the one too many.
	slices.SortFunc(ready, func(a, b string) int { return at(a) - at(b) })
	switch {
	case len(ready) > 1:
		return f.errorf(at(ready[1]), "%s: give at most one of ready_url, ready_port, ready_regex and ready_cmd", d.Name)
	case !slices.Contains([]string{"", "no", "on-failure", "always", svc.RestartUnhealthy}, d.Restart):
		return f.errorf(at("restart"), "%s: restart is no, on-failure, always or unhealthy, not %q", d.Name, d.Restart)
	case d.MaxRestarts < 0:
		return f.errorf(at("max_restarts"), "%s: max_restarts cannot be negative", d.Name)
	case d.Oneshot && d.Restart == "always":
		return f.errorf(at("restart"), "%s: a one-shot cannot restart always", d.Name)
	case d.StopSignal != "" && !svc.ValidStopSignal(d.StopSignal):
		return f.errorf(at("stop_signal"), "%s: stop_signal %q is not a signal that stops a process (TERM, INT, QUIT, HUP, USR1, USR2, KILL, or a number)", d.Name, d.StopSignal)
	case d.StopKeys != "" && !d.PTY:
		return f.errorf(at("stop_keys"), "%s: stop_keys needs pty = true: the keys are typed into the service's terminal", d.Name)
	}
	if _, err := svc.UnescapeKeys(d.StopKeys); err != nil {
		return f.errorf(at("stop_keys"), "%s: stop_keys %v", d.Name, err)
	}
	return nil
}

func (f *File) abs(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(f.Dir, p)
}

// needs reads depends_on: an array of names (each with the default
// condition of what it names), or a table of name = condition.
func needs(v any, lineOf func(elem string) int) ([]Need, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case []any:
		var out []Need
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("depends_on lists names, not %v", e)
			}
			out = append(out, Need{Name: s, Line: lineOf("[" + strconv.Itoa(i) + "]")})
		}
		return out, nil
	case map[string]any:
		var out []Need
		for _, k := range sortedKeys(v) {
			c, ok := v[k].(string)
			if !ok || !slices.Contains([]string{Started, Ready, Completed, Succeeded}, c) {
				return nil, fmt.Errorf("depends_on.%s is %q: the conditions are started, ready, completed and succeeded", k, fmt.Sprint(v[k]))
			}
			out = append(out, Need{Name: k, Cond: c, Line: lineOf("." + k)})
		}
		return out, nil
	}
	return nil, fmt.Errorf("depends_on is an array of names or a table of name = condition")
}

func stringOrList(v any) ([]string, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		return []string{v}, nil
	case []any:
		out := make([]string, len(v))
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("not a string: %v", e)
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, fmt.Errorf("not a string or an array of strings")
}

func portValue(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		if v == svc.PortAuto {
			return v, nil
		}
		if n, err := strconv.Atoi(v); err == nil && n >= 1 && n <= 65535 {
			return "", fmt.Errorf("port %q is a string: write the number without quotes (port = %d)", v, n)
		}
		return "", fmt.Errorf(`port is "auto" or a number from 1 to 65535, not %q`, v)
	case int64:
		if v >= 1 && v <= 65535 {
			return strconv.FormatInt(v, 10), nil
		}
	}
	return "", fmt.Errorf(`port is "auto" or a number from 1 to 65535, not %v`, v)
}

func duration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a duration such as 500ms or 30s", s)
	}
	return d, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// wanted says what the value at a key path holds in svc.toml, from
// tomlFile's types.
func wanted(path []string) string {
	t := reflect.TypeFor[tomlFile]()
	for _, k := range path {
		switch t.Kind() {
		case reflect.Map:
			t = t.Elem()
		case reflect.Struct:
			f, ok := fieldTagged(t, k)
			if !ok {
				return "something else"
			}
			t = f.Type
		default:
			return "something else"
		}
	}
	if what, ok := map[reflect.Kind]string{reflect.String: "a string", reflect.Int: "a number", reflect.Bool: "true or false"}[t.Kind()]; ok {
		return what
	}
	return "something else"
}

// fieldTagged is the field of struct type t whose toml tag is key.
func fieldTagged(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if t.Field(i).Tag.Get("toml") == key {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}
