package agenthome

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/agentry/agentry/lib/proc"
)

// CodexPrefix names the CODEX_HOMEs made for one run (PrepareCodex) in
// the temporary directory: Sweep(CodexPrefix) removes those whose owner
// is gone.
const CodexPrefix = "runagent-codex"

// RunDir makes a private temporary directory for one run — a scratch
// directory, a CODEX_HOME — named for the process that owns it: prefix,
// pid, start time, so that Sweep can tell when its owner is gone.
func RunDir(prefix string) (string, error) {
	me, err := proc.Stat(os.Getpid())
	if err != nil {
		return os.MkdirTemp("", prefix+"-")
	}
	return os.MkdirTemp("", fmt.Sprintf("%s-%d-%d-", prefix, me.PID, me.Start))
}

// Sweep removes the directories RunDir made under these prefixes whose
// owner (that pid with that start time) no longer runs, when they are
// ours: an owner killed outright never ran its cleanup, and a CODEX_HOME
// holds a copy of the user's credential. It reads the temporary directory
// once, however many prefixes.
func Sweep(prefixes ...string) {
	tmp := os.TempDir()
	f, err := os.Open(tmp)
	if err != nil {
		return
	}
	names, _ := f.Readdirnames(-1) // unsorted, no stat: a /tmp can hold thousands
	f.Close()
	for _, name := range names {
		for _, prefix := range prefixes {
			if rest, ok := strings.CutPrefix(name, prefix+"-"); ok {
				sweepOne(filepath.Join(tmp, name), rest)
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
