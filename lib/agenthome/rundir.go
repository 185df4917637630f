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

// CodexPrefix names the CODEX_HOMEs made for one run (PrepareCodex) in
// the run directories: Sweep(CodexPrefix) removes those whose owner is
// gone.
const CodexPrefix = "runagent-codex"

// Runs is where a process makes the private directories of its runs — a
// scratch directory, a CODEX_HOME, files kept off an argv — and sweeps
// those whose owner is gone: agentry-UID in the temporary directory, a
// 0700 directory of the user's own, so that a sweep reads only the user's
// run directories and not the whole of a shared /tmp (a thousand entries
// were ~1 ms of CPU at every run). Where that directory cannot be used (it
// is another user's, a link, open to others, or cannot be made), the run
// directories go in the temporary directory itself, as before it existed.
//
// A Runs is made once per run (NewRuns), so that what it reads (the
// process's own start time, the directory's owner) is read once; its
// zero value makes one when first used.
type Runs struct {
	base  string // where run directories go
	tmp   string // the temporary directory
	owner string // "PID-START", or "" when the start could not be read
	// made: base was made now; its maker sweeps the temporary directory
	// too, for what was left there before it existed.
	made bool
}

// NewRuns finds, or makes, the user's directory of run directories.
func NewRuns() Runs {
	r := Runs{tmp: os.TempDir()}
	if me, err := proc.Stat(os.Getpid()); err == nil {
		r.owner = strconv.Itoa(me.PID) + "-" + strconv.FormatUint(me.Start, 10)
	}
	r.base, r.made = userDir(r.tmp)
	return r
}

// userDir is dir's agentry-UID, made 0700 if it is not there (made), or
// dir itself when it cannot be made or is not the user's alone.
func userDir(dir string) (string, bool) {
	d := filepath.Join(dir, "agentry-"+strconv.Itoa(os.Getuid()))
	err := os.Mkdir(d, 0o700)
	if err == nil {
		if os.Chmod(d, 0o700) != nil { // whatever the umask left
			return dir, false
		}
		return d, true
	}
	if !errors.Is(err, fs.ErrExist) || !private(d) {
		return dir, false
	}
	return d, false
}

// private reports whether d is a directory (not a link to one) that is
// the user's and nobody else's to enter, list or write.
func private(d string) bool {
	fi, err := os.Lstat(d)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// Dir makes a private directory for one run, named for the process that
// owns it — prefix, pid, start time — so that Sweep can tell when its
// owner is gone.
func (r Runs) Dir(prefix string) (string, error) {
	if r.base == "" {
		r = NewRuns()
	}
	if r.owner == "" {
		return os.MkdirTemp(r.base, prefix+"-")
	}
	return os.MkdirTemp(r.base, prefix+"-"+r.owner+"-")
}

// Sweep removes the run directories under these prefixes whose owner
// (that pid with that start time) no longer runs, when they are the
// user's: an owner killed outright never ran its cleanup, and a
// CODEX_HOME holds a copy of the user's credential. It reads the run
// directories once, however many prefixes; when this Runs made agentry-UID,
// it sweeps the temporary directory too, where they were kept before.
func (r Runs) Sweep(prefixes ...string) {
	if r.base == "" {
		r = NewRuns()
	}
	sweepIn(r.base, prefixes)
	if r.made && r.base != r.tmp {
		sweepIn(r.tmp, prefixes)
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
