package acp

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
	"github.com/agentry/agentry/lib/backend/echo"
	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/protocol"
)

// startStop is echo, able to start a session's process ahead of its turn
// and to stop it when idle, as claude is: it records what it is asked.
type startStop struct {
	*echo.Backend
	mu      sync.Mutex
	started []protocol.ChatRunParams
	stopped []string
}

func (b *startStop) StartChat(ctx context.Context, p protocol.ChatRunParams) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.started = append(b.started, p)
	return nil
}

func (b *startStop) StopIdle(ctx context.Context, chatID string) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopped = append(b.stopped, chatID)
	return true, nil
}

func (b *startStop) counts() (int, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.started), len(b.stopped)
}

// session/new starts the session's process as its first turn will want it
// (its directory, level 2, asking); it is stopped after the idle time, and
// again after each turn's idle time.
func TestStartAtNewAndIdleStop(t *testing.T) {
	b := &startStop{}
	e, err := echo.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Backend = e
	c := startOpts(t, loadDefs(t), Options{Host: host.Options{Backend: "echo", Version: "test", MaxLine: 1 << 20, DrainTimeout: 5 * time.Second,
		InterruptGrace: time.Second, Factory: func(string, json.RawMessage) (host.Backend, error) { return b, nil }},
		Warn: func(msg string) { t.Logf("warn: %s", msg) }, IdleStop: 50 * time.Millisecond})
	s := c.newSession()
	if !await.Until(5*time.Second, func() bool { n, m := b.counts(); return n == 1 && m == 1 }) {
		n, m := b.counts()
		t.Fatalf("started %d, stopped %d after the idle time; want 1 and 1", n, m)
	}
	b.mu.Lock()
	p := b.started[0]
	b.mu.Unlock()
	if p.ChatID != s || p.Level != 2 || p.Permissions != protocol.PermissionsAsk || p.Workspace == "" {
		t.Errorf("started as %+v", p)
	}
	c.until(c.send("session/prompt", prompt(s, "hi")))
	if !await.Until(5*time.Second, func() bool { _, m := b.counts(); return m == 2 }) {
		_, m := b.counts()
		t.Fatalf("stopped %d times; want again after the turn's idle time", m)
	}
}

// dirs is echo taking additional directories, as claude does.
type dirs struct {
	*echo.Backend
	mu  sync.Mutex
	got map[string][]string
}

func (b *dirs) SetDirectories(ctx context.Context, chatID string, d []string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.got[chatID] = d
	return nil
}

// additionalDirectories reach a backend that takes them, and session/list
// reports them; a backend that does not take them refuses them, as it
// refuses relative paths.
func TestAdditionalDirectories(t *testing.T) {
	b := &dirs{got: map[string][]string{}}
	b.Backend, _ = echo.New(nil)
	c := startWith(t, loadDefs(t), func(string, json.RawMessage) (host.Backend, error) { return b, nil }, "")
	if r := c.call("initialize", map[string]any{"protocolVersion": 1}); !strings.Contains(string(r["result"]), `"additionalDirectories":{}`) {
		t.Errorf("initialize: %s", r["result"])
	}
	r := c.call("session/new", map[string]any{"cwd": t.TempDir(), "additionalDirectories": []string{"/lib/x", "/srv/y"}, "mcpServers": []any{}})
	var res struct{ SessionID string }
	_ = json.Unmarshal(r["result"], &res)
	b.mu.Lock()
	got := b.got[res.SessionID]
	b.mu.Unlock()
	if strings.Join(got, " ") != "/lib/x /srv/y" {
		t.Errorf("the backend got %v (%s)", got, r["error"])
	}
	if r := c.call("session/list", map[string]any{}); !strings.Contains(string(r["result"]), `"additionalDirectories":["/lib/x","/srv/y"]`) {
		t.Errorf("session/list: %s", r["result"])
	}
	if r := c.call("session/new", map[string]any{"cwd": t.TempDir(), "additionalDirectories": []string{"rel"}, "mcpServers": []any{}}); !strings.Contains(string(r["error"]), "-32602") {
		t.Errorf("a relative directory: %s", r["error"])
	}

	e := start(t, loadDefs(t), "")
	if r := e.call("initialize", map[string]any{"protocolVersion": 1}); strings.Contains(string(r["result"]), `additionalDirectories`) {
		t.Errorf("echo's initialize: %s", r["result"])
	}
	if r := e.call("session/new", map[string]any{"cwd": t.TempDir(), "additionalDirectories": []string{"/x"}, "mcpServers": []any{}}); !strings.Contains(string(r["error"]), "takes no additional directories") {
		t.Errorf("echo given a directory: %s", r["error"])
	}
}
