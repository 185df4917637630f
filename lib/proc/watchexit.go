package proc

import "golang.org/x/sys/unix"

// WatchExit returns a channel closed when process pid exits, watched through
// a pidfd so that a reused pid never stands in for it; an error when
// there is no such process. The watch's goroutine ends with the process.
func WatchExit(pid int) (<-chan struct{}, error) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil, err
	}
	gone := make(chan struct{})
	go func() {
		defer unix.Close(fd)
		AwaitPidfd(uintptr(fd))
		close(gone)
	}()
	return gone, nil
}

// AwaitPidfd returns once the process of pidfd fd has exited (the pidfd
// is readable then), or the descriptor cannot be waited on.
func AwaitPidfd(fd uintptr) {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n > 0 {
			return
		}
	}
}
