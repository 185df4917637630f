package svc

import (
	"encoding/json"
	"os"
	"time"

	"github.com/agentry/agentry/lib/atomicfile"
	"github.com/agentry/agentry/lib/proc"
)

// Status is what state a service is in.
type Status string

// The statuses a service can be in.
const (
	Starting Status = "starting" // started, not ready yet
	Ready    Status = "ready"    // readiness detected
	Running  Status = "running"  // alive, nothing to connect to after the ready timeout
	Exited   Status = "exited"   // ended by itself; exit code or signal recorded
	Failed   Status = "failed"   // could not start, or a required readiness check failed
	Stopped  Status = "stopped"  // stopped by the user, or found dead with no exit observed
	// Unhealthy: ready, then its health probes failed HealthFailures
	// times in a row; it runs still.
	Unhealthy Status = "unhealthy"
)

// Live reports whether a status is one of a running service.
func (s Status) Live() bool { return s == Starting || s == Ready || s == Running || s == Unhealthy }

// Endpoint is where a ready service is reached, as every report of it
// gives it: a URL when one is known, the port it names, and every TCP port
// the tree listens on.
type Endpoint struct {
	URL   string `json:"url,omitempty"`
	Port  int    `json:"port,omitempty"`
	Ports []int  `json:"ports,omitempty"`
}

// Up is when the run now going began: the last restart's launch, else
// the service's start.
func (s *State) Up() time.Time {
	if s.RunStartedAt != nil {
		return *s.RunStartedAt
	}
	return s.StartedAt
}

// Launch is one launch of the command (with Spec.Restart there are several), and how it ended.
type Launch struct {
	N         int       `json:"n"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"startedAt"`
	EndedAt   time.Time `json:"endedAt"`
	proc.Ended
}

// Followed is a daemon a service's command left running when it exited
// 0 (a server that forks into the background), followed as the service
// from then on, as systemd's Type=forking does.
type Followed struct {
	PID  int    `json:"pid"`
	Comm string `json:"comm"` // the daemon's program
	From string `json:"from"` // the program that exited and left it
}

// State is state.json: a public interface (see svc(1)).
type State struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Spec   Spec   `json:"spec"`
	// PID is the service's process (the leader of its process group);
	// PIDStart its start time in clock ticks since boot, from
	// /proc/PID/stat, which is what makes the pid's identity checkable.
	PID        int    `json:"pid,omitempty"`
	PIDStart   uint64 `json:"pidStart,omitempty"`
	MonitorPID int    `json:"monitorPid,omitempty"`
	// Socket is the abstract unix socket the monitor answers on, a name
	// with a random part (NewSocketName); a state written before there
	// was one has none, and its monitor answers on Dir.legacySocket.
	Socket string `json:"socket,omitempty"`
	// ServerPID is the process of the service's tree that holds the
	// listening socket it was found ready on, when that is not PID (a
	// server /bin/sh -c started): the pid shown, while PID stays the one
	// stops and liveness go by.
	ServerPID   int    `json:"serverPid,omitempty"`
	ServerStart uint64 `json:"serverPidStart,omitempty"`
	// Followed is set when the command exited 0 and left a daemon, which
	// is then the service: PID and PIDStart are the daemon's.
	Followed *Followed `json:"followed,omitempty"`

	Endpoint
	ReadyBy string `json:"readyBy,omitempty"`
	// Warning is what the user should know of how it became ready: a
	// given port the service did not use.
	Warning         string `json:"warning,omitempty"`
	PortPreoccupied bool   `json:"portPreoccupied,omitempty"`
	PortHolder      string `json:"portHolder,omitempty"`

	StartedAt time.Time `json:"startedAt"`
	// RunStartedAt is when the run now going was launched, once the
	// service has been restarted (StartedAt is its first launch's).
	RunStartedAt *time.Time `json:"runStartedAt,omitempty"`
	ReadyAt      *time.Time `json:"readyAt,omitempty"`
	EndedAt      *time.Time `json:"endedAt,omitempty"`
	proc.Ended
	Error string `json:"error,omitempty"`
	// LogNote says when logging stopped, and why, if it did.
	LogNote string `json:"logNote,omitempty"`
	// LogFrom is the log's last row before this start: rows after it are
	// this start's output (its restarts' too), rows up to it an earlier
	// start's of the same name, which the log keeps.
	LogFrom int64 `json:"logFrom,omitempty"`
	// StopCause is why a service was stopped other than by a stop
	// request, or what the end of its command stopped; svctext words it.
	StopCause *StopCause `json:"stopCause,omitempty"`
	// StopNote is the sentence a monitor wrote in StopCause's place
	// before there was one, shown as it is.
	StopNote string `json:"stopNote,omitempty"`
	// RestartAt is when the next launch starts, while a launch that
	// ended waits out its backoff before the restart: PID is 0 then,
	// nothing of the service runs.
	RestartAt *time.Time `json:"restartAt,omitempty"`
	// Restarts counts the launches after the first; Launches holds how
	// the last 20 ended ("runs" in state.json).
	Restarts int      `json:"restarts,omitempty"`
	Launches []Launch `json:"runs,omitempty"`
	// Restarted counts the restarts by cause (Restarts is its Crash).
	Restarted Restarted `json:"restarted"`
	// Health is what the health probes found (Spec.HealthSpec), nil
	// without them.
	Health *Health `json:"health,omitempty"`
	// Change is what caused the last restart on change (Spec.WatchSpec).
	Change *Change `json:"change,omitempty"`
	// WatchNote says how files are watched when it is not inotify (out
	// of watches: polled).
	WatchNote string `json:"watchNote,omitempty"`
}

// RestartDue is when a live service that waits out its backoff is
// restarted; nil while a launch runs, or once it has ended for good.
func (s *State) RestartDue() *time.Time {
	if !s.Status.Live() || s.PID != 0 {
		return nil
	}
	return s.RestartAt
}

// StopCause is why a service's run ended other than by a stop request,
// as its monitor found it: what the end of its command left behind and
// stopped, the restarts it gave up after, or the process it was tied to.
// It is the monitor's finding, in no face's words (svctext's StopNote
// says it).
type StopCause struct {
	Kind StopKind `json:"kind"`
	// N is how many processes were left behind (LeftBehind), or the
	// restarts made before giving up (GaveUp).
	N int `json:"n,omitempty"`
	// PID is the process the service was tied to (UntilExit).
	PID int `json:"pid,omitempty"`
	// Program is what left processes behind, when known (LeftBehind).
	Program string `json:"program,omitempty"`
	// NotFollowed is why a command that exited 0 was not followed to
	// what it left (LeftBehind): NoFollow, or OneShot; "" otherwise.
	NotFollowed string `json:"notFollowed,omitempty"`
}

// StopKind is what a StopCause is.
type StopKind string

const (
	// LeftBehind: the command ended and left processes, which were
	// stopped.
	LeftBehind StopKind = "leftBehind"
	// GaveUp: the command ended once more than Spec.MaxRestarts allows.
	GaveUp StopKind = "gaveUp"
	// UntilExit: Spec.UntilExit's process ended.
	UntilExit StopKind = "untilExit"
)

// StopCause.NotFollowed's values.
const (
	NoFollow = "noFollow" // Spec.NoFollow
	OneShot  = "oneShot"  // a project's one-shot
)

// WriteState writes s as one line of JSON, atomically (atomicfile: a
// temporary file beside it, fsync, rename, fsync of the directory). A reader sees the
// old state or the new one, never a torn one.
func WriteState(d Dir, s *State) error {
	// One line of compact JSON, so that ndjson reads it as it is.
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	return atomicfile.Write(d.StatePath(), b, 0o600)
}

// ReadState reads state.json. A missing file is os.ErrNotExist; a file
// that is not a state is an error that says so, never a crash.
func ReadState(d Dir) (*State, error) {
	b, err := os.ReadFile(d.StatePath())
	if err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, &DamagedError{d.Name, err}
	}
	if s.Name == "" {
		s.Name = d.Name
	}
	return &s, nil
}
