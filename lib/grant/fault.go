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
}

// Transient says whether the fault is worth another attempt: a cut
// stream, 429, or a server's 5xx (529 overloaded included). An
// authentication error and every other 4xx are not.
func (f Fault) Transient() bool {
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
		return "HTTP " + strconv.Itoa(f.Status)
	}
	return ""
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
	f := Fault{Kind: FaultStatus, Status: int(t.apiStatus), RetryAfter: retryAfter(t.result)}
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
	f := Fault{RetryAfter: retryAfter(msg)}
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
// "Retry-After: 3", "try again in 1.5s", "try again in 200ms".
func retryAfter(msg string) time.Duration {
	low := strings.ToLower(msg)
	for _, key := range []string{"retry-after:", "retry after", "try again in"} {
		_, rest, ok := strings.Cut(low, key)
		if !ok {
			continue
		}
		rest = strings.TrimLeft(rest, " ")
		end := 0
		for end < len(rest) && (rest[end] >= '0' && rest[end] <= '9' || rest[end] == '.') {
			end++
		}
		n, err := strconv.ParseFloat(rest[:end], 64)
		if err != nil || n <= 0 {
			continue
		}
		unit := time.Second
		if strings.HasPrefix(strings.TrimLeft(rest[end:], " "), "ms") {
			unit = time.Millisecond
		}
		return time.Duration(n * float64(unit))
	}
	return 0
}
