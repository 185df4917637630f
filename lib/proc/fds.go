package proc

import (
	"math"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// CloseOnExecFrom marks every open descriptor from low on close-on-exec.
// A process started from a shell or a script may inherit descriptors by
// accident (a job-control pipe, a file a caller forgot); this keeps them
// from travelling any further — to a monitor that outlives the caller, or
// to a service — while this process can still use what it was handed.
func CloseOnExecFrom(low int) {
	if unix.CloseRange(uint(low), math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	entries, err := os.ReadDir("/proc/self/fd") // before Linux 5.11
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd >= low {
			_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
		}
	}
}
