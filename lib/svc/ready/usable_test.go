package ready

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// answering listens on loopback and answers every connection with
// answer, after reading what the client sends first (n bytes, or a line
// when n is 0); it returns the address.
func answering(t *testing.T, n int, answer []byte) netip.AddrPort {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r := bufio.NewReader(c)
			if n > 0 {
				io.ReadFull(r, make([]byte, n))
			} else if n == 0 {
				r.ReadString('\n')
			}
			c.Write(answer)
			c.Close()
		}
	}()
	return netip.MustParseAddrPort(ln.Addr().String())
}

func TestRedisUsable(t *testing.T) {
	for answer, want := range map[string]bool{
		"+PONG\r\n": true, "-NOAUTH Authentication required.\r\n": true, "-ERR max number of clients reached\r\n": true,
		"-LOADING Redis is loading the dataset in memory\r\n": false, "-BUSY Redis is busy running a script\r\n": false, "": false,
	} {
		if got := Usable(Redis, answering(t, 0, []byte(answer)), 0); got != want {
			t.Errorf("redis answering %q: usable %v, want %v", answer, got, want)
		}
	}
}

func pgMsg(typ byte, body []byte) []byte {
	return append(binary.BigEndian.AppendUint32([]byte{typ}, uint32(len(body)+4)), body...)
}

func pgError(code string) []byte {
	return pgMsg('E', []byte("SFATAL\x00C"+code+"\x00Mno\x00\x00"))
}

func TestPostgresUsable(t *testing.T) {
	startup := len(startupMessage("postgres", "postgres")) // no pid: the user is postgres
	authOK := pgMsg('R', []byte{0, 0, 0, 0})
	cases := []struct {
		name   string
		answer []byte
		want   bool
	}{
		{"session", append(append(authOK, pgMsg('S', []byte("a\x00b\x00"))...), pgMsg('Z', []byte{'I'})...), true},
		{"password asked", pgMsg('R', []byte{0, 0, 0, 10}), true},
		{"starting up", pgError("57P03"), false},
		{"no such role", pgError("28000"), true},
		{"hangs up", nil, false},
	}
	for _, c := range cases {
		if got := Usable(Postgres, answering(t, startup, c.answer), 0); got != c.want {
			t.Errorf("%s: usable %v, want %v", c.name, got, c.want)
		}
	}
}

func TestMySQLUsable(t *testing.T) {
	handshake := append([]byte{5, 0, 0, 0}, 10, '1', '0', 0, 0)
	tooMany := append([]byte{3, 0, 0, 0}, 0xff, 0x10, 0x04)
	for name, c := range map[string]struct {
		answer []byte
		want   bool
	}{"handshake": {handshake, true}, "too many connections": {tooMany, true}, "nothing": {nil, false}} {
		if got := Usable(MySQL, answering(t, -1, c.answer), 0); got != c.want {
			t.Errorf("%s: usable %v, want %v", name, got, c.want)
		}
	}
}

// counting listens on loopback and counts the connections made to it.
func counting(t *testing.T) (netip.AddrPort, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return netip.MustParseAddrPort(ln.Addr().String()), &n
}

// A postmaster whose pid file says ready (or standby) is usable without
// a connection: a startup message would be logged if its role is not
// there. This process stands in for it, its working directory for the
// data directory.
func TestPostgresPidFile(t *testing.T) {
	t.Chdir(t.TempDir())
	pid := strconv.Itoa(os.Getpid())
	for status, want := range map[string]bool{"ready": true, "standby": true, "starting": false, "stopping": false, "": false} {
		lines := []string{pid, "/data", "1700000000", "5432", "/tmp", "127.0.0.1", "  1234   5678"}
		if status != "" {
			lines = append(lines, fmt.Sprintf("%-8s", status))
		}
		if err := os.WriteFile("postmaster.pid", []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		addr, conns := counting(t)
		if got := Usable(Postgres, addr, os.Getpid()); got != want {
			t.Errorf("pid file %q: usable %v, want %v", status, got, want)
		}
		if n := conns.Load(); n != 0 {
			t.Errorf("pid file %q: %d connections made, want none", status, n)
		}
	}
}

func TestSaysReady(t *testing.T) {
	for line, want := range map[string]bool{
		"2026-12-04  0:49:44 0 [Note] mariadbd: ready for connections.":                                                       true,
		"2026-12-04T00:49:44Z 0 [System] [MY-010931] [Server] /usr/sbin/mysqld: ready for connections. Version: '8.0.36'":     true,
		"2026-12-04T00:49:44Z 0 [System] [MY-011323] [Server] X Plugin ready for connections. Bind-address: '::' port: 33060": false,
		"Version: '10.11.19-MariaDB-0+deb12u1'  socket: '/tmp/s'  port: 7711  Debian 12":                                      false,
	} {
		if got := SaysReady(line); got != want {
			t.Errorf("SaysReady(%q) = %v, want %v", line, got, want)
		}
	}
	if !SaysShutDown("2026-12-04  0:49:49 0 [Note] mariadbd: Shutdown complete") {
		t.Error("mariadbd's last line not taken for a shutdown")
	}
}

// A server writing its standard error to /dev/null (or a file) logs
// where svc does not see; one writing to a pipe logs to svc's output.
func TestLogsToOutput(t *testing.T) {
	c := exec.Command("sleep", "5")
	c.Stderr = nil // /dev/null
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Wait()
	defer c.Process.Kill()
	if LogsToOutput(c.Process.Pid) {
		t.Error("a process writing its standard error to /dev/null taken to log to its output")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := exec.Command("sleep", "5")
	p.Stderr = w
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	defer p.Wait()
	defer p.Process.Kill()
	if !LogsToOutput(p.Process.Pid) {
		t.Error("a process writing its standard error to a pipe not taken to log to its output")
	}
}
