// Package await waits for something another process does — a pid file
// written, a log line appended, a process stopped — by polling it against
// a deadline. It is how the suite's tests synchronise with processes they
// cannot hear from directly: never by sleeping for a set time.
package await

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Until polls cond until it holds or timeout has passed, and reports
// whether it held. Polls start 1ms apart and back off to 20ms, so a quick
// condition costs little and a slow one little CPU.
func Until(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	pause := time.Millisecond
	for {
		if cond() {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(min(pause, time.Until(deadline)))
		pause = min(2*pause, 20*time.Millisecond)
	}
}

// PID waits until path holds a whole pid line ("1234\n": the newline says
// the writer finished) and returns the pid.
func PID(path string, timeout time.Duration) (int, error) {
	var pid int
	var b []byte
	ok := Until(timeout, func() bool {
		b, _ = os.ReadFile(path)
		s, complete := strings.CutSuffix(string(b), "\n")
		n, err := strconv.Atoi(strings.TrimSpace(s))
		pid = n
		return complete && err == nil && n > 0
	})
	if !ok {
		return 0, fmt.Errorf("no pid line in %s within %v (it holds %q)", path, timeout, b)
	}
	return pid, nil
}

// Match waits until the file at path matches re, and returns what it held
// then; on timeout, the error shows what it held last.
func Match(path string, re *regexp.Regexp, timeout time.Duration) ([]byte, error) {
	var b []byte
	ok := Until(timeout, func() bool {
		var err error
		b, err = os.ReadFile(path)
		return err == nil && re.Match(b)
	})
	if !ok {
		return b, fmt.Errorf("%s did not match %q within %v; it holds:\n%s", path, re, timeout, b)
	}
	return b, nil
}
