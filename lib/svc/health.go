package svc

import (
	"fmt"
	"strconv"
	"time"
)

// RestartUnhealthy is the Spec.Restart that restarts a service its
// health probes find unhealthy, as well as one that fails.
const RestartUnhealthy = "unhealthy"

// HealthSpec is how a ready service is probed from then on: one of
// HealthURL (answers HTTP 2xx or 3xx), HealthPort (accepts a
// connection) and HealthCmd (a shell command that exits 0), every
// HealthEvery, each given HealthTimeout; HealthFailures in a row make it
// Unhealthy.
type HealthSpec struct {
	HealthURL      string        `json:"healthUrl,omitempty"`
	HealthPort     int           `json:"healthPort,omitempty"`
	HealthCmd      string        `json:"healthCmd,omitempty"`
	HealthEvery    time.Duration `json:"healthEveryNs,omitempty"`
	HealthTimeout  time.Duration `json:"healthTimeoutNs,omitempty"`
	HealthFailures int           `json:"healthFailures,omitempty"`
}

// The defaults of a health probe's settings, filled in when a probe is
// given. A probe's timeout is at most its period.
const (
	DefaultHealthEvery    = 5 * time.Second
	DefaultHealthTimeout  = 2 * time.Second
	DefaultHealthFailures = 3
)

// Probes reports whether a health probe is given.
// Probe names the probe: "GET URL", its command, or "port N".
func (h HealthSpec) Probe() string {
	switch {
	case h.HealthURL != "":
		return "GET " + h.HealthURL
	case h.HealthCmd != "":
		return h.HealthCmd
	}
	return "port " + strconv.Itoa(h.HealthPort)
}

func (h HealthSpec) Probes() bool { return h.HealthURL != "" || h.HealthPort != 0 || h.HealthCmd != "" }

func (h HealthSpec) withDefaults() HealthSpec {
	if !h.Probes() {
		return h
	}
	if h.HealthEvery <= 0 {
		h.HealthEvery = DefaultHealthEvery
	}
	if h.HealthTimeout <= 0 {
		h.HealthTimeout = min(DefaultHealthTimeout, h.HealthEvery)
	}
	if h.HealthFailures <= 0 {
		h.HealthFailures = DefaultHealthFailures
	}
	return h
}

func (h HealthSpec) check(restart string) error {
	bad := func(field, value string, err error) error { return &FieldError{Field: field, Value: value, Err: err} }
	n := 0
	for _, set := range []bool{h.HealthURL != "", h.HealthPort != 0, h.HealthCmd != ""} {
		if set {
			n++
		}
	}
	switch {
	case n > 1:
		return bad("health", "", ErrManyHealth)
	case h.HealthPort < 0 || h.HealthPort > 65535:
		return bad("healthPort", strconv.Itoa(h.HealthPort), ErrBadPort)
	case h.HealthFailures < 0:
		return bad("healthFailures", strconv.Itoa(h.HealthFailures), ErrNegative)
	case h.HealthEvery < 0:
		return bad("healthEvery", h.HealthEvery.String(), ErrNegative)
	case h.HealthTimeout < 0:
		return bad("healthTimeout", h.HealthTimeout.String(), ErrNegative)
	case restart == RestartUnhealthy && n == 0:
		return bad("restart", restart, ErrNoHealth)
	case n == 0 && h.HealthEvery != 0:
		return bad("healthEvery", h.HealthEvery.String(), ErrNoProbe)
	case n == 0 && h.HealthTimeout != 0:
		return bad("healthTimeout", h.HealthTimeout.String(), ErrNoProbe)
	case n == 0 && h.HealthFailures != 0:
		return bad("healthFailures", strconv.Itoa(h.HealthFailures), ErrNoProbe)
	case h.HealthTimeout > max(h.HealthEvery, 0) && (h.HealthEvery > 0 || h.HealthTimeout > DefaultHealthEvery):
		return bad("healthTimeout", h.HealthTimeout.String(), ErrOverEvery)
	}
	return nil
}

// Health is what the probes of a ready service found: how many failed
// in a row, and the last failure. A service with Failures at
// HealthSpec.HealthFailures is Unhealthy.
type Health struct {
	Failures int `json:"failures"` // in a row; 0 once one passes
	// Last is the last probe that failed, nil while none has.
	Last *HealthFailure `json:"last,omitempty"`
	// Since is when the service became unhealthy, nil while it is not.
	Since *time.Time `json:"since,omitempty"`
	// GaveUp: --restart unhealthy restarted it so many times in a row,
	// no probe passing between, that it is left unhealthy until one does.
	GaveUp bool `json:"gaveUp,omitempty"`
}

// HealthFailure is one failed probe, in no face's words (svctext says it).
type HealthFailure struct {
	At   time.Time   `json:"at"`
	Kind ProbeFailed `json:"kind"`
	// Code is the HTTP status (Status) or the command's exit code (Exit).
	Code int `json:"code,omitempty"`
	// TimeoutMs is the time it was given (Timeout).
	TimeoutMs float64 `json:"timeoutMs,omitempty"`
	// Error is what the system said (Refused).
	Error string `json:"error,omitempty"`
}

// ProbeFailed is how a probe failed.
type ProbeFailed string

const (
	ProbeTimeout ProbeFailed = "timeout" // no answer in the probe's timeout
	ProbeRefused ProbeFailed = "refused" // no connection, or not HTTP
	ProbeStatus  ProbeFailed = "status"  // an HTTP status other than 2xx or 3xx
	ProbeExit    ProbeFailed = "exit"    // the command exited non-zero
)

// Restarted counts a service's restarts by cause: Crash (its command
// ended; what Spec.MaxRestarts bounds, also in State.Restarts),
// Unhealthy (its health probes failed) and Change (a file it watches
// changed, or one of its dependencies restarted with cascade).
type Restarted struct {
	Crash     int `json:"crash"`
	Unhealthy int `json:"unhealthy"`
	Change    int `json:"change"`
}

// Said is the failure in a sentence's words, the probe named: "GET
// http://127.0.0.1:8000/healthz: no answer in 500ms" — the one wording
// the monitor's log row and every face share.
func (f *HealthFailure) Said(h HealthSpec) string {
	what := h.Probe()
	switch f.Kind {
	case ProbeTimeout:
		return fmt.Sprintf("%s: no answer in %s", what, time.Duration(f.TimeoutMs*float64(time.Millisecond)))
	case ProbeStatus:
		return fmt.Sprintf("%s: HTTP status %d", what, f.Code)
	case ProbeExit:
		return fmt.Sprintf("%s: exit code %d", what, f.Code)
	}
	return fmt.Sprintf("%s: %s", what, f.Error)
}
