// Package ready is how svc knows a service is ready: the endpoints a
// server prints (a URL, a host:port, "port N"), the listening sockets of
// its tree and which process holds each, what that server is (a web
// server, Redis, PostgreSQL, MySQL…) and whether a client can use it now
// — from what the server says of itself (PostgreSQL's pid file, MySQL's
// "ready for connections") or asked as its own clients ask, so that
// nothing lands in its log; probes of a port, an HTTP URL and a TLS
// server; and whether a listening port belongs to the service's own
// process tree or to someone else.
package ready

import (
	"fmt"
	"io"
	"net/netip"
	neturl "net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/sockdiag"
	"github.com/agentry/agentry/lib/svc/sock"
)

// What a server prints when it listens, most telling first: a URL, a
// host:port, or "port N". Compiled on first use, not at every start of
// every binary that links this package.
var (
	urlRE      = lazyRE(`(?i)https?://(?:\[[0-9a-f:]+\]|[a-z0-9.-]+)(?::(\d{2,5}))?[^\s"'<>]*`)
	hostPortRE = lazyRE(`(?i)(?:\b(?:localhost|\d{1,3}(?:\.\d{1,3}){3})|\[[0-9a-f:]*\]):(\d{2,5})\b`)
	portRE     = lazyRE(`(?i)\bport\s*:?\s*(\d{2,5})\b`)
)

func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// Endpoint is a place a service said it listens: a URL when it printed
// an http(s) URL, with a wildcard host (0.0.0.0, [::]) put as the
// loopback address a client would use; only a port when it printed a
// host:port or "port N", which says nothing of the protocol.
type Endpoint struct {
	URL  string // "" when only the port was printed
	Port int
}

// FindEndpoint looks for a URL or port in one line of output.
func FindEndpoint(line string) (Endpoint, bool) {
	if m := urlRE().FindStringSubmatch(line); m != nil {
		url := strings.TrimRight(m[0], ".,;:)]}")
		port, _ := strconv.Atoi(m[1])
		if port == 0 {
			port = 80
			if strings.HasPrefix(strings.ToLower(url), "https") {
				port = 443
			}
		}
		return Endpoint{URL: connectable(url), Port: port}, port < 65536
	}
	for _, re := range []*regexp.Regexp{hostPortRE(), portRE()} {
		if m := re.FindStringSubmatch(line); m != nil {
			port, _ := strconv.Atoi(m[1])
			if port > 0 && port < 65536 {
				return Endpoint{Port: port}, true
			}
		}
	}
	return Endpoint{}, false
}

// connectable puts a URL's wildcard host as the loopback address of its
// family: a server bound to any address prints where it listens, not
// where to connect.
func connectable(url string) string {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return url
	}
	for _, w := range [][2]string{{"0.0.0.0", "127.0.0.1"}, {"[::]", "[::1]"}, {"[0:0:0:0:0:0:0:0]", "[::1]"}} {
		if after, found := strings.CutPrefix(rest, w[0]); found && (after == "" || strings.ContainsAny(after[:1], ":/?#")) {
			return scheme + "://" + w[1] + after
		}
	}
	return url
}

// StripANSI removes terminal escape sequences from a line (colours, and
// the title and hyperlink sequences some dev servers print under a
// terminal): CSI … final byte, OSC … BEL or ST, and two-byte escapes.
func StripANSI(s string) string {
	i := strings.IndexByte(s, 0x1b)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i >= 0 {
		b.WriteString(s[:i])
		s = s[i+1:]
		switch {
		case s == "":
		case s[0] == '[': // CSI: parameters and intermediates, then a final byte in @–~
			j := 1
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			s = s[min(j+1, len(s)):]
		case s[0] == ']': // OSC: up to BEL or ESC \
			end := len(s)
			if j := strings.IndexAny(s, "\a\x1b"); j >= 0 {
				end = j + 1
				if s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\' {
					end = j + 2
				}
			}
			s = s[end:]
		case (s[0] == '(' || s[0] == ')') && len(s) > 1: // a character set: one more byte
			s = s[2:]
		default:
			s = s[1:]
		}
		i = strings.IndexByte(s, 0x1b)
	}
	b.WriteString(s)
	return b.String()
}

// Accepts reports whether something accepts connections on the port, on
// 127.0.0.1 or ::1.
func Accepts(port int) bool {
	for _, host := range []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()} {
		c, err := sock.DialTCP(netip.AddrPortFrom(host, uint16(port)), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return true
		}
	}
	return false
}

// HTTP reports whether url answers an HTTP request at all, whatever
// the status. It speaks just enough HTTP/1.0 for that (net/http would
// double the monitor's size); for https, that a TLS server answers. The
// request is HEAD, and the answer is read to its end, so the server
// sends no body and sees a polite client, not a reset connection.
func HTTP(rawURL string) bool { return answersHTTP(rawURL, 2*time.Second) }

// ProbeRequestLine is the request svc's HTTP probe sends, less its path:
// a server that logs it (with the Host it was sent to) is echoing svc,
// not saying where it listens.
const ProbeRequestLine = "HEAD / HTTP/1.0"

// answersHTTP is HTTP with a deadline for the answer.
func answersHTTP(rawURL string, wait time.Duration) bool {
	u, err := neturl.Parse(rawURL)
	if err != nil || u.Host == "" {
		return false
	}
	port := 80
	if u.Scheme == "https" {
		port = 443
	}
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil || port < 1 || port > 65535 {
			return false
		}
	}
	c, err := sock.DialHost(u.Hostname(), uint16(port), time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	if u.Scheme == "https" {
		return tlsAnswers(c, u.Hostname())
	}
	c.SetDeadline(time.Now().Add(wait))
	path := u.RequestURI()
	if _, err := fmt.Fprintf(c, "HEAD %s HTTP/1.0\r\nHost: %s\r\nConnection: close\r\n\r\n", path, u.Host); err != nil {
		return false
	}
	buf := make([]byte, 5)
	n, _ := io.ReadFull(c, buf)
	if n < 5 || string(buf) != "HTTP/" {
		return false
	}
	c.SetDeadline(time.Now().Add(200 * time.Millisecond))
	_, _ = io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	return true
}

// holds reports whether pid has one of the socket inodes open.
func holds(pid int, inodes map[uint64]bool) bool {
	for _, ino := range sockdiag.SocketInodes(pid) {
		if inodes[ino] {
			return true
		}
	}
	return false
}

// PortOwner says who listens on port: whether it is a process of the
// service's tree (root's descendants and group pgid, but for what spare
// leaves out: another service's tree inside it), and otherwise which
// process holds it, as "pid 812 (node)"; "" when nobody visible does.
func PortOwner(port, root, pgid int, spare proc.Spare) (ours bool, holder string) {
	inodes := sockdiag.ListeningInodes(port)
	if len(inodes) == 0 {
		return false, ""
	}
	// Fast path: the server is most often the service's leader or one of
	// its first descendants; look there before reading every process.
	near := []int{pgid}
	for i := 0; i < len(near) && i < 16; i++ {
		if holds(near[i], inodes) {
			return true, ""
		}
		near = append(near, proc.ChildrenSparing(near[i], spare)...)
	}
	for _, p := range proc.TreeSparing(root, pgid, spare) {
		if holds(p.PID, inodes) {
			return true, ""
		}
	}
	for _, p := range proc.All() {
		if holds(p.PID, inodes) {
			return false, fmt.Sprintf("pid %d (%s)", p.PID, p.Comm)
		}
	}
	return false, "a process svc cannot see"
}

// PortHolder names the process listening on port ("pid 812 (node)"), ""
// when nothing listens there, and "a process svc cannot see" when
// something does but not a process visible here.
func PortHolder(port int) string {
	inodes := sockdiag.ListeningInodes(port)
	if len(inodes) == 0 {
		return ""
	}
	for _, p := range proc.All() {
		if holds(p.PID, inodes) {
			return fmt.Sprintf("pid %d (%s)", p.PID, p.Comm)
		}
	}
	return "a process svc cannot see"
}

// Holders are the processes listening on port that svc can see (a
// socket a parent and its forked workers share is each one's); listening
// is false when nothing listens there at all.
func Holders(port int) (ps []proc.Info, listening bool) {
	inodes := sockdiag.ListeningInodes(port)
	if len(inodes) == 0 {
		return nil, false
	}
	for _, p := range proc.All() {
		if holds(p.PID, inodes) {
			ps = append(ps, p)
		}
	}
	return ps, true
}
