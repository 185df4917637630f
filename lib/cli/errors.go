package cli

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// Exit codes shared by every agentry binary. Each man page lists the ones its
// program uses.
const (
	ExitOK      = 0   // success
	ExitFailure = 1   // the work ran and failed: a command, an agent or a check
	ExitUsage   = 2   // usage or configuration error; nothing was started
	ExitTimeout = 124 // a time limit the user set expired
	exitSignal  = 128 // 128+N: ended by signal N
)

// Error is an error that knows the exit code it maps to and, optionally, the
// one thing a user should do about it.
type Error struct {
	Code int
	Err  error
	Hint string
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Failf reports that the work ran and failed (exit 1).
func Failf(format string, args ...any) error {
	return &Error{Code: ExitFailure, Err: fmt.Errorf(format, args...)}
}

// Usagef reports a usage or configuration error (exit 2).
func Usagef(format string, args ...any) error {
	return &Error{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// Timeoutf reports that a user-set time limit expired (exit 124).
func Timeoutf(format string, args ...any) error {
	return &Error{Code: ExitTimeout, Err: fmt.Errorf(format, args...)}
}

// WithHint attaches a hint to err, keeping its exit code (1 when err carries
// none).
func WithHint(err error, hint string) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		c := *e
		c.Hint = hint
		return &c
	}
	return &Error{Code: ExitFailure, Err: err, Hint: hint}
}

// WithCode gives err the exit code code.
func WithCode(err error, code int) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		c := *e
		c.Code = code
		return &c
	}
	return &Error{Code: code, Err: err}
}

// SignalError says the program was ended by a signal; it maps to 128+N.
type SignalError struct{ Signal syscall.Signal }

func (e *SignalError) Error() string {
	return "interrupted by " + SignalName(e.Signal)
}

// SignalName is the conventional upper-case name of sig, such as SIGTERM.
func SignalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	return fmt.Sprintf("signal %d", int(sig))
}

// ExitCode maps err to the exit code DESIGN.md gives it: nil is 0, a signal
// is 128+N, an *Error carries its own, anything else is 1.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var s *SignalError
	if errors.As(err, &s) {
		return exitSignal + int(s.Signal)
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ExitFailure
}

// Hint returns the hint attached to err, if any.
func Hint(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Hint
	}
	return ""
}
