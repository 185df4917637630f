package monitor

import (
	"errors"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc"
	"github.com/agentry/agentry/lib/svc/logfile"
)

// recorder holds the service's state and writes state.json on every
// change. A little disk space is set aside at the start and given up
// when the disk fills, so that the state can still say logging stopped.
type recorder struct {
	d     svc.Dir
	log   *logfile.Writer
	mu    sync.Mutex
	state svc.State
}

func newRecorder(d svc.Dir, s svc.State) *recorder {
	r := &recorder{d: d, state: s}
	r.reserve()
	return r
}

func (r *recorder) reservePath() string { return r.d.Path() + "/reserve" }

func (r *recorder) reserve() {
	f, err := os.OpenFile(r.reservePath(), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return
	}
	_, _ = f.Write(make([]byte, 64<<10))
	_ = f.Sync()
	f.Close()
}

// set changes the state and writes it out.
func (r *recorder) set(f func(*svc.State)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.state)
	if r.log != nil && r.log.Err() != nil && r.state.LogNote == "" {
		r.state.LogNote = "logging stopped: " + r.log.Err().Error()
	}
	if err := svc.WriteState(r.d, &r.state); err != nil && errors.Is(err, syscall.ENOSPC) {
		if os.Remove(r.reservePath()) == nil {
			_ = svc.WriteState(r.d, &r.state)
		}
	}
}

// get is a copy of the state.
func (r *recorder) get() svc.State {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state
}

// addLaunch adds a launch's end to the state's history (the last 20).
func (r *recorder) addLaunch(l *launched, exit proc.Exit) {
	rec := svc.Launch{N: l.n, PID: l.child.PID(), StartedAt: l.start, EndedAt: time.Now(), Ended: exit.Ended()}
	r.set(func(s *svc.State) {
		s.Launches = append(s.Launches, rec)
		if len(s.Launches) > 20 {
			s.Launches = s.Launches[len(s.Launches)-20:]
		}
	})
}
