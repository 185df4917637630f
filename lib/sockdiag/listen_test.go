package sockdiag

import (
	"net"
	"net/netip"
	"os"
	"slices"
	"testing"
)

// sock_diag and /proc/net agree on v4 and v6 listeners — port, address and
// inode — and the inode found is one this process holds.
func TestListeners(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0", "0.0.0.0:0", "[::]:0"} {
		network := "tcp6"
		if addr[0] != '[' {
			network = "tcp4" // Go makes "0.0.0.0" a dual-stack :: socket otherwise
		}
		ln, err := net.Listen(network, addr)
		if err != nil {
			t.Logf("%s: %v", addr, err)
			continue
		}
		tcp := ln.Addr().(*net.TCPAddr)
		want := netip.MustParseAddrPort(addr).Addr().Unmap()
		diag, procNet := listeners(tcp.Port), procNetListeners(tcp.Port)
		if len(diag) != 1 || len(procNet) != 1 || diag[0] != procNet[0] {
			t.Fatalf("%s port %d: sock_diag %v, /proc/net %v", addr, tcp.Port, diag, procNet)
		}
		if diag[0].Addr != want || diag[0].Port != tcp.Port {
			t.Errorf("%s: listener %v", addr, diag[0])
		}
		if !slices.Contains(SocketInodes(os.Getpid()), diag[0].Inode) {
			t.Errorf("%s: inode %d is not among this process's sockets %v", addr, diag[0].Inode, SocketInodes(os.Getpid()))
		}
		var d ListenerDump
		if !slices.Contains(d.Listeners(), diag[0]) {
			t.Errorf("%s: ListenerDump.Listeners misses %v", addr, diag[0])
		}
		d.Close()
		ln.Close()
	}
	if n := len(ListeningInodes(1)); n != 0 {
		t.Errorf("%d listeners on port 1", n)
	}
}
