package agentrun

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/agentry/agentry/lib/proc"
)

// RunDir makes a private temporary directory for one run — a scratch
// directory, a CODEX_HOME — named for the process that owns it: prefix,
// pid, start time. First it removes the directories of that prefix whose
// owner is gone: an owner killed outright never ran its cleanup, and a
// CODEX_HOME holds a copy of the user's credential.
func RunDir(prefix string) (string, error) {
	sweep(os.TempDir(), prefix)
	me, err := proc.Stat(os.Getpid())
	if err != nil {
		return os.MkdirTemp("", prefix+"-")
	}
	return os.MkdirTemp("", fmt.Sprintf("%s-%d-%d-", prefix, me.PID, me.Start))
}

// sweep removes tmp's directories named prefix-PID-START-* whose owner
// (that pid with that start time) no longer runs, when they are ours.
func sweep(tmp, prefix string) {
	dirs, _ := filepath.Glob(filepath.Join(tmp, prefix+"-*"))
	for _, d := range dirs {
		f := strings.SplitN(strings.TrimPrefix(filepath.Base(d), prefix+"-"), "-", 3)
		if len(f) != 3 {
			continue
		}
		pid, err1 := strconv.Atoi(f[0])
		start, err2 := strconv.ParseUint(f[1], 10, 64)
		if err1 != nil || err2 != nil || proc.Alive(proc.Info{PID: pid, Start: start}) {
			continue
		}
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
			continue
		}
		os.RemoveAll(d)
	}
}
