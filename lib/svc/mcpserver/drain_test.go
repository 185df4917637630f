package mcpserver

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func call(id int, tool, name string) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"name":%q}}}`+"\n", id, tool, name)
}

// held reports whether hold keeps line back while the calls read before
// it are unanswered, and lets it go once they are answered.
func held(t *testing.T, before [][]byte, line []byte) bool {
	t.Helper()
	d := newDrain()
	for _, b := range before {
		d.read(b)
	}
	done := make(chan struct{})
	go func() { d.hold(context.Background(), line); close(done) }()
	select {
	case <-done:
		return false
	case <-time.After(50 * time.Millisecond):
	}
	for i := range before {
		d.wrote(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{}}`+"\n", i+1))
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("still held once every call before it was answered")
	}
	return true
}

func TestHold(t *testing.T) {
	for _, c := range []struct {
		what   string
		before [][]byte
		line   []byte
		held   bool
	}{
		{"a stop after a start of it", [][]byte{call(1, "start", "web")}, call(2, "stop", "web"), true},
		{"a status after a start without a name", [][]byte{call(1, "start", "")}, call(2, "status", "web"), true},
		{"a list after a run", [][]byte{call(1, "run", "")}, call(2, "list", ""), true},
		{"a start after a stop of it", [][]byte{call(1, "stop", "web")}, call(2, "start", "web"), true},
		{"a stop after a start of another", [][]byte{call(1, "start", "api")}, call(2, "stop", "web"), false},
		{"a start after a start", [][]byte{call(1, "start", "web")}, call(2, "start", "web"), false},
		{"a status after a stop", [][]byte{call(1, "stop", "web")}, call(2, "status", "web"), false},
		{"a stop after its start was cancelled", [][]byte{call(1, "start", "web"),
			[]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}` + "\n")}, call(2, "stop", "web"), false},
	} {
		if got := held(t, c.before, c.line); got != c.held {
			t.Errorf("%s: held %v, want %v", c.what, got, c.held)
		}
	}
}
