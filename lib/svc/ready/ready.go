// Package ready is how svc knows a service is ready: the endpoints a
// server prints (a URL, a host:port, "port N"), probes of a port, an HTTP
// URL and a TLS server, and whether a listening port belongs to the
// service's own process tree or to someone else.
package ready

import (
	"fmt"
	"io"
	"net"
	neturl "net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/sockdiag"
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

// Endpoint is a place a service said it listens.
type Endpoint struct {
	URL  string
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
		return Endpoint{URL: url, Port: port}, port < 65536
	}
	for _, re := range []*regexp.Regexp{hostPortRE(), portRE()} {
		if m := re.FindStringSubmatch(line); m != nil {
			port, _ := strconv.Atoi(m[1])
			if port > 0 && port < 65536 {
				return Endpoint{URL: fmt.Sprintf("http://localhost:%d", port), Port: port}, true
			}
		}
	}
	return Endpoint{}, false
}

// Accepts reports whether something accepts connections on the port, on
// 127.0.0.1 or ::1.
func Accepts(port int) bool {
	for _, host := range []string{"127.0.0.1", "::1"} {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(port)), 200*time.Millisecond)
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
	host := u.Host
	if u.Port() == "" {
		if u.Scheme == "https" {
			host = net.JoinHostPort(u.Hostname(), "443")
		} else {
			host = net.JoinHostPort(u.Hostname(), "80")
		}
	}
	c, err := net.DialTimeout("tcp", host, time.Second)
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
// service's tree (root's descendants and group pgid), and otherwise which
// process holds it, as "pid 812 (node)"; "" when nobody visible does.
func PortOwner(port, root, pgid int) (ours bool, holder string) {
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
		near = append(near, proc.Children(near[i])...)
	}
	for _, p := range proc.Tree(root, pgid) {
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
