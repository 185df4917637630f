package svc

import (
	"context"
	"os"
	"time"

	"github.com/agentry/agentry/lib/svc/logfile"
	"golang.org/x/sys/unix"
)

// Follow calls fn for each row after since as the log grows, and flush
// after each batch, until the service has ended and its log is drained
// (nil), or ctx is done (nil: the caller asked to stop). A restart is no
// end: it follows the new run.
func Follow(ctx context.Context, d Dir, since int64, fn func(Row) error, flush func() error) error {
	w, _ := newWatcher(d.Path())
	defer w.close()
	for {
		// Down and not restarting, unless a restart ended in between.
		alive := Supervised(d) || Restarting(d) || Supervised(d)
		last, err := logfile.ReadRows(d.Path(), since, fn)
		if err == nil {
			err = flush()
		}
		if err != nil {
			return err
		}
		since = last
		if !alive {
			_, err := logfile.ReadRows(d.Path(), since, fn) // anything written before the end
			if ferr := flush(); err == nil {
				err = ferr
			}
			return err
		}
		if w.wait(ctx, 250*time.Millisecond) != nil {
			return nil
		}
	}
}

// WaitReady waits until the service is ready (nil), has ended or runs
// without listening (a *NotReadyError), the timeout passes (os.ErrDeadlineExceeded) or ctx
// is done (its error).
func WaitReady(ctx context.Context, d Dir, timeout time.Duration) (*Listing, error) {
	w, _ := newWatcher(d.Path())
	defer w.close()
	deadline := time.Now().Add(timeout)
	for {
		l, err := Look(d)
		if err != nil {
			return nil, err
		}
		switch {
		case l.Status == Ready:
			return l, nil
		case !l.Status.Live(), l.Status == Running:
			return l, &NotReadyError{Name: d.Name, Status: l.Status}
		}
		left := time.Until(deadline)
		if timeout > 0 && left <= 0 {
			return l, os.ErrDeadlineExceeded
		}
		if timeout <= 0 {
			left = time.Hour
		}
		if err := w.wait(ctx, min(left, 250*time.Millisecond)); err != nil {
			return l, err
		}
	}
}

// WaitEnded waits until the service is no longer live and returns how it
// ended, or ctx's error when ctx is done first.
func WaitEnded(ctx context.Context, d Dir) (*Listing, error) {
	w, _ := newWatcher(d.Path())
	defer w.close()
	for {
		l, err := Look(d)
		if err != nil || !l.Status.Live() {
			return l, err
		}
		if err := w.wait(ctx, 250*time.Millisecond); err != nil {
			return l, err
		}
	}
}

// watcher wakes on changes in a directory (inotify). The inotify
// descriptor is non-blocking and read through the runtime's poller, so a
// deadline bounds each wait, cancelling ctx ends one at once, and no
// goroutine is left blocked in a read after close. A nil watcher (no
// inotify here) waits out each timeout; the timeout is also the floor for
// an event missed.
type watcher struct {
	f   *os.File
	buf []byte
}

func newWatcher(dir string) (*watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_MODIFY|unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_CLOSE_WRITE|unix.IN_DELETE); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &watcher{f: os.NewFile(uintptr(fd), "inotify:"+dir), buf: make([]byte, 4096)}, nil
}

// wait returns when something in the directory changed or timeout has
// passed (nil), or when ctx is done (its error).
func (w *watcher) wait(ctx context.Context, timeout time.Duration) error {
	if w == nil {
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		return ctx.Err()
	}
	w.f.SetReadDeadline(time.Now().Add(timeout))
	stop := context.AfterFunc(ctx, func() { w.f.SetReadDeadline(time.Unix(1, 0)) })
	w.f.Read(w.buf) // events, a deadline, or ctx: each is a reason to look again
	stop()
	return ctx.Err()
}

func (w *watcher) close() {
	if w != nil {
		w.f.Close()
	}
}
