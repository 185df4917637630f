package sock

import (
	"bufio"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// A line each way over an abstract unix socket, and Accept ends when the
// listener closes.
func TestUnix(t *testing.T) {
	name := "@agentry-sock-test-" + strconv.Itoa(os.Getpid())
	ln, err := ListenUnix(name)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		line, err := bufio.NewReader(c).ReadString('\n')
		if err == nil {
			_, err = c.Write([]byte("got " + line))
		}
		done <- err
	}()
	c, err := DialUnix(name, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("hello\n"))
	c.SetDeadline(time.Now().Add(5 * time.Second))
	got, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || got != "got hello\n" {
		t.Errorf("%q %v", got, err)
	}
	c.Close()
	if err := <-done; err != nil {
		t.Error(err)
	}
	accepted := make(chan error, 1)
	go func() { _, err := ln.Accept(); accepted <- err }()
	ln.Close()
	if err := <-accepted; err == nil {
		t.Error("Accept after Close succeeded")
	}
	if _, err := DialUnix(name, time.Second); err == nil {
		t.Error("dialled a closed listener")
	}
}

// Each end of a unix connection learns the other's pid and uid from the
// kernel: here both are this process. A file that is no socket has none.
func TestPeerOf(t *testing.T) {
	name := "@agentry-sock-peer-test-" + strconv.Itoa(os.Getpid())
	ln, err := ListenUnix(name)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type got struct {
		p   Peer
		err error
	}
	accepted := make(chan got, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			accepted <- got{err: err}
			return
		}
		defer c.Close()
		p, err := PeerOf(c)
		accepted <- got{p, err}
	}()
	c, err := DialUnix(name, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	me := Peer{PID: os.Getpid(), UID: os.Geteuid(), GID: os.Getegid()}
	if p, err := PeerOf(c); err != nil || p != me {
		t.Errorf("the listener, seen from the dialler: %+v %v, want %+v", p, err, me)
	}
	if g := <-accepted; g.err != nil || g.p != me {
		t.Errorf("the dialler, seen from the listener: %+v %v, want %+v", g.p, g.err, me)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if p, err := PeerOf(r); err == nil {
		t.Errorf("a pipe has a peer: %+v", p)
	}
}

// TCP: a listener is reached and its port is not free; a closed port
// refuses.
func TestTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	c, err := DialHost("localhost", uint16(port), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if CanListen(port) {
		t.Errorf("port %d is held, and CanListen says it is free", port)
	}
	ln.Close()
	if !CanListen(port) {
		t.Errorf("port %d is free again, and CanListen says it is not", port)
	}
	if _, err := DialTCP(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port)), time.Second); err == nil {
		t.Errorf("dialled closed port %d", port)
	}
}

func TestResolve(t *testing.T) {
	for host, want := range map[string]string{"127.0.0.2": "127.0.0.2", "[::1]": "::1", "localhost": "127.0.0.1", "app.localhost": "127.0.0.1"} {
		if got, err := Resolve(host); err != nil || got[0].String() != want {
			t.Errorf("%s: %v %v", host, got, err)
		}
	}
	hosts := filepath.Join(t.TempDir(), "hosts")
	os.WriteFile(hosts, []byte("# comment\n10.1.2.3 web.test web # the web\n::2 v6.test\n"), 0o600)
	if got := hostsFile(hosts, "web"); len(got) != 1 || got[0].String() != "10.1.2.3" {
		t.Errorf("hosts web: %v", got)
	}
	if got := hostsFile(hosts, "v6.test"); len(got) != 1 || got[0].String() != "::2" {
		t.Errorf("hosts v6.test: %v", got)
	}
	if _, err := Resolve("no-such-name.invalid"); err == nil {
		t.Error("resolved a name nothing gives")
	}
}
