package ready

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"net/netip"
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
