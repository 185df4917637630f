package acp

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/agentry/agentry/lib/backend/echo"
	"github.com/agentry/agentry/lib/host"
)

func TestIDOf(t *testing.T) {
	for _, c := range []struct {
		head, id, method string
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"prompt":[{"text":"xxxx`, `7`, "session/prompt"},
		{`{"method":"session/prompt","id":"a-1","params":{"id":3,"text":"xx`, `"a-1"`, "session/prompt"},
		{`{"params":{"id":3,"text":"xx`, ``, ""}, // the top-level id is past the cut
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"m","params":"`, ``, "m"},
		{`{"jsonrpc":"2.0","id":null,"method":"m","params":"`, ``, "m"},
		{`[{"id":1}`, ``, ""},
		{`{"id":12345678901234567890123,"method":"m"`, `12345678901234567890123`, "m"},
	} {
		id, method, ok := idOf([]byte(c.head))
		if string(id) != c.id || ok != (c.id != "") || (ok && method != c.method) {
			t.Errorf("%s: id %s method %q ok %v; want %s %q", c.head, id, method, ok, c.id, c.method)
		}
	}
}

// heads keeps the start of the lines over the cap alone, by line number,
// however the reads cut the stream.
func TestHeads(t *testing.T) {
	long := `{"id":2,"method":"m","params":"` + strings.Repeat("x", 10000) + `"}`
	in := "{\"id\":1}\n" + long + "\n\n" + long + "\n{\"id\":5}\n" + long
	h := newHeads(iotest.OneByteReader(strings.NewReader(in)), 100)
	if _, err := io.Copy(io.Discard, h); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int64{2, 4, 6} {
		if got := h.take(n); string(got) != long[:headLen] {
			t.Errorf("line %d: kept %d bytes %.40q", n, len(got), got)
		}
	}
	if len(h.saved) != 0 {
		t.Errorf("kept the lines %v too", h.saved)
	}
}

// A request over the line cap is answered all the same, with its id, and
// the lines after it are served.
func TestRequestOverTheCapAnswered(t *testing.T) {
	c := startOpts(t, loadDefs(t), Options{Host: host.Options{Backend: "echo", Version: "test", MaxLine: 1024, DrainTimeout: 5 * time.Second,
		InterruptGrace: time.Second, Factory: func(string, json.RawMessage) (host.Backend, error) { return echo.New(nil) }},
		Warn: func(msg string) { t.Logf("warn: %s", msg) }})
	s := c.newSession()
	c.mu.Lock()
	c.method["99"] = "session/prompt"
	c.mu.Unlock()
	c.write(`{"jsonrpc":"2.0","id":99,"method":"session/prompt","params":{"sessionId":"` + s + `","prompt":[{"type":"text","text":"` + strings.Repeat("x", 5000) + `"}]}}`)
	m := c.nextMsg(t)
	if string(m["id"]) != "99" || !strings.Contains(string(m["error"]), "-32600") || !strings.Contains(string(m["error"]), "cap") {
		t.Errorf("the request over the cap: answered %s %s", m["id"], m["error"])
	}
	ms := c.until(c.send("session/prompt", prompt(s, "after it")))
	if ups, _ := updates(t, ms); chunks(ups) != "after it" {
		t.Errorf("the prompt after it: %q", chunks(ups))
	}
}
