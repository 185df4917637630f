package sockdiag

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"testing"
)

// A connection made here is found from the server's side, by sock_diag and
// by /proc/net/tcp alike, and its owner is this process's user.
func TestPeerUID(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Logf("%s: %v", addr, err)
			continue
		}
		defer ln.Close()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		peer := s.RemoteAddr().(*net.TCPAddr).AddrPort()
		local := s.LocalAddr().(*net.TCPAddr).AddrPort()
		diag := func(p, l netip.AddrPort) (int, error) { uid, _, err := diagPeerUID(p, l); return uid, err }
		for name, fn := range map[string]func(netip.AddrPort, netip.AddrPort) (int, error){
			"sock_diag": diag, "/proc/net": procNetPeerUID, "PeerUID": PeerUID,
		} {
			uid, err := fn(peer, local)
			if err != nil || uid != os.Getuid() {
				t.Errorf("%s %s: uid %d, %v; want %d", addr, name, uid, err, os.Getuid())
			}
			// The server's own socket is not the peer's.
			if _, err := fn(netip.AddrPortFrom(peer.Addr(), 1), local); !errors.Is(err, ErrNoSocket) {
				t.Errorf("%s %s: a socket that is not there: %v", addr, name, err)
			}
		}
	}
}
