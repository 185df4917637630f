package svc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode"

	"github.com/agentry/agentry/lib/cmdline"
)

// Home is the state directory: $SVC_HOME, else $XDG_STATE_HOME/svc, else
// ~/.local/state/svc; a *HomeError when another user could have made it
// or can change it (CheckHome).
func Home(getenv func(string) string) (string, error) {
	h, err := homePath(getenv)
	if err != nil {
		return "", err
	}
	return h, CheckHome(h)
}

// ErrHomeNotYours is a state home, or a directory above it, that another
// user owns or may write to: whoever that is could have planted its
// services, and could change what svc stops, runs and appends to.
var ErrHomeNotYours = errors.New("another user could have made it or can change it")

// CheckHome refuses a state home as ssh refuses such a ~/.ssh: the home
// (when it exists) must be this user's and writable by no one else, and
// every directory above it this user's or root's, writable by others
// only when sticky (as /tmp is). (A group-writable directory above it is
// let pass: where users have a group of their own, a umask of 002 makes
// every directory so.) A home that does not exist yet is checked
// from the nearest directory above it that does; symbolic links are
// followed, and the directories they lead to are what is checked.
func CheckHome(home string) error {
	real, rest := home, ""
	for {
		r, err := filepath.EvalSymlinks(real)
		if err == nil {
			real = r
			break
		}
		if !errors.Is(err, os.ErrNotExist) || filepath.Dir(real) == real {
			return nil // nothing there to check; making it will say why
		}
		rest, real = filepath.Join(filepath.Base(real), rest), filepath.Dir(real)
	}
	uid := os.Geteuid()
	for d, isHome := real, rest == ""; ; d, isHome = filepath.Dir(d), false {
		if why := checkHomeDir(d, isHome, uid); why != "" {
			where := "the state directory " + home + " is"
			if !isHome {
				where = "the state directory " + home + " is under " + d + ", which is"
			}
			return &HomeError{home, fmt.Errorf("%s %s: %w", where, why, ErrHomeNotYours)}
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

// checkHomeDir checks one directory of a home's path: the home itself
// must be uid's and writable by no one else; a directory above it uid's or
// root's, and writable by others only when sticky.
func checkHomeDir(d string, isHome bool, uid int) (why string) {
	fi, err := os.Stat(d)
	if err != nil {
		return ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	owner := int(st.Uid)
	switch {
	case owner != uid && (isHome || owner != 0):
		return fmt.Sprintf("owned by uid %d, not by you (uid %d)", owner, uid)
	case isHome && fi.Mode().Perm()&0o022 != 0, !isHome && fi.Mode().Perm()&0o002 != 0 && fi.Mode()&os.ModeSticky == 0:
		return fmt.Sprintf("writable by others (mode %04o)", fi.Mode().Perm())
	}
	return ""
}

// homePath is where the state home is, unchecked.
func homePath(getenv func(string) string) (string, error) {
	if h := getenv("SVC_HOME"); h != "" {
		return filepath.Abs(h)
	}
	if x := getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "svc"), nil
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", errors.New("no state directory: set SVC_HOME, XDG_STATE_HOME or HOME")
		}
	}
	return filepath.Join(home, ".local", "state", "svc"), nil
}

// ValidName checks a service name: a plain name (ValidPlainName), or a
// project's service, PROJECT/NAME, both parts plain names.
func ValidName(name string) error {
	if p, n, ok := strings.Cut(name, "/"); ok {
		if err := ValidPlainName(p); err != nil {
			return fmt.Errorf("in %q, the project: %w", name, err)
		}
		if err := ValidPlainName(n); err != nil {
			return fmt.Errorf("in %q: %w", name, err)
		}
		return nil
	}
	return ValidPlainName(name)
}

// ValidPlainName checks a name that is not a project's: 1 to 64
// characters, letters, digits, '.', '_' and '-', not starting with '.' or
// '-'.
func ValidPlainName(name string) error {
	bad := func(format string, args ...any) error {
		return &NameError{Name: name, Problem: fmt.Sprintf(format, args...)}
	}
	switch {
	case name == "":
		return bad("a service name cannot be empty")
	case len(name) > 64:
		return bad("service name %q is longer than 64 characters", name)
	case name[0] == '.' || name[0] == '-':
		return bad("service name %q cannot start with %q", name, name[0])
	}
	for _, r := range name {
		if !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) || r == '.' || r == '_' || r == '-') {
			return bad("service name %q has %q: use letters, digits, '.', '_' and '-'", name, r)
		}
	}
	return nil
}

// Dir is one service's directory.
type Dir struct {
	Home string
	Name string
}

// Path is the service's directory. A project's service PROJECT/NAME lives
// in PROJECT+NAME: '+' is in no plain name, so the two never meet, and
// every service stays one directory under the home.
func (d Dir) Path() string { return filepath.Join(d.Home, strings.Replace(d.Name, "/", projectSep, 1)) }

// projectSep joins a project and a service name on disk.
const projectSep = "+"

func (d Dir) StatePath() string { return filepath.Join(d.Path(), "state.json") }
func (d Dir) LockPath() string  { return filepath.Join(d.Path(), "lock") }

// legacySocket is the socket the monitors of earlier versions listened
// on, named from the service's directory — which another user can work
// out, and bind first. A monitor now listens on a name with a random
// part (NewSocketName), recorded in state.json; this one is dialled
// only for a state that records none, and trusted only by its peer's
// credentials (dialMonitor).
func (d Dir) legacySocket() string { return socketPrefix + hashString(d.Path()) }

func hashString(s string) string {
	// FNV-1a, 64 bits: unique enough for socket names on one machine.
	var h uint64 = 14695981039346656037
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return fmt.Sprintf("%016x", h)
}

// ensureHome makes the state home (mode 0700) and checks it is writable,
// and, made, that it is safe (CheckHome).
func ensureHome(home string) error {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return &HomeError{home, fmt.Errorf("cannot make the state directory: %w", err)}
	}
	if err := CheckHome(home); err != nil {
		return err
	}
	f, err := os.CreateTemp(home, ".probe-")
	if err != nil {
		return &HomeError{home, fmt.Errorf("the state directory %s is not writable: %w", home, err)}
	}
	f.Close()
	return os.Remove(f.Name())
}

// List returns the names of the services under home, sorted.
func List(home string) ([]string, error) {
	entries, err := os.ReadDir(home)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		name := strings.Replace(e.Name(), projectSep, "/", 1)
		if e.IsDir() && ValidName(name) == nil {
			names = append(names, name)
		}
	}
	return names, nil
}

// defaultName is the name of a service started without one: the name a
// person would give what its command runs (cmdline.Name), made a valid
// plain name.
func defaultName(argv []string, cwd string) string {
	return cleanName(cmdline.Name(argv, cwd))
}

// cleanName makes a valid plain name of a word: its allowed characters,
// "service" when none are left.
func cleanName(word string) string {
	var b strings.Builder
	for _, r := range word {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) || r == '.' || r == '_' || r == '-' {
			b.WriteRune(r)
		}
	}
	name := strings.TrimLeft(b.String(), ".-")
	if name == "" {
		name = "service"
	}
	if len(name) > 56 {
		name = name[:56]
	}
	return name
}
