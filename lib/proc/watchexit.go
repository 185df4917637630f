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
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); err != unix.EINTR {
				break
			}
		}
		close(gone)
	}()
	return gone, nil
}
