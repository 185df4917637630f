// Package proc holds the process primitives the suite builds on: children
// in process groups of their own, signals only to groups we started and
// have not yet reaped, and waits that never hang on a pipe a grandchild
// kept open.
package proc

import (
	"errors"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// InGroup makes cmd start as the leader of a new process group, so that
// it and everything it starts can be signalled together.
func InGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// DiesWithParent has the kernel send cmd sig when the process that
// started it dies, however it dies: a sidecar killed outright does not
// leave its agent running on. (Go never ends the thread that started a
// child while the program runs, which is what the kernel ties this to.)
func DiesWithParent(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = sig
}

// SignalGroup sends sig to the process group that cmd leads. It must only
// be called between cmd.Start and the reaping of cmd (cmd.Wait): until the
// leader is reaped its pid, and so the group id, cannot be reused, which
// is what makes the signal safe. A group already gone is not an error.
func SignalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return errors.New("proc: process not started")
	}
	err := unix.Kill(-cmd.Process.Pid, sig)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	return err
}

// WaitExited blocks until the process pid has exited, without reaping it:
// its pid stays reserved, so its group can still be signalled safely
// before cmd.Wait collects it.
func WaitExited(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err
	}
}
