package operands

import (
	"io"
	"syscall"

	"golang.org/x/sys/unix"
)

// pipeSize is the buffer an input pipe is given, where the system allows
// it (1 MiB is Linux's default most for a user, /proc/sys/fs/pipe-max-size).
// With the default 64 KiB, a fast writer fills the pipe and waits while
// ndjson's workers walk what they read, and each read brings a chunk of
// 64 KiB at most; with 1 MiB the writer runs ahead, and a read brings as
// much as the reader asks for.
const pipeSize = 1 << 20

// growPipe gives f, when it is a pipe, a buffer of pipeSize. It only ever
// grows one, and says nothing when it cannot: over the system's limit,
// over the user's pipe pages, or not a pipe at all, f is read as it is.
func growPipe(f io.Reader) {
	sc, ok := f.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(fd), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
			return
		}
		if size, err := unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0); err == nil && size < pipeSize {
			_, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize)
		}
	})
}

// waiting tells whether f is a pipe or terminal with bytes waiting in it.
func waiting(f io.Reader) bool {
	sc, ok := f.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	n := 0
	_ = rc.Control(func(fd uintptr) {
		n, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ) // FIONREAD: the bytes waiting
	})
	return n > 0
}
