package sockdiag

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// BytesReceived is how many bytes the TCP sockets the processes pids hold
// have received so far (tcpi_bytes_received, from a
// sock_diag dump), for telling a process that is receiving a stream from
// one that waits on a silent peer: some runtimes read sockets with
// recv(2), which /proc/PID/io does not count. ok is false when the
// kernel would not say.
func BytesReceived(pids []int) (n uint64, ok bool) {
	mine := map[uint64]bool{}
	for _, p := range pids {
		for _, ino := range SocketInodes(p) {
			mine[ino] = true
		}
	}
	if len(mine) == 0 {
		return 0, true
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return 0, false
	}
	defer unix.Close(fd)
	buf := make([]byte, 64<<10)
	for _, family := range []uint8{unix.AF_INET, unix.AF_INET6} {
		got, err := receivedDump(fd, buf, family, mine)
		if err != nil {
			return 0, false
		}
		n += got
	}
	return n, true
}

// receivedDump sums tcpi_bytes_received over one family's TCP sockets
// whose inode is in mine.
func receivedDump(fd int, buf []byte, family uint8, mine map[uint64]bool) (uint64, error) {
	// Every state but LISTEN, with tcp_info (INET_DIAG_INFO, attribute 2).
	req := diagRequest(family, 1<<(2-1), 0xfff&^(1<<10), 0)
	if _, err := unix.Write(fd, req[:]); err != nil {
		return 0, err
	}
	var sum uint64
	for {
		n, err := unix.Read(fd, buf)
		if err != nil {
			return sum, err
		}
		done, err := diagMessages(buf[:n], func(m []byte) {
			if mine[uint64(binary.LittleEndian.Uint32(m[68:72]))] {
				sum += bytesReceivedAttr(m[72:])
			}
		})
		if done || err != nil {
			return sum, err
		}
	}
}

// bytesReceivedAttr finds tcp_info among a message's attributes and
// returns its tcpi_bytes_received (at byte 128, since Linux 4.1).
func bytesReceivedAttr(a []byte) uint64 {
	for len(a) >= 4 {
		l := int(binary.LittleEndian.Uint16(a[0:2]))
		typ := binary.LittleEndian.Uint16(a[2:4])
		if l < 4 || l > len(a) {
			return 0
		}
		if typ == 2 && l >= 4+136 { // INET_DIAG_INFO
			return binary.LittleEndian.Uint64(a[4+128 : 4+136])
		}
		a = a[min((l+3)&^3, len(a)):]
	}
	return 0
}
