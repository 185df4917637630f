// Package sockdiag asks the kernel about TCP sockets: which listen, on
// what address, which a process holds, how many bytes they have received.
// It asks through sock_diag netlink, which answers in microseconds;
// reading /proc/net/tcp, the fallback, walks every socket and can take
// milliseconds. It knows nothing of process trees: its callers say which
// processes they mean.
package sockdiag

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Listener is a listening TCP socket.
type Listener struct {
	Port  int
	Addr  netip.Addr // the address it is bound to: 0.0.0.0 or :: for any
	Inode uint64
}

// ListeningInodes returns the inodes of the TCP sockets listening on port,
// IPv4 and IPv6.
func ListeningInodes(port int) map[uint64]bool {
	inodes := map[uint64]bool{}
	for _, l := range listeners(port) {
		inodes[l.Inode] = true
	}
	return inodes
}

// listeners lists the listening sockets on port, or on any port when port
// is 0.
func listeners(port int) []Listener {
	var d ListenerDump
	defer d.Close()
	return d.listeners(port)
}

// ListenerDump asks the kernel for listening sockets again and again over
// one netlink socket and one buffer: what a poller uses, at a few
// microseconds a look. The zero value is ready; Close releases it.
type ListenerDump struct {
	fd  int // netlink socket + 1: 0 when not open
	buf []byte
	out []Listener
}

// Listeners returns every listening TCP socket now, IPv4 and IPv6. The
// slice is reused by the next call.
func (d *ListenerDump) Listeners() []Listener { return d.listeners(0) }

func (d *ListenerDump) listeners(port int) []Listener {
	d.out = d.out[:0]
	for _, family := range []uint8{unix.AF_INET, unix.AF_INET6} {
		if err := d.dump(family, port); err != nil {
			d.Close()
			return procNetListeners(port)
		}
	}
	return d.out
}

// Close closes the netlink socket.
func (d *ListenerDump) Close() {
	if d.fd > 0 {
		unix.Close(d.fd - 1)
		d.fd = 0
	}
}

// dump asks sock_diag for the listening TCP sockets of a family (on port,
// when it is not 0) and appends them to d.out.
func (d *ListenerDump) dump(family uint8, port int) error {
	if d.fd == 0 {
		fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
		if err != nil {
			return err
		}
		d.fd, d.buf = fd+1, make([]byte, 32<<10)
	}
	fd := d.fd - 1
	req := diagRequest(family, 0, 1<<10, port) // states: TCP_LISTEN (10)
	// An unconnected netlink socket writes to the kernel.
	if _, err := unix.Write(fd, req[:]); err != nil {
		return err
	}
	for {
		n, err := unix.Read(fd, d.buf)
		if err != nil {
			return err
		}
		done, err := d.parse(d.buf[:n], port)
		if done || err != nil {
			return err
		}
	}
}

// parse reads one batch of netlink messages; done at NLMSG_DONE.
func (d *ListenerDump) parse(b []byte, port int) (done bool, err error) {
	return diagMessages(b, func(m []byte) {
		l := Listener{Port: int(binary.BigEndian.Uint16(m[4:6])), Inode: uint64(binary.LittleEndian.Uint32(m[68:72]))}
		if m[0] == unix.AF_INET {
			l.Addr = netip.AddrFrom4([4]byte(m[8:12]))
		} else {
			l.Addr = netip.AddrFrom16([16]byte(m[8:24])).Unmap()
		}
		if port == 0 || l.Port == port {
			d.out = append(d.out, l)
		}
	})
}

// diagRequest is a sock_diag dump request for a family's TCP sockets in
// the states of the mask (bit N: state N), on port when it is not 0, with
// the extensions of ext (bit N-1: INET_DIAG_ attribute N): nlmsghdr (16)
// and inet_diag_req_v2 (56).
func diagRequest(family, ext uint8, states uint32, port int) [16 + 56]byte {
	var req [16 + 56]byte
	binary.LittleEndian.PutUint32(req[0:], uint32(len(req)))
	binary.LittleEndian.PutUint16(req[4:], 20) // SOCK_DIAG_BY_FAMILY
	binary.LittleEndian.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	req[16] = family
	req[17] = unix.IPPROTO_TCP
	req[18] = ext
	binary.LittleEndian.PutUint32(req[20:], states)
	binary.BigEndian.PutUint16(req[24:], uint16(port))
	return req
}

// diagMessages calls fn with each inet_diag_msg of a batch of sock_diag
// replies — family, state, timer, retrans, then the sockid (sport, dport,
// src[16], dst[16], if, cookie), expires, rqueue, wqueue, uid, inode (72
// bytes), then its attributes — and says when the dump is done
// (NLMSG_DONE).
func diagMessages(b []byte, fn func(m []byte)) (done bool, err error) {
	for len(b) >= unix.NLMSG_HDRLEN {
		size := int(binary.LittleEndian.Uint32(b[0:4]))
		typ := binary.LittleEndian.Uint16(b[4:6])
		if size < unix.NLMSG_HDRLEN || size > len(b) {
			return false, unix.EINVAL
		}
		switch typ {
		case unix.NLMSG_DONE:
			return true, nil
		case unix.NLMSG_ERROR:
			return true, unix.EINVAL
		}
		if m := b[unix.NLMSG_HDRLEN:size]; len(m) >= 72 {
			fn(m)
		}
		b = b[min((size+unix.NLMSG_ALIGNTO-1)&^(unix.NLMSG_ALIGNTO-1), len(b)):]
	}
	return false, nil
}

// procNetListeners reads /proc/net/tcp and tcp6 for the listeners on port
// (any, when 0).
func procNetListeners(port int) []Listener {
	var out []Listener
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			local := fields[1]
			i := strings.LastIndexByte(local, ':')
			p, err := strconv.ParseInt(local[i+1:], 16, 32)
			ino, ierr := strconv.ParseUint(fields[9], 10, 64)
			if err == nil && ierr == nil && (port == 0 || int(p) == port) {
				out = append(out, Listener{Port: int(p), Addr: procNetAddr(local[:i]), Inode: ino})
			}
		}
		f.Close()
	}
	return out
}

// procNetAddr decodes /proc/net/tcp's address: hex, in 32-bit words of
// host byte order.
func procNetAddr(h string) netip.Addr {
	b, err := hex.DecodeString(h)
	if err != nil || (len(b) != 4 && len(b) != 16) {
		return netip.Addr{}
	}
	for i := 0; i+4 <= len(b); i += 4 {
		binary.BigEndian.PutUint32(b[i:], binary.LittleEndian.Uint32(b[i:]))
	}
	if len(b) == 4 {
		return netip.AddrFrom4([4]byte(b))
	}
	return netip.AddrFrom16([16]byte(b)).Unmap()
}

// SocketInodes returns the inodes of the sockets pid has open.
func SocketInodes(pid int) []uint64 {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []uint64
	for _, e := range entries {
		link, err := os.Readlink(dir + "/" + e.Name())
		if err != nil || !strings.HasPrefix(link, "socket:[") {
			continue
		}
		if ino, err := strconv.ParseUint(link[8:len(link)-1], 10, 64); err == nil {
			out = append(out, ino)
		}
	}
	return out
}
