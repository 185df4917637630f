package svc

import (
	"errors"
	"fmt"
	"os"

	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc/logfile"
)

// Listing is one service as svc ls shows it, liveness reconciled.
type Listing struct {
	State
	// PID is the pid a person is shown: the server's (State.ServerPID)
	// once found, else State.PID, which stops and liveness go by.
	PID int `json:"pid,omitempty"`
	// Supervised: a monitor holds the lock.
	Supervised bool `json:"supervised"`
}

// Look reads one service and reconciles its recorded state with what is
// true: a live status with no monitor is "stopped" unless its process,
// identity confirmed, still runs (then it stays, unsupervised); a monitor
// that has not written its first state yet is starting its service.
func Look(d Dir) (*Listing, error) {
	s, err := ReadState(d)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if _, serr := os.Stat(d.Path()); serr != nil {
				return nil, &NotFoundError{d.Name}
			}
			s = &State{Name: d.Name, Status: Stopped}
		} else {
			return nil, err
		}
	}
	l := &Listing{State: *s, Supervised: Supervised(d)}
	if l.Supervised && s.StartedAt.IsZero() {
		// A monitor holds the lock but has not written its first state:
		// the service is being started.
		l.Status = Starting
	}
	if !l.Supervised && s.Status.Live() {
		// The monitor may have written its last state and exited since the
		// read above; it lets go of the lock only after that write, so a
		// second read now is final.
		if again, err := ReadState(d); err == nil {
			l.State = *again
		}
	}
	if !l.Supervised && l.Status.Live() {
		if l.State.PID == 0 || !proc.Alive(proc.Info{PID: l.State.PID, Start: l.PIDStart}) {
			l.Status = Stopped
		} else if l.LogNote == "" {
			last, _ := logfile.LastRow(d.Path())
			l.LogNote = fmt.Sprintf("its monitor is gone: the log ends at row %d, and nothing it prints now is kept", last)
		}
	}
	l.PID = l.State.PID
	if l.ServerPID != 0 && l.Status.Live() && proc.Alive(proc.Info{PID: l.ServerPID, Start: l.ServerStart}) {
		l.PID = l.ServerPID
	}
	return l, nil
}

// LookAll reads every service under home; a service that cannot be read
// is returned as an error beside the others.
func LookAll(home string) ([]*Listing, []error) {
	names, err := List(home)
	if err != nil {
		return nil, []error{err}
	}
	var rows []*Listing
	var errs []error
	for _, n := range names {
		l, err := Look(Dir{Home: home, Name: n})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rows = append(rows, l)
	}
	return rows, errs
}

// LiveNames are the services that are live — supervised, or still running
// after their monitor was killed.
func LiveNames(home string) []string {
	rows, _ := LookAll(home)
	var names []string
	for _, l := range rows {
		if l.Status.Live() {
			names = append(names, l.Name)
		}
	}
	return names
}

// Remove forgets a service that is not running.
func Remove(d Dir) error {
	if Supervised(d) {
		return &LiveError{d.Name}
	}
	if _, err := os.Stat(d.Path()); err != nil {
		return &NotFoundError{d.Name}
	}
	return os.RemoveAll(d.Path())
}
