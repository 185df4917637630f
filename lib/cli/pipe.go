package cli

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// Pipe is what a look at an input pipe finds, without reading it.
type Pipe struct {
	Readable bool // something is there to read now
	HungUp   bool // every writer is gone
}

// LookPipe looks at r when it is a pipe (a FIFO), without reading or
// waiting, its descriptor's mode left as it is; ok is false for anything
// else.
func LookPipe(r io.Reader) (p Pipe, ok bool) {
	f, isFile := r.(*os.File)
	if !isFile {
		return Pipe{}, false
	}
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return Pipe{}, false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return Pipe{}, false
	}
	_ = rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, err := unix.Poll(fds, 0); err == nil && n > 0 {
			p = Pipe{Readable: fds[0].Revents&unix.POLLIN != 0, HungUp: fds[0].Revents&unix.POLLHUP != 0}
		}
	})
	return p, true
}
