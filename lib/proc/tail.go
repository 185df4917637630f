package proc

import (
	"strings"
	"sync"
)

// Tail keeps the last bytes written to it, up to a bound: the end of a
// child's stderr or output, for the reason a run failed, without ever
// holding more. Safe for concurrent use.
type Tail struct {
	mu  sync.Mutex
	max int
	buf []byte
	cut bool
}

// NewTail keeps at most max bytes.
func NewTail(max int) *Tail { return &Tail{max: max} }

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
		t.cut = true
	}
	return len(p), nil
}

// String is what is kept, as valid UTF-8.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ToValidUTF8(string(t.buf), "\uFFFD")
}

// Truncated reports whether anything was dropped.
func (t *Tail) Truncated() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cut
}

// LastLine is the last non-empty line kept, or a note that there is none.
func (t *Tail) LastLine() string {
	s := strings.TrimSpace(t.String())
	if s == "" {
		return "no output on stderr"
	}
	lines := strings.Split(s, "\n")
	return lines[len(lines)-1]
}
