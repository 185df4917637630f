package ready

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/sockdiag"
)

// Listens finds the TCP sockets a service's tree listens on: the sockets
// held by root's descendants (root is the monitor, a subreaper, so what
// double-forks out of the service's group is still its descendant). One
// poll costs a sock_diag dump while the machine's set of listening
// sockets stays the same; the tree's descriptors are read only when a
// listening socket appears that has not been placed yet.
type Listens struct {
	root   int
	dump   sockdiag.ListenerDump
	placed map[uint64]placed // listening inodes seen
	look   uint64            // the number of the current look
	fresh  []uint64          // inodes first seen in this look
	ours   []sockdiag.Listener
}

type placed struct {
	ours bool   // held by the tree
	look uint64 // the last look that saw it
}

// NewListens watches the descendants of root. Close releases it.
func NewListens(root int) *Listens { return &Listens{root: root, placed: map[uint64]placed{}} }

// Close releases the netlink socket.
func (t *Listens) Close() { t.dump.Close() }

// Poll returns the tree's listening sockets now, by port, one per port
// (IPv4 before IPv6). The slice is the caller's.
func (t *Listens) Poll() []sockdiag.Listener {
	all := t.dump.Listeners()
	t.look++
	t.fresh = t.fresh[:0]
	for _, l := range all {
		p, ok := t.placed[l.Inode]
		if !ok {
			t.fresh = append(t.fresh, l.Inode)
		}
		p.look = t.look
		t.placed[l.Inode] = p
	}
	if len(t.fresh) > 0 {
		t.place()
	}
	t.ours = t.ours[:0]
	for ino, p := range t.placed {
		if p.look != t.look {
			delete(t.placed, ino) // closed: an inode can come back as another socket
		}
	}
	for _, l := range all {
		if t.placed[l.Inode].ours && !slices.ContainsFunc(t.ours, func(o sockdiag.Listener) bool { return o.Port == l.Port }) {
			t.ours = append(t.ours, l)
		}
	}
	if len(t.ours) == 0 {
		return nil
	}
	slices.SortFunc(t.ours, func(a, b sockdiag.Listener) int { return a.Port - b.Port })
	return slices.Clone(t.ours)
}

// place reads the tree's sockets and marks the listeners seen for the
// first time as the tree's or not.
func (t *Listens) place() {
	held := map[uint64]bool{}
	for _, pid := range proc.Descendants(t.root) {
		for _, ino := range sockdiag.SocketInodes(pid) {
			held[ino] = true
		}
	}
	for _, ino := range t.fresh {
		t.placed[ino] = placed{ours: held[ino], look: t.look}
	}
}

// Ports lists the ports of listeners.
func Ports(ls []sockdiag.Listener) []int {
	out := make([]int, len(ls))
	for i, l := range ls {
		out[i] = l.Port
	}
	return out
}

// Where is how to reach a listener: a URL when it answers HTTP
// (http://127.0.0.1:8000/), else host:port (127.0.0.1:6379). A socket
// bound to any address is reached on loopback. A server that accepts and
// says nothing for half a second is taken for one that does not speak
// HTTP: a dev server compiling its first page prints its URL anyway.
func Where(l sockdiag.Listener) string {
	host := l.Addr
	switch {
	case !host.IsValid() || host.IsUnspecified():
		host = netip.MustParseAddr("127.0.0.1")
		if l.Addr.Is6() && !v4Reaches(l.Port) {
			host = netip.IPv6Loopback()
		}
	}
	hp := net.JoinHostPort(host.String(), strconv.Itoa(l.Port))
	if url := "http://" + hp + "/"; answersHTTP(url, 500*time.Millisecond) {
		return url
	}
	return hp
}

// v4Reaches reports whether 127.0.0.1:port accepts: a socket on :: takes
// IPv4 too unless it is IPv6-only.
func v4Reaches(port int) bool {
	c, err := net.Dial("tcp4", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return false
	}
	c.Close()
	return true
}
