package acp

import (
	"bytes"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/backend/echo"
	"github.com/agentry/agentry/lib/host"
)

// syncBuffer is a buffer many goroutines write whole lines to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// Whatever line comes in, the face does not fail, writes only JSON-RPC
// lines, and answers a request exactly once (a line that is not a request
// at most once, with id null or its own).
func FuzzHandle(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","id":"x","method":"session/new","params":{"cwd":"/tmp","mcpServers":[{"name":"a","command":"true","args":[],"env":[]}]}}`,
		`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"image"}]}}`,
		`{"jsonrpc":"2.0","id":3,"method":"session/set_config_option","params":{"sessionId":"s","configId":"mode","value":true}}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{}}`,
		`{"jsonrpc":"2.0","id":4,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}`,
		`{"jsonrpc":"2.0","id":null,"method":"x"}`,
		`{"jsonrpc":"2.0","id":{},"method":"x"}`,
		`[{"jsonrpc":"2.0"}]`, `{"id":5,"method":7}`, `{`, `""`, `null`,
		`{"jsonrpc":"2.0","id":6,"method":"session/load","params":{"sessionId":"../../etc/passwd","cwd":"/","mcpServers":[]}}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		var out syncBuffer
		b, _ := echo.New(nil)
		a, err := newAgent(Options{Host: host.Options{Backend: "echo", MaxLine: 1 << 20, DrainTimeout: time.Second, InterruptGrace: time.Second,
			Factory: func(string, json.RawMessage) (host.Backend, error) { return b, nil }}, StateDir: t.TempDir()}, &out)
		if err != nil {
			t.Fatal(err)
		}
		a.handle([]byte(line))
		a.drain(t.Context(), time.Second)
		m, kind, _ := classify([]byte(line))
		var answers int
		for _, l := range bytes.Split(bytes.TrimSpace(out.b.Bytes()), []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			var got incoming
			if err := json.Unmarshal(l, &got); err != nil || got.JSONRPC != "2.0" {
				t.Fatalf("wrote %q for %q", l, line)
			}
			if got.Method == nil {
				answers++
				if kind == lineRequest && !bytes.Equal(got.ID, m.ID) {
					t.Errorf("answered id %s for a request of id %s", got.ID, m.ID)
				}
			}
		}
		switch {
		case kind == lineRequest && answers != 1:
			t.Errorf("%d answers to the request %q", answers, line)
		case kind != lineRequest && answers > 1:
			t.Errorf("%d answers to %q", answers, line)
		}
	})
}
