package operands

import (
	"io"
	"syscall"

	"golang.org/x/sys/unix"
)

// pipeSize is the buffer a fast writer's pipe is given, where the system
// allows it (1 MiB is Linux's default most for a user,
// /proc/sys/fs/pipe-max-size). With the default 64 KiB, a writer that
// outruns ndjson fills the pipe and waits while the workers walk what
// they read, and a read brings 64 KiB at most; with 1 MiB it runs ahead,
// and a read brings as much as the reader asks for.
const pipeSize = 1 << 20

// pipeBuffer is the size of f's buffer when f is a pipe whose buffer is
// smaller than pipeSize, else 0.
func pipeBuffer(f io.Reader) int {
	size := 0
	control(f, func(fd int) {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
			return
		}
		if n, err := unix.FcntlInt(uintptr(fd), unix.F_GETPIPE_SZ, 0); err == nil && n < pipeSize {
			size = n
		}
	})
	return size
}

// growPipe gives the pipe f a buffer of pipeSize. It is asked only for a
// pipe a read found full, so that a slow writer's (tail -f, an agent's
// stream) stays as it is: a grown pipe counts against the user's pipe
// pages (pipe-user-pages-soft), past which every new pipe of theirs is
// made small. It says nothing when it cannot: over the system's limit,
// or over the user's pages, f is read as it is.
func growPipe(f io.Reader) {
	control(f, func(fd int) {
		_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETPIPE_SZ, pipeSize)
	})
}

// waiting tells whether f is a pipe or terminal with bytes waiting in it.
func waiting(f io.Reader) bool {
	n := 0
	control(f, func(fd int) {
		n, _ = unix.IoctlGetInt(fd, unix.TIOCINQ) // FIONREAD: the bytes waiting
	})
	return n > 0
}

// control runs fn with f's descriptor, when f has one; without taking it
// out of the runtime's poller (os.File.Fd would make it blocking).
func control(f io.Reader, fn func(fd int)) {
	sc, ok := f.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) { fn(int(fd)) })
}
