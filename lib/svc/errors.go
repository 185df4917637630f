package svc

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/agentry/agentry/lib/svc/registry"
)

// The errors of svc's operations, told apart with errors.Is and
// errors.As. None names a flag, a command or an exit status: each face
// (svc's command line, the MCP server, runagent) words them for its own
// reader.
var (
	ErrNameTaken  = errors.New("name taken")                // a live service has the name: *TakenError
	ErrNotFound   = errors.New("no such service")           // *NotFoundError
	ErrLive       = errors.New("the service is running")    // *LiveError
	ErrNoCommand  = errors.New("no command")                // Spec.Command is empty
	ErrNotDir     = errors.New("not a directory")           // Spec.Cwd
	ErrNegative   = errors.New("cannot be negative")        // a count
	ErrZero       = errors.New("must be at least 1")        // a count that has no default
	ErrBadPort    = errors.New("not auto or a port number") // StartOptions.Port
	ErrNoEnvName  = errors.New("no variable name")          // an Env entry "=V" or "V"
	ErrManyReady  = errors.New("more than one readiness")   // of ReadyURL, ReadyPort, ReadyRegex, ReadyCmd
	ErrBadRestart = errors.New("not no, on-failure, always or unhealthy")
	ErrManyHealth = errors.New("more than one health probe")   // of HealthURL, HealthPort, HealthCmd
	ErrNoHealth   = errors.New("no health probe")              // Restart "unhealthy" without one
	ErrNoProbe    = errors.New("given without a health probe") // a probe's timing or count, no probe
	ErrOverEvery  = errors.New("longer than the time between probes")
	ErrNoWatch    = errors.New("given without a file to watch")     // WatchExclude or Debounce without Watch
	ErrBadGlob    = errors.New("not a pattern")                     // WatchSpec.Watch, WatchSpec.WatchExclude
	ErrBadSignal  = errors.New("not a signal that stops a process") // Spec.StopSignal
	ErrNotMonitor = errors.New("not the service's monitor")         // *NotMonitorError
)

// NotFoundError is a service that does not exist.
type NotFoundError struct{ Name string }

func (e *NotFoundError) Error() string        { return "no service called " + e.Name }
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// NotReadyError is a service that will not be ready: it ended, or it
// runs without listening (a watcher, or its ready timeout passed).
type NotReadyError struct {
	Name   string
	Status Status
}

func (e *NotReadyError) Error() string {
	if e.Status == Running {
		return e.Name + " is running and does not listen: there is nothing to wait for"
	}
	return fmt.Sprintf("%s is %s, not ready", e.Name, e.Status)
}

// TakenError is a name a live service has; PID is set when the service's
// monitor is gone but its process still runs.
type TakenError struct {
	Name string
	PID  int
}

func (e *TakenError) Error() string {
	if e.PID != 0 {
		return fmt.Sprintf("%v: %s lost its monitor but its process %d still runs", ErrNameTaken, e.Name, e.PID)
	}
	return fmt.Sprintf("%v: a service called %s is running", ErrNameTaken, e.Name)
}
func (e *TakenError) Is(target error) bool { return target == ErrNameTaken }

// NotMonitorError is a process listening on the socket a service's monitor
// answers on that is not its monitor, by the kernel's record of who
// listens (SO_PEERCRED): a process of another user (UID is not this
// process's effective uid), or not the monitor state.json records
// (MonitorPID, when it records one). Nothing was sent to it, and nothing
// it might say was read.
type NotMonitorError struct {
	Name       string
	PID, UID   int  // the listener's
	OtherUser  bool // UID is not this process's effective uid
	MonitorPID int  // the recorded monitor's, or 0
}

func (e *NotMonitorError) Error() string {
	if e.OtherUser {
		return fmt.Sprintf("the monitor socket of %s is held by a process of another user (pid %d, uid %d), not its monitor; nothing was sent to it", e.Name, e.PID, e.UID)
	}
	return fmt.Sprintf("the monitor socket of %s is held by process %d, not its monitor (pid %d); nothing was sent to it", e.Name, e.PID, e.MonitorPID)
}
func (e *NotMonitorError) Is(target error) bool { return target == ErrNotMonitor }

// LiveError is an operation that needs a service to be stopped first.
type LiveError struct{ Name string }

func (e *LiveError) Error() string        { return e.Name + " is running" }
func (e *LiveError) Is(target error) bool { return target == ErrLive }

// DamagedError is a state.json that is not a state.
type DamagedError struct {
	Name string
	Err  error
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("%s is damaged (%v)", filepath.Join(e.Name, "state.json"), e.Err)
}
func (e *DamagedError) Unwrap() error { return e.Err }

// NameError is a name that cannot be a service's (or a project's, or a
// scope's).
type NameError struct {
	Name    string
	Problem string
}

func (e *NameError) Error() string { return e.Problem }

// ScopeTakenError is a scope's name that a project's directory or another
// owner's scope holds (ClaimScope): the home's registry's error.
type ScopeTakenError = registry.ScopeTakenError

// FieldError is a value of a Spec, or of StartOptions, that cannot be.
// Field is its name in Spec's JSON ("command", "cwd", "env", "logKeep",
// "maxRestarts", "restart") or StartOptions' ("port"); Err says what is
// wrong, one of the Err values above.
type FieldError struct {
	Field string
	Value string
	Err   error
}

func (e *FieldError) Error() string { return fmt.Sprintf("%s %q: %v", e.Field, e.Value, e.Err) }
func (e *FieldError) Unwrap() error { return e.Err }

// PortError is a port that is not free for a service: Field is "port"
// (StartOptions.Port, which must be free), "readyPort" (Spec.ReadyPort,
// which another process must not hold already) or "command" (a port the
// command names, which another live service holds). Service is set when
// the port is given to another live service, Holder when a process holds
// it. Held: Service listens on it; Same: Service runs the same command.
type PortError struct {
	Field      string
	Port       int
	Service    string
	Holder     string
	Held, Same bool
}

func (e *PortError) Error() string {
	switch {
	case e.Service != "" && e.Same:
		return fmt.Sprintf("port %d is held by service %s (same command)", e.Port, e.Service)
	case e.Service != "" && e.Held:
		return fmt.Sprintf("port %d is held by service %s", e.Port, e.Service)
	case e.Service != "":
		return fmt.Sprintf("port %d is given to service %s", e.Port, e.Service)
	case e.Field == "readyPort":
		return fmt.Sprintf("port %d is already held by %s", e.Port, e.Holder)
	}
	return fmt.Sprintf("port %d is in use by %s", e.Port, e.Holder)
}

// NoPortError is a service that has no port to tell: none was given, and
// it listens on none.
type NoPortError struct {
	Name   string
	Status Status
}

func (e *NoPortError) Error() string { return fmt.Sprintf("%s has no port (%s)", e.Name, e.Status) }

// HomeError is a state home that cannot be used.
type HomeError struct {
	Home string
	Err  error
}

func (e *HomeError) Error() string { return e.Err.Error() }
func (e *HomeError) Unwrap() error { return e.Err }
