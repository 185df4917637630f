package tests

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The test binary is also the small servers and clients of these tests,
// told which by $AGENTRY_PROXYTEST_ROLE, so that it can run as a service
// of svc's and as the other user.
func init() {
	switch os.Getenv("AGENTRY_PROXYTEST_ROLE") {
	case "":
		return
	case "service":
		proxyTestService()
	case "sniffer":
		proxyTestSniffer(os.Args[1])
	case "flood":
		n, _ := strconv.Atoi(os.Args[2])
		proxyTestFlood(os.Args[1], n)
	}
	os.Exit(0)
}

// proxyTestService serves HTTP on 127.0.0.1:$PORT, answering "service";
// /drop lets go of its port (a server reloading between workers does) and
// stays.
func proxyTestService() {
	ln, err := net.Listen("tcp", "127.0.0.1:"+os.Getenv("PORT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/drop" {
			ln.Close()
			w.Header().Set("Connection", "close")
			io.WriteString(w, "dropped\n")
			return
		}
		io.WriteString(w, "service\n")
	})}
	srv.Serve(ln)
	// The port is let go of; the process stays until it is stopped. (Not
	// select{}, which a build without cgo calls a deadlock.)
	for {
		time.Sleep(time.Hour)
	}
}

// proxyTestSniffer listens on addr, says so, and for each connection
// prints what it read, quoted, once the other side is done; it answers
// anything with a 200 "stolen".
func proxyTestSniffer(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Println("cannot listen:", err)
		os.Exit(1)
	}
	fmt.Println("listening")
	for {
		c, err := ln.Accept()
		if err != nil {
			os.Exit(1)
		}
		go func() {
			defer c.Close()
			var got []byte
			buf := make([]byte, 4096)
			for {
				c.SetReadDeadline(time.Now().Add(2 * time.Second))
				n, err := c.Read(buf)
				got = append(got, buf[:n]...)
				if strings.Contains(string(got), "\r\n\r\n") {
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 7\r\nConnection: close\r\n\r\nstolen\n")
				}
				if err != nil {
					break
				}
			}
			fmt.Printf("connection: %q\n", got)
		}()
	}
}

// proxyTestFlood opens n connections to addr, one after another, then
// sends a request on each: it prints how many were answered and how many
// the server had closed unanswered, then holds the answered ones open
// until its input ends.
func proxyTestFlood(addr string, n int) {
	var conns []net.Conn
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			fmt.Println("dial:", err)
			os.Exit(1)
		}
		conns = append(conns, c)
	}
	answered, closed := 0, 0
	for _, c := range conns {
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			answered++
		} else {
			closed++
		}
	}
	fmt.Printf("answered %d, closed %d\n", answered, closed)
	io.Copy(io.Discard, os.Stdin)
}

// lineReader reads a started process's stdout line by line.
type lineReader struct {
	lines chan string
}

func startWithLines(t *testing.T, cmd *exec.Cmd) *lineReader {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	lr := &lineReader{lines: make(chan string, 1024)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lr.lines <- sc.Text()
		}
		close(lr.lines)
	}()
	return lr
}

// next is the next line, failing after 10s or at the end of the output.
func (lr *lineReader) next(t *testing.T, what string) string {
	t.Helper()
	select {
	case l, ok := <-lr.lines:
		if !ok {
			t.Fatalf("the output ended before %s", what)
		}
		return l
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s within 10s", what)
	}
	return ""
}

// proxyGet asks the proxy at port for path as host, with headers.
func proxyGet(t *testing.T, port, host, path string, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://127.0.0.1:"+port+path, nil)
	req.Host = host
	for k, v := range header {
		req.Header.Set(k, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// svcHome is a state home for this test, whose services are all stopped
// at its end; run runs svc there and gives its output.
func svcHome(t *testing.T) func(args ...string) string {
	home := filepath.Join(t.TempDir(), "svc")
	svc := svcIn(home)
	t.Cleanup(func() { svc("stop", "--all", "--grace", "1s").Run() })
	return func(args ...string) string {
		t.Helper()
		out, err := svc(args...).CombinedOutput()
		if err != nil {
			t.Fatalf("svc %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
}

// The port of a ready service is let go of and another user's listener
// takes it, while svc still says the service is ready: svc proxy sends
// that listener nothing, the request's Authorization and Cookie least of
// all, and answers 502. Another user opening connections to the proxy is
// held to its share of them, and the owner is still answered.
func TestProxyOtherUser(t *testing.T) {
	u := newOtherUser(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	reachable(t, filepath.Dir(self))
	run := svcHome(t)
	run("start", "--name", "web", "--cwd", t.TempDir(), "--port", "auto", "--ready-url", "http://127.0.0.1:{port}/",
		"--env", "AGENTRY_PROXYTEST_ROLE=service", "--", self)
	webPort := run("port", "web")
	run("proxy", "--port", "auto")
	proxyPort := run("port", "svc-proxy")

	if code, body := proxyGet(t, proxyPort, "web.localhost", "/", nil); code != 200 || body != "service\n" {
		t.Fatalf("before: %d %q", code, body)
	}
	if code, body := proxyGet(t, proxyPort, "web.localhost", "/drop", nil); code != 200 || body != "dropped\n" {
		t.Fatalf("drop: %d %q", code, body)
	}
	sniffer := u.Command(self, "127.0.0.1:"+webPort)
	sniffer.Env = append(sniffer.Env, "AGENTRY_PROXYTEST_ROLE=sniffer")
	sniffed := startWithLines(t, sniffer)
	if l := sniffed.next(t, "listener of the other user's"); l != "listening" {
		t.Fatalf("the other user's listener: %s", l)
	}
	if status := run("status", "web"); !strings.Contains(status, "ready") {
		t.Fatalf("svc status no longer says ready, which the test assumes:\n%s", status)
	}

	code, body := proxyGet(t, proxyPort, "web.localhost", "/", map[string]string{
		"Authorization": "Bearer secret-token", "Cookie": "session=secret-cookie"})
	if code != http.StatusBadGateway || !strings.Contains(body, "web is not ready") ||
		!strings.Contains(body, fmt.Sprintf("held by another user&#39;s process (uid %d)", u.UID)) || strings.Contains(body, "stolen") {
		t.Errorf("through the proxy: %d %q", code, body)
	}
	// The proxy connected, saw whose socket it was and closed: the
	// listener's one connection carried nothing.
	if l := sniffed.next(t, "connection to the other user's listener"); l != `connection: ""` {
		t.Errorf("the other user's listener read %s", l)
	}

	// Another user's flood: its first 128 connections are served, the
	// rest closed at once, and the owner is answered meanwhile.
	flood := u.Command(self, "127.0.0.1:"+proxyPort, "136")
	flood.Env = append(flood.Env, "AGENTRY_PROXYTEST_ROLE=flood")
	stdin, err := flood.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	flooded := startWithLines(t, flood)
	if l := flooded.next(t, "flood's count"); l != "answered 128, closed 8" {
		t.Errorf("another user's 136 connections: %s", l)
	}
	if code, body := proxyGet(t, proxyPort, "localhost", "/", nil); code != 200 || !strings.Contains(body, "web.localhost") {
		t.Errorf("the owner, while another user holds its share: %d %q", code, body)
	}
	stdin.Close()
	if err := flood.Wait(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("flood: %v", err)
	}
}

// svc proxy's own page lists the services it knows, for a loopback Host
// only: a page whose DNS name was rebound to 127.0.0.1 sends its own
// name, and learns nothing.
func TestProxyIndexOnlyForLoopback(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := svcHome(t)
	run("start", "--name", "secret-web", "--cwd", t.TempDir(), "--port", "auto", "--ready-url", "http://127.0.0.1:{port}/",
		"--env", "AGENTRY_PROXYTEST_ROLE=service", "--", self)
	run("proxy", "--port", "auto")
	port := run("port", "svc-proxy")
	for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port, "[::1]:" + port, "localhost"} {
		if code, body := proxyGet(t, port, host, "/", nil); code != 200 || !strings.Contains(body, "secret-web.localhost") {
			t.Errorf("Host %s: %d %q", host, code, body)
		}
	}
	for _, host := range []string{"evil.example:" + port, "evil.example", "10.0.0.1:" + port} {
		if code, body := proxyGet(t, port, host, "/", nil); code != http.StatusMisdirectedRequest || strings.Contains(body, "secret") {
			t.Errorf("Host %s: %d %q", host, code, body)
		}
	}
	if code, body := proxyGet(t, port, "secret-web.localhost", "/", nil); code != 200 || body != "service\n" {
		t.Errorf("the service by its name: %d %q", code, body)
	}
}

// svc proxy on a port another state home's proxy holds says so, naming
// that home and its user: another user's proxy (whose process this one
// can see, being root) and this user's, seen from the other user (who can
// see neither the process nor its state home, and asks the proxy).
func TestProxyPortOfAnotherHome(t *testing.T) {
	u := newOtherUser(t)
	reachable(t, binDir)
	other := func(args ...string) (string, error) {
		out, err := u.Command(filepath.Join(binDir, "svc"), args...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	t.Cleanup(func() { other("stop", "--all", "--grace", "1s") })
	if out, err := other("proxy", "--port", "auto"); err != nil {
		t.Fatalf("the other user's svc proxy: %v\n%s", err, out)
	}
	theirs, err := other("port", "svc-proxy")
	if err != nil {
		t.Fatal(theirs)
	}
	run := svcHome(t)
	out, err := svcIn(filepath.Join(t.TempDir(), "svc"))("proxy", "--port", theirs).CombinedOutput()
	want := fmt.Sprintf("svc: error: --port %s is held by another svc proxy: uid %d's, of the state home %s\n", theirs, u.UID, filepath.Join(u.Home, "svc"))
	if err == nil || !strings.HasPrefix(string(out), want) {
		t.Errorf("on the other user's proxy's port: %v\n%s\nwant %s", err, out, want)
	}

	run("proxy", "--port", "auto")
	mine := run("port", "svc-proxy")
	// From another home of the other user's.
	c := u.Command(filepath.Join(binDir, "svc"), "proxy", "--port", mine)
	c.Env = append(c.Env, "SVC_HOME="+filepath.Join(u.Home, "svc2"))
	b, err := c.CombinedOutput()
	out2 := string(b)
	want = fmt.Sprintf("svc: error: --port %s is held by another svc proxy: user root's (uid 0), of the state home ", mine)
	if err == nil || !strings.HasPrefix(out2, want) || strings.Contains(out2, "port port") {
		t.Errorf("the other user, on this user's proxy's port: %v\n%s\nwant %s", err, out2, want)
	}
}
