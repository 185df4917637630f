package agenthome

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/agentry/agentry/lib/proc"
)

// The prefixes of the run directories the suite makes, each component's
// own; the sweep of the temporary directory itself takes them all.
const (
	// RunagentScratch names a level 1 run's scratch directories.
	RunagentScratch = "runagent-scratch"
	// RunagentFiles names a run's directories of files kept off its
	// agent's argv (its grant's Files).
	RunagentFiles = "runagent-files"
	// CodexPrefix names the CODEX_HOMEs made for one run (PrepareCodex).
	CodexPrefix = "runagent-codex"
	// HostCodexScratch names a level 1 codex chat's scratch directories
	// (agent-host).
	HostCodexScratch = "agent-host-codex"
	// HostClaudeFiles names a claude chat's or one-shot's directories of
	// files kept off its CLI's argv (agent-host).
	HostClaudeFiles = "agent-host-claude"
)

// allPrefixes are every prefix above.
func allPrefixes() []string {
	return []string{RunagentScratch, RunagentFiles, CodexPrefix, HostCodexScratch, HostClaudeFiles}
}

// sweptMark is the file in the user's directory that says the temporary
// directory itself has been swept of what was left there before it.
const sweptMark = ".swept-tmpdir"

// Runs is where a process makes the private directories of its runs — a
// scratch directory, a CODEX_HOME, files kept off an argv — and sweeps
// those whose owner is gone: agentry-UID in the temporary directory, a
// 0700 directory of the user's own, so that a sweep reads only the user's
// run directories and not the whole of a shared /tmp (a thousand entries
// were ~0.6 ms of CPU at every run). Where that directory cannot be used
// (it is another user's, a link, open to others, or cannot be made), the
// run directories go in the temporary directory itself, as before it
// existed.
//
// A Runs is made once per run (NewRuns), so that what it reads (the
// process's own start time, the directory's owner) is read once; the zero
// value finds them anew at each use.
type Runs struct {
	base  string // where run directories go
	tmp   string // the temporary directory
	owner string // "PID-START", or "" when the start could not be read
	id    fileID // base's, when it is the user's directory
}

// fileID is what identifies a directory: its device and inode.
type fileID struct{ dev, ino uint64 }

// NewRuns finds, or makes, the user's directory of run directories.
func NewRuns() Runs {
	r := Runs{tmp: os.TempDir()}
	if me, err := proc.Stat(os.Getpid()); err == nil {
		r.owner = strconv.Itoa(me.PID) + "-" + strconv.FormatUint(me.Start, 10)
	}
	r.base, r.id = userDir(r.tmp)
	return r
}

// userDir is dir's agentry-UID, made 0700 if it is not there, and its id;
// or dir itself when that cannot be made or is not the user's alone.
func userDir(dir string) (string, fileID) {
	d := filepath.Join(dir, "agentry-"+strconv.Itoa(os.Getuid()))
	err := os.Mkdir(d, 0o700)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return dir, fileID{}
	}
	id, ok := private(d)
	if !ok && err == nil {
		// Made now, by us, with what the umask left: given its mode
		// through a descriptor of it, never through a link.
		id, ok = ownMode(d)
	}
	if !ok {
		return dir, fileID{}
	}
	return d, id
}

// private reports whether d is a directory (not a link to one) that is
// the user's and nobody else's to enter, list or write, and its id.
func private(d string) (fileID, bool) {
	fi, err := os.Lstat(d)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		return fileID{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Getuid() {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), st.Ino}, true
}

// ownMode makes d, a directory the user made, 0700.
func ownMode(d string) (fileID, bool) {
	fd, st, err := openOwn(d)
	if err != nil {
		return fileID{}, false
	}
	defer syscall.Close(fd)
	if syscall.Fchmod(fd, 0o700) != nil {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), st.Ino}, true
}

// errNotOwn is openOwn's answer for a directory that is not the user's.
var errNotOwn = errors.New("not the user's")

// openOwn opens d, a directory and not a link to one, and its status,
// when it is the user's: what is then done to it is done through the
// descriptor, never through a name that could be changed meanwhile. The
// error is open's (ENOENT: there is none), or errNotOwn.
func openOwn(d string) (int, syscall.Stat_t, error) {
	var st syscall.Stat_t
	fd, err := syscall.Open(d, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1, st, err
	}
	if syscall.Fstat(fd, &st) != nil || int(st.Uid) != os.Getuid() {
		syscall.Close(fd)
		return -1, st, errNotOwn
	}
	return fd, st, nil
}

// Dir makes a private directory for one run, named for the process that
// owns it — prefix, pid, start time — so that Sweep can tell when its
// owner is gone.
func (r Runs) Dir(prefix string) (string, error) {
	if r.base == "" {
		r = NewRuns()
	}
	name := prefix + "-"
	if r.owner != "" {
		name += r.owner + "-"
	}
	if r.base == r.tmp {
		return os.MkdirTemp(r.tmp, name)
	}
	d, err := os.MkdirTemp(r.base, name)
	if errors.Is(err, fs.ErrNotExist) {
		// The user's directory went since it was found (a cleaner of
		// old files in /tmp): found, or made, again, once.
		if r.base, r.id = userDir(r.tmp); r.base == r.tmp {
			return os.MkdirTemp(r.tmp, name)
		}
		d, err = os.MkdirTemp(r.base, name)
	}
	if err != nil {
		return "", err
	}
	// It is still the directory found, and still the user's alone: a
	// directory that took its place since is not one to leave a run's
	// files in.
	if id, ok := private(r.base); !ok || id != r.id {
		os.Remove(d)
		return os.MkdirTemp(r.tmp, name)
	}
	return d, nil
}

// emptyName is the user's empty directory, in the directory of run
// directories (see Empty).
const emptyName = "empty"

// ErrNoEmpty is Empty's answer when the user's empty directory cannot be
// used: the run directories are not in a directory of the user's own, or
// it has been written to, or its mode changed, or it is not a directory.
var ErrNoEmpty = errors.New("no empty directory of the user's own")

// Empty is the user's empty directory, made once and kept: 0500, the
// user's, with nothing in it, checked each time through a descriptor of
// it. It is where an agent that can write nowhere runs (level 1): the
// same isolation as a fresh directory made for each run, without one to
// make and remove each time (on a disk-backed /tmp that was 0.3-0.8 ms a
// run). When it cannot be used the error is ErrNoEmpty, or why it could
// not be made; the caller then makes a fresh directory (Dir).
func (r Runs) Empty() (string, error) {
	if r.base == "" {
		r = NewRuns()
	}
	if r.base == r.tmp {
		return "", ErrNoEmpty
	}
	d := filepath.Join(r.base, emptyName)
	fd, st, err := openOwn(d)
	made := false
	if err == syscall.ENOENT {
		if err = syscall.Mkdir(d, 0o500); err != nil && err != syscall.EEXIST {
			return "", err
		}
		made = err == nil
		fd, st, err = openOwn(d)
	}
	if err != nil {
		return "", ErrNoEmpty // a link, not a directory, or another user's
	}
	defer syscall.Close(fd)
	if made && syscall.Fchmod(fd, 0o500) == nil { // whatever the umask
		st.Mode = st.Mode&^0o7777 | 0o500
	}
	if st.Mode&0o7777 != 0o500 || !emptyDir(fd) {
		return "", ErrNoEmpty
	}
	return d, nil
}

// emptyDir reports whether the directory open at fd holds nothing but
// "." and "..".
func emptyDir(fd int) bool {
	var buf [512]byte
	for {
		n, err := syscall.ReadDirent(fd, buf[:])
		if err != nil {
			return false
		}
		if n <= 0 {
			return true
		}
		_, _, names := syscall.ParseDirent(buf[:n], -1, nil) // without . and ..
		if len(names) > 0 {
			return false
		}
	}
}

// Sweep removes the run directories under these prefixes whose owner
// (that pid with that start time) no longer runs, when they are the
// user's: an owner killed outright never ran its cleanup, and a
// CODEX_HOME holds a copy of the user's credential. It reads the run
// directories once, however many prefixes. The first sweep that finds
// the user's directory unmarked sweeps the temporary directory itself
// too, of every prefix, for what was left there before the directory was
// made.
func (r Runs) Sweep(prefixes ...string) {
	if r.base == "" {
		r = NewRuns()
	}
	sweepIn(r.base, prefixes)
	if r.base == r.tmp {
		return
	}
	mark := filepath.Join(r.base, sweptMark)
	if _, err := os.Lstat(mark); !errors.Is(err, fs.ErrNotExist) {
		return
	}
	sweepIn(r.tmp, allPrefixes())
	if f, err := os.OpenFile(mark, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close()
	}
}

// sweepIn sweeps the run directories in dir.
func sweepIn(dir string, prefixes []string) {
	f, err := os.Open(dir)
	if err != nil {
		return
	}
	names, _ := f.Readdirnames(-1) // unsorted, no stat: a /tmp can hold thousands
	f.Close()
	for _, name := range names {
		for _, prefix := range prefixes {
			if rest, ok := strings.CutPrefix(name, prefix+"-"); ok {
				sweepOne(filepath.Join(dir, name), rest)
			}
		}
	}
}

// sweepOne removes d, named prefix-PID-START-*, if its owner is gone and
// it is ours.
func sweepOne(d, rest string) {
	f := strings.SplitN(rest, "-", 3)
	if len(f) != 3 {
		return
	}
	pid, err1 := strconv.Atoi(f[0])
	start, err2 := strconv.ParseUint(f[1], 10, 64)
	if err1 != nil || err2 != nil || proc.Alive(proc.Info{PID: pid, Start: start}) {
		return
	}
	fi, err := os.Lstat(d)
	if err != nil || !fi.IsDir() {
		return
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
		return
	}
	os.RemoveAll(d)
}
