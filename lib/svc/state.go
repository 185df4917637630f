package svc

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
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
)

// Live reports whether a status is one of a running service.
func (s Status) Live() bool { return s == Starting || s == Ready || s == Running }

// Spec is how a service was asked to run; restart runs it again.
type Spec struct {
	Command      []string      `json:"command"`
	Cwd          string        `json:"cwd"`
	Env          []string      `json:"env,omitempty"`
	ReadyURL     string        `json:"readyUrl,omitempty"`
	ReadyPort    int           `json:"readyPort,omitempty"`
	ReadyRegex   string        `json:"readyRegex,omitempty"`
	ReadyCmd     string        `json:"readyCmd,omitempty"`
	ReadyTimeout time.Duration `json:"readyTimeoutNs"`
	// Port is the port given with --port, in $PORT and for {port}.
	Port int `json:"port,omitempty"`
	// PTY runs the command on a pseudo-terminal of this size.
	PTY       *TermSize     `json:"pty,omitempty"`
	StopGrace time.Duration `json:"stopGraceNs"`
	LogMax    int64         `json:"logMax"`
	LogKeep   int           `json:"logKeep"`
	// UntilExit stops the service when that process exits.
	UntilExit int `json:"untilExit,omitempty"`
	// Restart is "no", "on-failure" or "always"; MaxRestarts bounds it
	// (0: no bound).
	Restart     string `json:"restart,omitempty"`
	MaxRestarts int    `json:"maxRestarts,omitempty"`
	// Project ties the service to the project file svc up started it
	// from; nil for a service started by svc start.
	Project *ProjectTag `json:"project,omitempty"`
}

// ProjectTag is what svc up records of a project's service, so that a
// later svc up can tell whether the file still says the same, and svc down
// can stop it in order even when the file is gone.
type ProjectTag struct {
	Dir string `json:"dir"` // the project's directory
	// Digest is a hash of the service's definition as svc up resolved it.
	Digest    string   `json:"digest"`
	DependsOn []string `json:"dependsOn,omitempty"` // names within the project
	Oneshot   bool     `json:"oneshot,omitempty"`
}

// TermSize is the size of a --pty service's terminal.
type TermSize struct {
	Rows uint16 `json:"rows"`
	Cols uint16 `json:"cols"`
}

// The defaults of a spec's fields and of svc start's settle window: svc
// start's flags show these, and Start fills them into a spec that leaves
// them zero.
const (
	DefaultReadyTimeout = 60 * time.Second
	DefaultStopGrace    = 5 * time.Second
	DefaultLogMax       = 16 << 20
	DefaultLogKeep      = 5
	DefaultSettle       = 4 * time.Second
)

// WithDefaults is the spec with the fields left zero filled with their defaults.
func (s Spec) WithDefaults() Spec {
	if s.ReadyTimeout <= 0 {
		s.ReadyTimeout = DefaultReadyTimeout
	}
	if s.StopGrace <= 0 {
		s.StopGrace = DefaultStopGrace
	}
	if s.LogMax <= 0 {
		s.LogMax = DefaultLogMax
	}
	if s.LogKeep <= 0 {
		s.LogKeep = DefaultLogKeep
	}
	if s.Restart == "" {
		s.Restart = "no"
	}
	return s
}

// RunRecord is how one run of the command ended.
type RunRecord struct {
	N         int       `json:"n"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"startedAt"`
	EndedAt   time.Time `json:"endedAt"`
	ExitCode  *int      `json:"exitCode,omitempty"`
	Signal    string    `json:"signal,omitempty"`
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

	URL     string `json:"url,omitempty"`
	Port    int    `json:"port,omitempty"`
	Ports   []int  `json:"ports,omitempty"` // every TCP port the tree listens on, once ready
	ReadyBy string `json:"readyBy,omitempty"`
	// Warning is what the user should know of how it became ready: a
	// --port the service did not use.
	Warning         string `json:"warning,omitempty"`
	PortPreoccupied bool   `json:"portPreoccupied,omitempty"`
	PortHolder      string `json:"portHolder,omitempty"`

	StartedAt time.Time  `json:"startedAt"`
	ReadyAt   *time.Time `json:"readyAt,omitempty"`
	EndedAt   *time.Time `json:"endedAt,omitempty"`
	ExitCode  *int       `json:"exitCode,omitempty"`
	Signal    string     `json:"signal,omitempty"`
	Error     string     `json:"error,omitempty"`
	// LogNote says when logging stopped, and why, if it did.
	LogNote string `json:"logNote,omitempty"`
	// StopNote says why a service was stopped other than by svc stop.
	StopNote string `json:"stopNote,omitempty"`
	// Restarts counts the runs after the first; Runs holds how the last
	// 20 runs ended.
	Restarts int         `json:"restarts,omitempty"`
	Runs     []RunRecord `json:"runs,omitempty"`
}

// WriteState writes s as one line of JSON, atomically: a temporary file in the same directory,
// fsync, rename over state.json, fsync of the directory. A reader sees the
// old state or the new one, never a torn one.
func WriteState(d Dir, s *State) error {
	// One line of compact JSON, so that ndjson reads it as it is.
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	f, err := os.CreateTemp(d.Path(), ".state-*.json")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, d.StatePath()); err != nil {
		return err
	}
	ok = true
	if dir, err := os.Open(d.Path()); err == nil {
		dir.Sync()
		dir.Close()
	}
	return nil
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
		return nil, fmt.Errorf("%s is damaged (%v); svc rm --force %s forgets it", filepath.Join(d.Name, "state.json"), err, d.Name)
	}
	if s.Name == "" {
		s.Name = d.Name
	}
	return &s, nil
}
