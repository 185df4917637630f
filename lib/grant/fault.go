package grant

import (
	"strconv"
	"strings"
	"time"
)

// FaultKind is what kind of failure an agent reported of its model API.
type FaultKind int

const (
	// FaultNone: the agent reported no API failure.
	FaultNone FaultKind = iota
	// FaultStatus: the API answered an HTTP error (Fault.Status).
	FaultStatus
	// FaultCut: the connection or the stream broke before the answer
	// was whole.
	FaultCut
)

// Fault is the API failure an agent reported, read from its stream.
type Fault struct {
	Kind   FaultKind
	Status int // the HTTP status, for FaultStatus
	// RetryAfter is the wait the API asked for, when the agent passed it
	// on; zero when it did not.
	RetryAfter time.Duration
	// Quota: the status says a usage limit or quota is spent (a 429 that
	// no backoff brings back).
	Quota bool
}

// Transient says whether the fault is worth another attempt: a cut
// stream, 429, or a server's 5xx (529 overloaded included). An
// authentication error, every other 4xx and a spent quota are not.
func (f Fault) Transient() bool {
	if f.Quota {
		return false
	}
	switch f.Kind {
	case FaultCut:
		return true
	case FaultStatus:
		return f.Status == 429 || f.Status >= 500 && f.Status <= 599
	}
	return false
}

// String is the fault in a few words: "HTTP 529", "a cut stream".
func (f Fault) String() string {
	switch f.Kind {
	case FaultCut:
		return "a cut stream"
	case FaultStatus:
		if f.Quota {
			return "HTTP " + strconv.Itoa(f.Status) + " (a usage limit)"
		}
		return "HTTP " + strconv.Itoa(f.Status)
	}
	return ""
}

// quota says whether an API's message is about a usage limit or quota
// spent: Claude's "usage limit reached", OpenAI's "exceeded your current
// quota".
func quota(msg string) bool {
	low := strings.ToLower(msg)
	return strings.Contains(low, "usage limit") || strings.Contains(low, "quota")
}

// Fault is the API failure the agent reported, if any. Claude Code says
// it in its result (api_error_status, or none for a connection lost);
// codex only in the message of its failed turn, which is read for what it
// is known to say.
func (t *Transcript) Fault() Fault {
	if t.Harness == Codex {
		msg := t.turnFailed
		if msg == "" {
			msg = t.lastError
		}
		return codexFault(msg)
	}
	if !t.isError || t.termination != "api_error" {
		return Fault{}
	}
	f := Fault{Kind: FaultStatus, Status: int(t.apiStatus), RetryAfter: retryAfter(t.result), Quota: quota(t.result)}
	if f.Status == 0 {
		f.Kind = FaultCut // "Connection to the API was lost (ECONNRESET)"
	}
	return f
}

// codexFault reads codex's words for an API failure: "unexpected status
// 529 …", "exceeded retry limit, last status: 429 …", "stream
// disconnected before completion: …", and its 5xx text "We’re currently
// experiencing high demand".
func codexFault(msg string) Fault {
	f := Fault{RetryAfter: retryAfter(msg), Quota: quota(msg)}
	switch {
	case msg == "":
		return Fault{}
	case strings.Contains(msg, "stream disconnected before completion"):
		f.Kind = FaultCut
	case statusAfter(msg, "unexpected status ") != 0:
		f.Kind, f.Status = FaultStatus, statusAfter(msg, "unexpected status ")
	case statusAfter(msg, "last status: ") != 0:
		f.Kind, f.Status = FaultStatus, statusAfter(msg, "last status: ")
	case strings.Contains(msg, "experiencing high demand"):
		f.Kind, f.Status = FaultStatus, 503
	default:
		return Fault{}
	}
	return f
}

// statusAfter is the three-digit status that follows prefix in msg, or 0.
func statusAfter(msg, prefix string) int {
	_, rest, ok := strings.Cut(msg, prefix)
	if !ok || len(rest) < 3 {
		return 0
	}
	n, err := strconv.Atoi(rest[:3])
	if err != nil || n < 100 || len(rest) > 3 && rest[3] >= '0' && rest[3] <= '9' {
		return 0
	}
	return n
}

// retryAfter finds a wait the message asks for: "retry after 3",
// "Retry-After: 3", "try again in 1.5s", "try again in 200ms", "try again
// in 2m30s".
func retryAfter(msg string) time.Duration {
	low := strings.ToLower(msg)
	for _, key := range []string{"retry-after:", "retry after", "try again in"} {
		_, rest, ok := strings.Cut(low, key)
		if !ok {
			continue
		}
		if d := wait(strings.TrimLeft(rest, " ")); d > 0 {
			return d
		}
	}
	return 0
}

// wait reads a wait at the start of s: numbers each with its unit (ms, s,
// m, h, or their words; seconds when none), run together as in "2m30s".
func wait(s string) time.Duration {
	var d time.Duration
	for {
		end := 0
		for end < len(s) && (s[end] >= '0' && s[end] <= '9' || s[end] == '.') {
			end++
		}
		n, err := strconv.ParseFloat(s[:end], 64)
		if err != nil || n <= 0 {
			return d
		}
		s = s[end:]
		u := 0
		for u < len(s) && s[u] >= 'a' && s[u] <= 'z' {
			u++
		}
		if u == 0 { // "3 seconds"
			if w := strings.TrimLeft(s, " "); w != s && len(w) > 0 && w[0] >= 'a' && w[0] <= 'z' {
				s = w
				for u < len(s) && s[u] >= 'a' && s[u] <= 'z' {
					u++
				}
			}
		}
		unit := time.Second
		switch s[:u] {
		case "ms", "msec", "millisecond", "milliseconds":
			unit = time.Millisecond
		case "m", "min", "mins", "minute", "minutes":
			unit = time.Minute
		case "h", "hr", "hour", "hours":
			unit = time.Hour
		}
		d += time.Duration(n * float64(unit))
		if s = s[u:]; len(s) == 0 || s[0] < '0' || s[0] > '9' {
			return d
		}
	}
}
