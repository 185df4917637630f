package proxy

import (
	"errors"
	"net"
	"net/netip"

	"github.com/agentry/agentry/lib/sockdiag"
)

// peerUID is the uid owning the far end of c, a TCP connection on this
// machine: another user can bind a port a service let go of, but cannot
// make a socket of this user's, so a backend connection whose far end is
// not this user's (or root's) reaches a stranger's listener, and the
// front's connections are counted by who opened them.
func peerUID(c net.Conn) (uint32, error) {
	far, fok := addrPort(c.RemoteAddr())
	near, nok := addrPort(c.LocalAddr())
	if !fok || !nok {
		return 0, errNotTCP
	}
	uid, err := sockdiag.PeerUID(far, near)
	if err != nil {
		return 0, err
	}
	return uint32(uid), nil
}

var errNotTCP = errors.New("not a TCP connection")

func addrPort(a net.Addr) (netip.AddrPort, bool) {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return netip.AddrPort{}, false
	}
	ap := ta.AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), true
}
