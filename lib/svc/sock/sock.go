// Package sock is stream sockets — TCP, and unix sockets in the abstract
// namespace — on golang.org/x/sys/unix and the runtime's poller, without
// package net. With cgo, package net links the C resolver, and a program
// that links it starts the C runtime, in every svc monitor, of which
// there is one per service (DESIGN.md, "Heavy dependencies"). A connection is
// an *os.File, with deadlines.
//
// Names are not resolved through DNS: an address is an IP, "localhost"
// (and NAME.localhost), or a name in /etc/hosts.
package sock

import (
	"errors"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// DialTCP connects to addr within timeout.
func DialTCP(addr netip.AddrPort, timeout time.Duration) (*os.File, error) {
	a := addr.Addr().Unmap()
	if a.Is4() {
		return dial(unix.AF_INET, &unix.SockaddrInet4{Port: int(addr.Port()), Addr: a.As4()}, timeout)
	}
	return dial(unix.AF_INET6, &unix.SockaddrInet6{Port: int(addr.Port()), Addr: a.As16()}, timeout)
}

// DialHost connects to the first of host's addresses (Resolve) that
// accepts on port, within timeout in all.
func DialHost(host string, port uint16, timeout time.Duration) (*os.File, error) {
	addrs, err := Resolve(host)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(timeout)
	for _, a := range addrs {
		left := time.Until(deadline)
		if left <= 0 {
			return nil, os.ErrDeadlineExceeded
		}
		var f *os.File
		if f, err = DialTCP(netip.AddrPortFrom(a, port), left); err == nil {
			return f, nil
		}
	}
	return nil, err
}

// DialUnix connects to the unix socket name ("@name": in the abstract
// namespace) within timeout.
func DialUnix(name string, timeout time.Duration) (*os.File, error) {
	return dial(unix.AF_UNIX, &unix.SockaddrUnix{Name: name}, timeout)
}

func dial(family int, sa unix.Sockaddr, timeout time.Duration) (*os.File, error) {
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	err = unix.Connect(fd, sa)
	if err != nil && err != unix.EINPROGRESS && err != unix.EINTR {
		unix.Close(fd)
		return nil, os.NewSyscallError("connect", err)
	}
	f := os.NewFile(uintptr(fd), "socket")
	if err == nil {
		return f, nil
	}
	// In progress: wait until the socket is writable, then see how the
	// connection went.
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	f.SetWriteDeadline(time.Now().Add(timeout))
	var cerr error
	err = rc.Write(func(fd uintptr) bool {
		n, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_ERROR)
		switch {
		case err != nil:
			cerr = os.NewSyscallError("getsockopt", err)
		case n == 0:
			_, err := unix.Getpeername(int(fd))
			return err == nil // connected; else not yet
		case syscall.Errno(n) == unix.EINPROGRESS || syscall.Errno(n) == unix.EALREADY || syscall.Errno(n) == unix.EINTR:
			return false
		default:
			cerr = os.NewSyscallError("connect", syscall.Errno(n))
		}
		return true
	})
	f.SetWriteDeadline(time.Time{})
	if err == nil {
		err = cerr
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Peer is the process at the other end of a unix socket, as the kernel
// recorded it (SO_PEERCRED): the process that connected, or, seen from
// the connecting side, the one that listened — its pid and effective uid
// when it called connect or listen. Nothing the peer sends can change it.
type Peer struct {
	PID int
	UID int
	GID int
}

// PeerOf is the peer of the connected unix socket c.
func PeerOf(c *os.File) (Peer, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return Peer{}, err
	}
	var cred *unix.Ucred
	var gerr error
	if err := rc.Control(func(fd uintptr) {
		cred, gerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return Peer{}, err
	}
	if gerr != nil {
		return Peer{}, os.NewSyscallError("getsockopt", gerr)
	}
	return Peer{PID: int(cred.Pid), UID: int(cred.Uid), GID: int(cred.Gid)}, nil
}

// Listener is a listening unix socket.
type Listener struct{ f *os.File }

// ListenUnix listens on the unix socket name ("@name": in the abstract
// namespace).
func ListenUnix(name string) (*Listener, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: name}); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("bind", err)
	}
	if err := unix.Listen(fd, unix.SOMAXCONN); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("listen", err)
	}
	return &Listener{os.NewFile(uintptr(fd), "listener")}, nil
}

// Accept waits for a connection; it fails once the listener is closed.
func (l *Listener) Accept() (*os.File, error) {
	rc, err := l.f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var nfd int
	var aerr error
	err = rc.Read(func(fd uintptr) bool {
		nfd, _, aerr = unix.Accept4(int(fd), unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		return aerr != unix.EAGAIN && aerr != unix.EINTR && aerr != unix.ECONNABORTED
	})
	if err == nil {
		err = aerr
	}
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(nfd), "conn"), nil
}

// Close stops the listener; a blocked Accept returns.
func (l *Listener) Close() error { return l.f.Close() }

// CanListen reports whether a TCP socket can listen on port on every
// address (IPv6 and IPv4 at once where there is IPv6), as a server
// asking for ":port" would.
func CanListen(port int) bool {
	family := unix.AF_INET6
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		family = unix.AF_INET
		if fd, err = unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err != nil {
			return false
		}
	}
	defer unix.Close(fd)
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	var sa unix.Sockaddr = &unix.SockaddrInet4{Port: port}
	if family == unix.AF_INET6 {
		unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 0)
		sa = &unix.SockaddrInet6{Port: port}
	}
	return unix.Bind(fd, sa) == nil && unix.Listen(fd, 1) == nil
}

// ErrUnresolved is a host name that is not an address, not localhost and
// not in /etc/hosts.
var ErrUnresolved = errors.New("not an address, localhost or a name in /etc/hosts")

// Resolve is host's addresses: an IP itself; 127.0.0.1 and ::1 for
// localhost and NAME.localhost; else those /etc/hosts gives it.
func Resolve(host string) ([]netip.Addr, error) {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()}, nil
	}
	if addrs := hostsFile("/etc/hosts", name); len(addrs) > 0 {
		return addrs, nil
	}
	return nil, &os.PathError{Op: "resolve", Path: host, Err: ErrUnresolved}
}

// hostsFile is the addresses a hosts file gives name.
func hostsFile(path, name string) []netip.Addr {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var addrs []netip.Addr
	for _, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		a, err := netip.ParseAddr(f[0])
		if err != nil {
			continue
		}
		for _, n := range f[1:] {
			if strings.EqualFold(strings.TrimSuffix(n, "."), name) {
				addrs = append(addrs, a)
				break
			}
		}
	}
	return addrs
}
