package proxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

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
	// docs.localhost is the plain docs's own name: shop/docs has its
	// project's.
	if code, _ := get("docs.localhost"); code != 200 {
		t.Errorf("the plain docs: %d", code)
	}
	if code, body := get("docs.shop.localhost"); code != 503 || !strings.Contains(body, "shop/docs is stopped, not ready") {
		t.Errorf("shop/docs: %d %q", code, body)
	}
	if code, body := get("nope.feat.localhost"); code != 404 || !strings.Contains(body, "docs.localhost, docs.shop.localhost, old.feat.localhost, web.feat.localhost, web.localhost") {
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

// Two projects' web: each is reached at its project's name, and the
// short name they would share lists both, never one of them.
func TestShared(t *testing.T) {
	home := t.TempDir()
	for _, p := range []string{"shop", "blog"} {
		b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "page of "+p) }))
		defer b.Close()
		service(t, home, p+"/web", svc.Ready, b.URL+"/", &svc.WorktreeTag{Slug: p, Main: true})
	}
	front := httptest.NewServer(New(home))
	defer front.Close()
	get := func(host, path string) (int, string) {
		req, _ := http.NewRequest("GET", front.URL+path, nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, p := range []string{"shop", "blog"} {
		if code, body := get("web."+p+".localhost", "/"); code != 200 || body != "page of "+p {
			t.Errorf("web.%s: %d %q", p, code, body)
		}
	}
	code, body := get("web.localhost:7780", "/a?b=1")
	if code != http.StatusMultipleChoices || !strings.Contains(body, `<a href="http://web.blog.localhost:7780/a?b=1">`) ||
		!strings.Contains(body, `<a href="http://web.shop.localhost:7780/a?b=1">`) || !strings.Contains(body, "blog/web and shop/web") {
		t.Errorf("the shared name: %d %q", code, body)
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

// serve runs p on a loopback listener until the test ends; its address.
func serve(t *testing.T, p *Proxy) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return ln.Addr().String()
}

// closedAtOnce reports whether the server closed c without a byte,
// within a deadline.
func closedAtOnce(t *testing.T, c net.Conn) bool {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := c.Read(make([]byte, 1))
	return n == 0 && errors.Is(err, io.EOF)
}

// Past MaxConns a connection is closed as soon as it is accepted; one
// that is closed gives its place back, and the next request is answered.
func TestConnectionCap(t *testing.T) {
	p := New(t.TempDir())
	p.Limits.MaxConns = 4
	addr := serve(t, p)
	var held []net.Conn
	for range 4 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	for i := range 3 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if !closedAtOnce(t, c) {
			t.Errorf("connection %d past the cap was not closed", 5+i)
		}
		c.Close()
	}
	// The ones held are served.
	io.WriteString(held[0], "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
	if status, _ := bufio.NewReader(held[0]).ReadString('\n'); !strings.HasPrefix(status, "HTTP/1.1 200") {
		t.Errorf("a connection within the cap: %q", status)
	}
	// One goes: its place is free once the server has seen it go.
	held[1].Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
		req.Host = "localhost"
		req.Close = true
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("after one was closed: %d", resp.StatusCode)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no place came free within 5s of a connection closing: %v", err)
		}
	}
}

// A kept-alive connection with no request is closed after IdleTimeout,
// and one whose header does not come within ReadHeaderTimeout too.
func TestIdleAndHeaderTimeouts(t *testing.T) {
	p := New(t.TempDir())
	p.Limits.IdleTimeout = 100 * time.Millisecond
	p.Limits.ReadHeaderTimeout = 100 * time.Millisecond
	addr := serve(t, p)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	if _, err := r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("an idle connection: %v, want it closed", err)
	}
	c2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	io.WriteString(c2, "GET / HTTP/1.1\r\nHost: loc")
	c2.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, err := io.ReadAll(c2); err != nil || len(b) > 0 && !strings.HasPrefix(string(b), "HTTP/1.1 408") {
		t.Errorf("a header that never ends: %q, %v", b, err)
	}
}
