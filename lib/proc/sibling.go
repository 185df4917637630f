package proc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// Sibling finds another program of the suite: beside this binary (where
// make install puts them all), else on PATH.
func Sibling(name string) (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return exec.LookPath(name)
}

// ErrnoName says what went wrong in starting a program, or in a system
// call, without the path it went wrong on: "ENOENT", not "exec:
// /usr/local/bin/claude: no such file".
func ErrnoName(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if n := unix.ErrnoName(errno); n != "" {
			return n
		}
	}
	if errors.Is(err, exec.ErrNotFound) {
		return "ENOENT (not installed, or not on PATH)"
	}
	return "an unexpected error"
}
