package proxy

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc"
)

// service records a live service whose process is this test's, so that
// svc reads it as running without a monitor.
func service(t *testing.T, home, name string, status svc.Status, url string, wt *svc.WorktreeTag) {
	t.Helper()
	me, err := proc.Stat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	d := svc.Dir{Home: home, Name: name}
	if err := os.MkdirAll(d.Path(), 0o700); err != nil {
		t.Fatal(err)
	}
	s := &svc.State{Name: name, Status: status, PID: me.PID, PIDStart: me.Start,
		Spec: svc.Spec{Command: []string{"x"}, ReadyURL: "http://127.0.0.1:{port}/", Worktree: wt}}
	s.URL = url
	if err := svc.WriteState(d, s); err != nil {
		t.Fatal(err)
	}
}

func TestProxy(t *testing.T) {
	home := t.TempDir()
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") == "websocket" {
			c, buf, _ := w.(http.Hijacker).Hijack()
			defer c.Close()
			io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
			line, _ := buf.ReadString('\n')
			io.WriteString(c, "echo "+line)
			return
		}
		io.WriteString(w, "host "+r.Host+" fwd "+r.Header.Get("X-Forwarded-Host")+"\n")
	}))
	defer backend.Close()
	service(t, home, "feat/web", svc.Ready, backend.URL+"/", &svc.WorktreeTag{Slug: "feat", Slot: 1})
	service(t, home, "shop/web", svc.Ready, backend.URL+"/", &svc.WorktreeTag{Slug: "shop", Main: true})
	service(t, home, "feat/api", svc.Starting, "", &svc.WorktreeTag{Slug: "feat", Slot: 1})
	service(t, home, "feat/old", svc.Stopped, "", &svc.WorktreeTag{Slug: "feat", Slot: 1})
	service(t, home, "shop/docs", svc.Stopped, "", &svc.WorktreeTag{Slug: "shop", Main: true})
	service(t, home, "docs", svc.Ready, backend.URL+"/", nil)
	front := httptest.NewServer(New(home))
	defer front.Close()
	get := func(host string) (int, string) {
		req, _ := http.NewRequest("GET", front.URL+"/", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("web.feat.localhost:7780"); code != 200 || body != "host web.feat.localhost:7780 fwd web.feat.localhost:7780\n" {
		t.Errorf("web.feat: %d %q", code, body)
	}
	if code, _ := get("WEB.localhost"); code != 200 {
		t.Errorf("the main checkout's web: %d", code)
	}
	if code, body := get("api.feat.localhost"); code != 503 || !strings.Contains(body, "feat/api is starting, not ready") {
		t.Errorf("not ready: %d %q", code, body)
	}
	// One that was stopped is known, and said to be so, not unknown; a
	// live one of the same proxy name has the name before it.
	if code, body := get("old.feat.localhost"); code != 503 || !strings.Contains(body, "feat/old is stopped, not ready") {
		t.Errorf("stopped: %d %q", code, body)
	}
	if code, _ := get("docs.localhost"); code != 200 {
		t.Errorf("a live docs before the stopped shop/docs: %d", code)
	}
	if code, body := get("nope.feat.localhost"); code != 404 || !strings.Contains(body, "docs.localhost, old.feat.localhost, web.feat.localhost, web.localhost") {
		t.Errorf("unknown: %d %q", code, body)
	}
	if code, body := get("localhost"); code != 200 || !strings.Contains(body, "It knows:") {
		t.Errorf("the index: %d %q", code, body)
	}

	// A WebSocket upgrade, and bytes both ways after it.
	c, err := net.Dial("tcp", strings.TrimPrefix(front.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: web.feat.localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
	r := bufio.NewReader(c)
	status, _ := r.ReadString('\n')
	if !strings.HasPrefix(status, "HTTP/1.1 101") {
		t.Fatalf("upgrade: %q", status)
	}
	for {
		l, _ := r.ReadString('\n')
		if l == "\r\n" || l == "" {
			break
		}
	}
	io.WriteString(c, "hello\n")
	if echo, _ := r.ReadString('\n'); echo != "echo hello\n" {
		t.Errorf("after the upgrade: %q", echo)
	}

	// The backend goes: the next request is told so, not hung.
	backend.CloseClientConnections()
	backend.Close()
	service(t, home, "feat/web", svc.Exited, "", &svc.WorktreeTag{Slug: "feat", Slot: 1})
	if code, _ := get("web.feat.localhost"); code != 503 && code != 404 {
		t.Errorf("after the service ended: %d", code)
	}
}

// The proxy's own page, with the names it knows, is only for a loopback
// Host: a page of another name (a DNS name rebound to 127.0.0.1) gets a
// short 421 that names nothing.
func TestIndexOnlyForLoopbackHosts(t *testing.T) {
	home := t.TempDir()
	service(t, home, "secret-project/web", svc.Ready, "http://127.0.0.1:1/", &svc.WorktreeTag{Slug: "secret-project", Main: true})
	front := httptest.NewServer(New(home))
	defer front.Close()
	get := func(host string) (int, string) {
		req, _ := http.NewRequest("GET", front.URL+"/", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, host := range []string{"localhost", "LOCALHOST:7780", "localhost.", "127.0.0.1", "127.0.0.1:7780", "127.1.2.3:80", "[::1]", "[::1]:7780"} {
		if code, body := get(host); code != 200 || !strings.Contains(body, "web.localhost") {
			t.Errorf("Host %s: %d %q", host, code, body)
		}
	}
	for _, host := range []string{"evil.example", "evil.example:7780", "192.168.1.5", "[2001:db8::1]:7780", "localhost.evil.example", "127.0.0.1.nip.io"} {
		code, body := get(host)
		if code != http.StatusMisdirectedRequest || strings.Contains(body, "web") || !strings.Contains(body, "svc proxy answers for NAME.localhost names") {
			t.Errorf("Host %s: %d %q", host, code, body)
		}
	}
}
