package sockdiag

import (
	"bufio"
	"encoding/binary"
	"errors"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// ErrNoSocket is a connection whose other end the kernel does not know on
// this machine: it has closed, or it comes from another host or network
// namespace.
var ErrNoSocket = errors.New("no such socket on this machine")

// PeerUID is the uid that owns the other end of a TCP connection made on
// this machine (over loopback): the socket whose own address is peer and
// whose remote address is local. A server calls it with a connection's
// remote and local addresses to learn which user connected, as
// SO_PEERCRED tells of a unix socket. It asks sock_diag for that one
// socket, and reads /proc/net/tcp where sock_diag cannot be had.
//
// A connection the far end has not accepted yet may still be a request
// socket there (the handshake's last ACK not yet taken), which sock_diag
// gives no owner: it is asked again for up to 10 ms, then the listener's
// owner, which /proc/net/tcp gives for it, is the answer.
func PeerUID(peer, local netip.AddrPort) (int, error) {
	for i := 0; ; i++ {
		uid, state, err := diagPeerUID(peer, local)
		if err != nil && !errors.Is(err, ErrNoSocket) {
			return procNetPeerUID(peer, local)
		}
		if err != nil || (state != tcpSynRecv && state != tcpNewSynRecv) {
			return uid, err
		}
		if i == 50 {
			return procNetPeerUID(peer, local)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// TCP states as sock_diag gives them: a socket of a handshake not yet
// done, and a request socket, whose uid sock_diag gives as 0.
const (
	tcpSynRecv    = 3
	tcpNewSynRecv = 12
)

// diagPeerUID asks sock_diag for the one socket at peer connected to
// local (a request without NLM_F_DUMP, its sockid naming the socket from
// its own side): its uid and TCP state.
func diagPeerUID(peer, local netip.AddrPort) (uid int, state uint8, err error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return -1, 0, err
	}
	defer unix.Close(fd)
	p, l := peer.Addr().Unmap(), local.Addr().Unmap()
	family := uint8(unix.AF_INET6)
	if p.Is4() && l.Is4() {
		family = unix.AF_INET
	}
	req := diagRequest(family, 0, ^uint32(0), 0)
	binary.LittleEndian.PutUint16(req[6:], unix.NLM_F_REQUEST)
	id := req[24:]
	binary.BigEndian.PutUint16(id[0:], peer.Port())
	binary.BigEndian.PutUint16(id[2:], local.Port())
	putDiagAddr(id[4:20], p)
	putDiagAddr(id[20:36], l)
	binary.LittleEndian.PutUint32(id[40:], ^uint32(0)) // INET_DIAG_NOCOOKIE
	binary.LittleEndian.PutUint32(id[44:], ^uint32(0))
	if _, err := unix.Write(fd, req[:]); err != nil {
		return -1, 0, err
	}
	buf := make([]byte, 8<<10)
	n, err := unix.Read(fd, buf)
	if err != nil {
		return -1, 0, err
	}
	return parsePeerReply(buf[:n])
}

// putDiagAddr writes an address as a sockid holds it: an IPv4 address in
// its first four bytes, an IPv6 one in all sixteen.
func putDiagAddr(b []byte, a netip.Addr) {
	if a.Is4() {
		v4 := a.As4()
		copy(b, v4[:])
		return
	}
	v6 := a.As16()
	copy(b, v6[:])
}

// parsePeerReply reads sock_diag's answer to a one-socket request: the
// socket's inet_diag_msg, whose state is byte 1 and uid at byte 64, or an
// error message (ENOENT: no such socket).
func parsePeerReply(b []byte) (int, uint8, error) {
	if len(b) < unix.NLMSG_HDRLEN {
		return -1, 0, unix.EINVAL
	}
	size := int(binary.LittleEndian.Uint32(b[0:4]))
	if size < unix.NLMSG_HDRLEN || size > len(b) {
		return -1, 0, unix.EINVAL
	}
	m := b[unix.NLMSG_HDRLEN:size]
	if binary.LittleEndian.Uint16(b[4:6]) == unix.NLMSG_ERROR {
		if len(m) >= 4 {
			if errno := unix.Errno(-int32(binary.LittleEndian.Uint32(m[0:4]))); errno == unix.ENOENT {
				return -1, 0, ErrNoSocket
			} else if errno != 0 {
				return -1, 0, errno
			}
		}
		return -1, 0, unix.EINVAL
	}
	if len(m) < 72 {
		return -1, 0, unix.EINVAL
	}
	return int(binary.LittleEndian.Uint32(m[64:68])), m[1], nil
}

// procNetPeerUID finds the socket in /proc/net/tcp and tcp6 by its two
// addresses and reads its uid column.
func procNetPeerUID(peer, local netip.AddrPort) (int, error) {
	p, l := peer.Addr().Unmap(), local.Addr().Unmap()
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 {
				continue
			}
			if !procNetIs(fields[1], p, peer.Port()) || !procNetIs(fields[2], l, local.Port()) {
				continue
			}
			f.Close()
			uid, err := strconv.Atoi(fields[7])
			if err != nil {
				return -1, unix.EINVAL
			}
			return uid, nil
		}
		f.Close()
	}
	return -1, ErrNoSocket
}

// procNetIs says whether /proc/net/tcp's ADDR:PORT is a and port.
func procNetIs(field string, a netip.Addr, port uint16) bool {
	i := strings.LastIndexByte(field, ':')
	if i < 0 {
		return false
	}
	n, err := strconv.ParseUint(field[i+1:], 16, 16)
	return err == nil && uint16(n) == port && procNetAddr(field[:i]).Unmap() == a
}
