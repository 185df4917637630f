package proxy

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The user at the other end of a TCP connection on this machine: the
// owner of the socket whose local address is the connection's remote
// one and whose peer is the connection's local one. Another user can
// bind a port a service let go of, but cannot make a socket of this
// user's: so a backend connection whose far end is not this user's (or
// root's) reaches a stranger's listener, and the front's connections
// are counted by who opened them. The kernel answers through sock_diag,
// asked for that one socket (no dump: microseconds), else from
// /proc/net/tcp.
//
// This is lib/sockdiag's kind of question; it is here, not there, while
// that package has no answer by socket.

// errNoSocket: no socket on this machine is the far end (a peer
// elsewhere, or one gone already).
var errNoSocket = errors.New("no such socket on this machine")

// peerUID is the uid owning the far end of c.
func peerUID(c net.Conn) (uint32, error) {
	local, lok := addrPort(c.RemoteAddr()) // the far end's own address
	remote, rok := addrPort(c.LocalAddr())
	if !lok || !rok {
		return 0, errNoSocket
	}
	return socketUID(local, remote)
}

func addrPort(a net.Addr) (netip.AddrPort, bool) {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return netip.AddrPort{}, false
	}
	ap := ta.AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), true
}

// TCP states as sock_diag and /proc/net/tcp give them.
const (
	tcpSynRecv    = 3
	tcpNewSynRecv = 12 // a request socket: sock_diag gives it uid 0
)

// socketUID is the uid of the TCP socket bound to local and connected to
// remote. A connection not yet accepted may still be a request socket,
// whose owner sock_diag does not give: it is asked again, briefly, as
// the handshake's last ACK is taken.
func socketUID(local, remote netip.AddrPort) (uint32, error) {
	for i := 0; ; i++ {
		uid, state, err := diagUID(local, remote)
		if err != nil && !errors.Is(err, errNoSocket) {
			return procNetUID(local, remote)
		}
		if err != nil || (state != tcpNewSynRecv && state != tcpSynRecv) {
			return uid, err
		}
		if i == 50 {
			return procNetUID(local, remote) // the listener's uid, for a request
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// diagUID asks sock_diag for the one socket: its uid and state.
func diagUID(local, remote netip.AddrPort) (uid uint32, state uint8, err error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return 0, 0, err
	}
	defer unix.Close(fd)
	// nlmsghdr (16), then inet_diag_req_v2: family, protocol, ext, pad,
	// states, then the sockid: sport, dport (big-endian), src[16],
	// dst[16], if, cookie[2] (INET_DIAG_NOCOOKIE: any).
	var req [16 + 56]byte
	binary.LittleEndian.PutUint32(req[0:], uint32(len(req)))
	binary.LittleEndian.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	binary.LittleEndian.PutUint16(req[6:], unix.NLM_F_REQUEST)
	family := uint8(unix.AF_INET6)
	if local.Addr().Is4() && remote.Addr().Is4() {
		family = unix.AF_INET
	}
	req[16] = family
	req[17] = unix.IPPROTO_TCP
	binary.LittleEndian.PutUint32(req[20:], ^uint32(0))
	binary.BigEndian.PutUint16(req[24:], local.Port())
	binary.BigEndian.PutUint16(req[26:], remote.Port())
	putAddr(req[28:44], local.Addr(), family)
	putAddr(req[44:60], remote.Addr(), family)
	binary.LittleEndian.PutUint32(req[64:], ^uint32(0))
	binary.LittleEndian.PutUint32(req[68:], ^uint32(0))
	if _, err := unix.Write(fd, req[:]); err != nil {
		return 0, 0, err
	}
	buf := make([]byte, 8<<10)
	n, err := unix.Read(fd, buf)
	if err != nil {
		return 0, 0, err
	}
	b := buf[:n]
	if len(b) < unix.NLMSG_HDRLEN {
		return 0, 0, unix.EINVAL
	}
	switch binary.LittleEndian.Uint16(b[4:6]) {
	case unix.NLMSG_ERROR:
		if len(b) >= unix.NLMSG_HDRLEN+4 && int32(binary.LittleEndian.Uint32(b[16:20])) == -int32(unix.ENOENT) {
			return 0, 0, errNoSocket
		}
		return 0, 0, unix.EINVAL
	case unix.SOCK_DIAG_BY_FAMILY:
	default:
		return 0, 0, unix.EINVAL
	}
	// inet_diag_msg: family, state, timer, retrans, sockid (48),
	// expires, rqueue, wqueue, uid, inode.
	m := b[unix.NLMSG_HDRLEN:]
	if len(m) < 72 {
		return 0, 0, unix.EINVAL
	}
	return binary.LittleEndian.Uint32(m[64:68]), m[1], nil
}

// putAddr writes a in sock_diag's form: 4 bytes for AF_INET, 16 for
// AF_INET6 (an IPv4 address mapped).
func putAddr(dst []byte, a netip.Addr, family uint8) {
	if family == unix.AF_INET {
		b := a.As4()
		copy(dst, b[:])
		return
	}
	b := a.As16()
	copy(dst, b[:])
}

// procNetUID finds the socket in /proc/net/tcp and tcp6: its uid column.
func procNetUID(local, remote netip.AddrPort) (uint32, error) {
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || procNetAddrPort(fields[1]) != local || procNetAddrPort(fields[2]) != remote {
				continue
			}
			f.Close()
			uid, err := strconv.ParseUint(fields[7], 10, 32)
			return uint32(uid), err
		}
		f.Close()
	}
	return 0, errNoSocket
}

// procNetAddrPort decodes /proc/net/tcp's ADDR:PORT: the address in hex,
// in 32-bit words of host byte order; the port in hex.
func procNetAddrPort(s string) netip.AddrPort {
	h, p, ok := strings.Cut(s, ":")
	port, err := strconv.ParseUint(p, 16, 16)
	b, herr := hex.DecodeString(h)
	if !ok || err != nil || herr != nil || (len(b) != 4 && len(b) != 16) {
		return netip.AddrPort{}
	}
	for i := 0; i+4 <= len(b); i += 4 {
		binary.BigEndian.PutUint32(b[i:], binary.LittleEndian.Uint32(b[i:]))
	}
	var a netip.Addr
	if len(b) == 4 {
		a = netip.AddrFrom4([4]byte(b))
	} else {
		a = netip.AddrFrom16([16]byte(b)).Unmap()
	}
	return netip.AddrPortFrom(a, uint16(port))
}
