package proc

import (
	"bufio"
	"encoding/binary"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ListeningInodes returns the inodes of the TCP sockets listening on port,
// IPv4 and IPv6. It asks the kernel through sock_diag netlink, which lists
// listening sockets only and answers in microseconds; reading
// /proc/net/tcp, the fallback, walks every socket and can take
// milliseconds.
func ListeningInodes(port int) map[uint64]bool {
	inodes := map[uint64]bool{}
	okAll := true
	for _, family := range []uint8{unix.AF_INET, unix.AF_INET6} {
		if err := diagListeners(family, port, inodes); err != nil {
			okAll = false
		}
	}
	if okAll {
		return inodes
	}
	return procNetListeners(port)
}

// diagListeners asks sock_diag for the listening TCP sockets of a family
// and keeps those on port.
func diagListeners(family uint8, port int, inodes map[uint64]bool) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	// nlmsghdr (16) + inet_diag_req_v2 (56)
	req := make([]byte, 16+56)
	binary.LittleEndian.PutUint32(req[0:], uint32(len(req)))
	binary.LittleEndian.PutUint16(req[4:], 20) // SOCK_DIAG_BY_FAMILY
	binary.LittleEndian.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	req[16] = family
	req[17] = unix.IPPROTO_TCP
	binary.LittleEndian.PutUint32(req[20:], 1<<10) // states: TCP_LISTEN (10)
	binary.BigEndian.PutUint16(req[24:], uint16(port))
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 32<<10)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return err
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case syscall.NLMSG_DONE:
				return nil
			case syscall.NLMSG_ERROR:
				return unix.EINVAL
			}
			d := m.Data // inet_diag_msg: family, state, timer, retrans, sockid(48), expires, rqueue, wqueue, uid, inode
			if len(d) < 72 {
				continue
			}
			sport := int(binary.BigEndian.Uint16(d[4:6]))
			if sport == port {
				inodes[uint64(binary.LittleEndian.Uint32(d[68:72]))] = true
			}
		}
	}
}

// procNetListeners reads /proc/net/tcp and tcp6 for the listeners on port.
func procNetListeners(port int) map[uint64]bool {
	inodes := map[uint64]bool{}
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
			if ino, ierr := strconv.ParseUint(fields[9], 10, 64); err == nil && ierr == nil && int(p) == port {
				inodes[ino] = true
			}
		}
		f.Close()
	}
	return inodes
}
