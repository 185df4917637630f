// Package proc holds the process primitives the suite builds on: children
// in process groups of their own, signals only to groups we started and
// have not yet reaped, and waits that never hang on a pipe a grandchild
// kept open.
package proc

import (
	"errors"

	"golang.org/x/sys/unix"
)

// waitExited blocks until the process pid has exited, without reaping it:
// its pid stays reserved, so its group can still be signalled safely
// before it is collected.
func waitExited(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err
	}
}
