package ready

import (
	"net/netip"
	"slices"
	"time"

	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/sockdiag"
	"github.com/agentry/agentry/lib/svc/sock"
)

// Listens finds the TCP sockets a service's tree listens on: the sockets
// held by root's descendants (root is the monitor, a subreaper, so what
// double-forks out of the service's group is still its descendant). One
// poll costs a sock_diag dump while the machine's set of listening
// sockets stays the same; the tree's descriptors are read only when a
// listening socket appears that has not been placed yet.
type Listens struct {
	root   int
	spare  proc.Spare // others' trees inside root's (see proc.Spare)
	dump   sockdiag.ListenerDump
	placed map[uint64]placed // listening inodes seen
	look   uint64            // the number of the current look
	fresh  []uint64          // inodes first seen in this look
	ours   []sockdiag.Listener
}

type placed struct {
	ours   bool   // held by the tree
	holder int    // the first process of the tree found holding it
	look   uint64 // the last look that saw it
}

// NewListens watches the descendants of root, but for what spare leaves
// out (nil: none). Close releases it.
func NewListens(root int, spare proc.Spare) *Listens {
	return &Listens{root: root, spare: spare, placed: map[uint64]placed{}}
}

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
	held := map[uint64]int{}
	holdings, settled := Holdings(t.root, t.spare)
	for _, h := range holdings { // the closest first
		for _, ino := range h.Sockets {
			if held[ino] == 0 {
				held[ino] = h.PID
			}
		}
	}
	for _, ino := range t.fresh {
		if held[ino] == 0 && !settled {
			delete(t.placed, ino) // the tree moved under every look: placed at the next
			continue
		}
		t.placed[ino] = placed{ours: held[ino] != 0, holder: held[ino], look: t.look}
	}
}

// Holding is a process of a tree, with the inodes of the sockets it holds.
type Holding struct {
	PID     int
	Sockets []uint64
}

// Holdings lists the processes of root's tree (its descendants, the
// closest first) that hold sockets, with their inodes, as at one moment.
// A process that exits hands its children to root (a subreaper) after it
// has closed its descriptors: a look that read its children after the
// hand-over, and its descriptors after the close, would see neither it
// nor the daemon it forked holding the socket they shared. So the tree is
// read again after its descriptors, and the look is made again until the
// tree it read is the one still there. settled is false when it never
// was, in four looks: what is listed is held, but a socket not listed
// may be the tree's too.
func Holdings(root int, spare proc.Spare) (holdings []Holding, settled bool) {
	pids := proc.DescendantsSparing(root, spare)
	for look := 1; ; look++ {
		var out []Holding
		for _, pid := range pids {
			if s := sockdiag.SocketInodes(pid); len(s) > 0 {
				out = append(out, Holding{PID: pid, Sockets: s})
			}
		}
		again := proc.DescendantsSparing(root, spare)
		if sameSet(pids, again) {
			return out, true
		}
		if look == 4 {
			return out, false
		}
		pids = again
	}
}

// sameSet tells whether a and b hold the same pids.
func sameSet(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// Holder is the process of the tree that holds a listener Poll returned:
// the closest to the root when several share it (a pre-forking server's
// master before its workers); 0 when it is not known.
func (t *Listens) Holder(l sockdiag.Listener) int { return t.placed[l.Inode].holder }

// Ports lists the ports of listeners.
func Ports(ls []sockdiag.Listener) []int {
	out := make([]int, len(ls))
	for i, l := range ls {
		out[i] = l.Port
	}
	return out
}

// Reach is the address a client connects to for a listener: its own,
// or for a socket bound to any address the loopback address of its
// family (127.0.0.1 for :: too, unless the socket is IPv6-only).
func Reach(l sockdiag.Listener) netip.AddrPort {
	host := l.Addr
	if !host.IsValid() || host.IsUnspecified() {
		host = netip.AddrFrom4([4]byte{127, 0, 0, 1})
		if l.Addr.Is6() && !v4Reaches(l.Port) {
			host = netip.IPv6Loopback()
		}
	}
	return netip.AddrPortFrom(host, uint16(l.Port))
}

// URLOf is the http URL of an address: http://127.0.0.1:8000/.
func URLOf(a netip.AddrPort) string { return "http://" + a.String() + "/" }

// AnswersHTTP sends one HEAD request to a and reports whether an HTTP
// response came back within half a second. A server that accepts and
// says nothing for that long is taken for one that does not speak HTTP:
// a dev server compiling its first page prints its URL anyway.
func AnswersHTTP(a netip.AddrPort) bool { return answersHTTP(URLOf(a), 500*time.Millisecond) }

// v4Reaches reports whether 127.0.0.1:port accepts: a socket on :: takes
// IPv4 too unless it is IPv6-only.
func v4Reaches(port int) bool {
	c, err := sock.DialTCP(netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(port)), time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
