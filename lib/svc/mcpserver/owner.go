package mcpserver

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/agentry/agentry/lib/sockdiag"
)

// The bounds of the HTTP server's connections: every local user can reach
// a loopback port, and one who holds connections open must not use up the
// owner's descriptors.
const (
	maxConns     = 128 // the owner's connections at once
	maxRefusing  = 32  // refused connections being answered at once
	idleTimeout  = 2 * time.Minute
	refuseWithin = time.Second
)

// ownerListener accepts only the connections that a process of uid made:
// loopback is shared by every user of the machine, so the port alone
// keeps no one out. The kernel says who owns the other end (sock_diag,
// the TCP counterpart of SO_PEERCRED); a connection of anyone else, or
// one whose owner cannot be learned, is answered 403 and closed before
// HTTP sees it. At most maxConns are served at once; past that a new one
// is closed at once.
type ownerListener struct {
	net.Listener
	uid      int
	conns    chan struct{}
	refusing atomic.Int32
}

func newOwnerListener(ln net.Listener, uid int) *ownerListener {
	return &ownerListener{Listener: ln, uid: uid, conns: make(chan struct{}, maxConns)}
}

func (l *ownerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if uid, err := connUID(c); err != nil || uid != l.uid {
			l.refuse(c)
			continue
		}
		select {
		case l.conns <- struct{}{}:
			return &ownedConn{Conn: c, release: func() { <-l.conns }}, nil
		default:
			c.Close()
		}
	}
}

// connUID is the uid of the process at the other end of c.
func connUID(c net.Conn) (int, error) {
	peer, ok1 := c.RemoteAddr().(*net.TCPAddr)
	local, ok2 := c.LocalAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return -1, errors.New("not a TCP connection")
	}
	return sockdiag.PeerUID(peer.AddrPort(), local.AddrPort())
}

// refused is the whole answer to a connection of another user.
var refused = "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n" +
	"svc mcp serves only the user who started it.\n"

// refuse answers a connection of another user 403 and closes it: once
// its request's head has come (an answer before it is one the client has
// not asked for yet, and drops), or a moment has passed; then it reads on
// for a moment, so the close is not a reset that loses the answer. At most
// maxRefusing are answered at once; the rest are closed at once.
func (l *ownerListener) refuse(c net.Conn) {
	if l.refusing.Add(1) > maxRefusing {
		l.refusing.Add(-1)
		c.Close()
		return
	}
	go func() {
		defer l.refusing.Add(-1)
		defer c.Close()
		c.SetDeadline(time.Now().Add(refuseWithin))
		readHead(c)
		io.WriteString(c, refused)
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	}()
}

// readHead reads c up to the end of a request's head (a blank line), at
// most 16 KiB, or until its deadline.
func readHead(c net.Conn) {
	var head []byte
	buf := make([]byte, 4096)
	for len(head) < 16<<10 {
		n, err := c.Read(buf)
		head = append(head, buf[:n]...)
		if bytes.Contains(head, []byte("\r\n\r\n")) || err != nil {
			return
		}
	}
}

// ownedConn gives its place back when it closes, once.
type ownedConn struct {
	net.Conn
	release func()
	closed  atomic.Bool
}

func (c *ownedConn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.release()
	}
	return c.Conn.Close()
}
