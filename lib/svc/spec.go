package svc

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/cmdline"
	"github.com/agentry/agentry/lib/proc"
)

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
	PTY *TermSize `json:"pty,omitempty"`
	// StopKeys are written to the terminal of a PTY service first when it
	// is stopped; the stop signal follows if it still runs after StopGrace.
	StopKeys  string        `json:"stopKeys,omitempty"`
	StopGrace time.Duration `json:"stopGraceNs"`
	// StopSignal is what a stop sends the service's process group first
	// (SIGKILL follows after StopGrace): a name such as SIGINT, INT or a
	// number; WithDefaults fills it in (see DefaultStopSignal) and makes
	// it a name.
	StopSignal string `json:"stopSignal,omitempty"`
	// NoFollow keeps "exit means done": a command that exits 0 leaving
	// processes behind (a daemon) ends the service, and they are stopped,
	// rather than followed.
	NoFollow bool  `json:"noFollow,omitempty"`
	LogMax   int64 `json:"logMax"`
	LogKeep  int   `json:"logKeep"`
	// UntilExit stops the service when that process exits; UntilExitStart
	// is its start time (clock ticks since boot), so that a later process
	// given the same pid is not taken for it.
	UntilExit      int    `json:"untilExit,omitempty"`
	UntilExitStart uint64 `json:"untilExitStart,omitempty"`
	// Restart is "no", "on-failure", "always" or "unhealthy" (on-failure,
	// and when the health probes fail too, with Health); MaxRestarts bounds it
	// (0: no bound).
	Restart     string `json:"restart,omitempty"`
	MaxRestarts int    `json:"maxRestarts,omitempty"`
	// Health probes the service after it is ready (health.go); Watch
	// restarts it when a file changes (change.go).
	HealthSpec
	WatchSpec
	// Project ties the service to the project file svc up started it
	// from; nil for a service started by svc start.
	Project *ProjectTag `json:"project,omitempty"`
	// Worktree is the git worktree Cwd belongs to, with the slot and slug
	// svc gave it; nil outside git.
	Worktree *WorktreeTag `json:"worktree,omitempty"`
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
	// EarlierDigest is the digest svc up computed of the same definition
	// before it left out the ready timeout it derives (from what waits
	// for the service): a service one started is unchanged, not
	// restarted once after an upgrade. Never recorded.
	EarlierDigest string `json:"-"`
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
	if s.StopSignal == "" {
		s.StopSignal = DefaultStopSignal(s.Command)
	}
	s.HealthSpec = s.HealthSpec.withDefaults()
	s.WatchSpec = s.WatchSpec.withDefaults()
	if sig, ok := proc.ParseSignal(s.StopSignal); ok {
		s.StopSignal = proc.SignalName(sig)
	}
	return s
}

// Signal is the spec's stop signal: SIGTERM when it names none.
func (s Spec) Signal() syscall.Signal {
	if sig, ok := proc.ParseSignal(s.StopSignal); ok {
		return sig
	}
	return syscall.SIGTERM
}

// DefaultStopSignal is the stop signal of a command that names none:
// SIGINT for "go run", which removes its build directory on SIGINT and
// leaves it behind on SIGTERM; SIGTERM for everything else. The command
// is read as its default name is (cmdline.Words): past wrappers (env,
// exec, nice …), and for a shell line or sh -c its last command (cd web
// && go run .).
func DefaultStopSignal(command []string) string {
	words := cmdline.Words(command)
	if len(words) >= 2 && filepath.Base(words[0]) == "go" && words[1] == "run" {
		return "SIGINT"
	}
	return "SIGTERM"
}

// Check is the one check of a spec, whoever built it (the command line,
// the MCP server, svc up): Start makes it, and a face that wants its
// errors early (svc up, at load, for a file's lines) may too. It returns
// a *FieldError naming the field.
func (s Spec) Check() error {
	bad := func(field, value string, err error) error { return &FieldError{Field: field, Value: value, Err: err} }
	ready := 0
	for _, set := range []bool{s.ReadyURL != "", s.ReadyPort != 0, s.ReadyRegex != "", s.ReadyCmd != ""} {
		if set {
			ready++
		}
	}
	switch {
	case len(s.Command) == 0 || strings.TrimSpace(s.Command[0]) == "":
		return bad("command", strings.Join(s.Command, " "), ErrNoCommand)
	case ready > 1:
		return bad("ready", "", ErrManyReady)
	case s.ReadyPort < 0 || s.ReadyPort > 65535:
		return bad("readyPort", strconv.Itoa(s.ReadyPort), ErrBadPort)
	case !slices.Contains([]string{"", "no", "on-failure", "always", RestartUnhealthy}, s.Restart):
		return bad("restart", s.Restart, ErrBadRestart)
	case s.MaxRestarts < 0:
		return bad("maxRestarts", strconv.Itoa(s.MaxRestarts), ErrNegative)
	case s.UntilExit < 0:
		return bad("untilExit", strconv.Itoa(s.UntilExit), ErrNegative)
	case s.LogKeep < 0:
		return bad("logKeep", strconv.Itoa(s.LogKeep), ErrZero)
	case s.LogMax < 0:
		return bad("logMax", strconv.FormatInt(s.LogMax, 10), ErrNegative)
	case s.StopSignal != "" && !ValidStopSignal(s.StopSignal):
		return bad("stopSignal", s.StopSignal, ErrBadSignal)
	case s.StopKeys != "" && s.PTY == nil:
		return bad("stopKeys", s.StopKeys, ErrNoPTY) // keys need a terminal to go to
	}
	if err := s.HealthSpec.check(s.Restart); err != nil {
		return err
	}
	if err := s.WatchSpec.check(); err != nil {
		return err
	}
	for _, kv := range s.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return bad("env", kv, ErrNoEnvName)
		}
	}
	if s.Cwd != "" {
		if st, err := os.Stat(s.Cwd); err != nil || !st.IsDir() {
			return bad("cwd", s.Cwd, ErrNotDir)
		}
	}
	return nil
}

// ValidStopSignal reports a stop signal a service can be given: a signal
// by name or number, other than the job-control ones, which stop nothing.
func ValidStopSignal(name string) bool {
	sig, ok := proc.ParseSignal(name)
	return ok && sig != syscall.SIGSTOP && sig != syscall.SIGTSTP && sig != syscall.SIGCONT && sig != syscall.SIGTTIN && sig != syscall.SIGTTOU
}
