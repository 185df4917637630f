package proxy

import (
	"net"
	"strconv"
	"sync"
)

// limit is ln with the proxy's caps on connections: one past a cap is
// closed as soon as it is accepted, before anything is read from it.
func (p *Proxy) limit(ln net.Listener) net.Listener {
	return &limitListener{Listener: ln, p: p, per: map[string]int{}}
}

type limitListener struct {
	net.Listener
	p     *Proxy
	mu    sync.Mutex
	total int
	per   map[string]int // open connections by peer, of other users'
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lim := l.p.Limits
		l.mu.Lock()
		full := l.total >= lim.MaxConns
		l.mu.Unlock()
		if full {
			c.Close() // not even asked whose it is
			continue
		}
		key := l.p.peerKey(c)
		l.mu.Lock()
		if l.total >= lim.MaxConns || key != "" && l.per[key] >= lim.MaxConnsPerPeer {
			l.mu.Unlock()
			c.Close()
			continue
		}
		l.total++
		if key != "" {
			l.per[key]++
		}
		l.mu.Unlock()
		return &countedConn{Conn: c, l: l, key: key}, nil
	}
}

func (l *limitListener) release(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if key != "" {
		if l.per[key]--; l.per[key] <= 0 {
			delete(l.per, key)
		}
	}
}

// peerKey is whom a connection counts against beside the total: another
// user of this machine by uid (on loopback every user has every
// 127.0.0.0/8 address, so an address says nothing of who it is), a peer
// whose user cannot be known by its address; "" for this user's own.
func (p *Proxy) peerKey(c net.Conn) string {
	if uid, err := peerUID(c); err == nil {
		if uid == p.euid {
			return ""
		}
		return "uid " + strconv.FormatUint(uint64(uid), 10)
	}
	if a, ok := addrPort(c.RemoteAddr()); ok {
		return "address " + a.Addr().String()
	}
	return "address " + c.RemoteAddr().String()
}

// countedConn gives its place back once, when it is closed.
type countedConn struct {
	net.Conn
	l    *limitListener
	key  string
	once sync.Once
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.key) })
	return err
}

// CloseWrite lets the server end its side of a TCP connection first, as
// it does with a connection it was given unwrapped.
func (c *countedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
