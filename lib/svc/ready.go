package svc

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/agentry/agentry/lib/proc"
)

// What a server prints when it listens, most telling first: a URL, a
// host:port, or "port N".
var (
	urlRE      = regexp.MustCompile(`(?i)https?://(?:\[[0-9a-f:]+\]|[a-z0-9.-]+)(?::(\d{2,5}))?[^\s"'<>]*`)
	hostPortRE = regexp.MustCompile(`(?i)(?:\b(?:localhost|\d{1,3}(?:\.\d{1,3}){3})|\[[0-9a-f:]*\]):(\d{2,5})\b`)
	portRE     = regexp.MustCompile(`(?i)\bport\s*:?\s*(\d{2,5})\b`)
)

// Endpoint is a place a service said it listens.
type Endpoint struct {
	URL  string
	Port int
}

// FindEndpoint looks for a URL or port in one line of output.
func FindEndpoint(line string) (Endpoint, bool) {
	if m := urlRE.FindStringSubmatch(line); m != nil {
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
	for _, re := range []*regexp.Regexp{hostPortRE, portRE} {
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

// HTTPReady reports whether url answers an HTTP request at all.
func HTTPReady(url string) bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

// listeners returns the socket inodes listening on port (TCP, v4 and v6).
func listeners(port int) map[string]bool {
	inodes := map[string]bool{}
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
			if err == nil && int(p) == port {
				inodes[fields[9]] = true
			}
		}
		f.Close()
	}
	return inodes
}

// holds reports whether pid has one of the socket inodes open.
func holds(pid int, inodes map[string]bool) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		link, err := os.Readlink(dir + "/" + e.Name())
		if err == nil && strings.HasPrefix(link, "socket:[") && inodes[link[8:len(link)-1]] {
			return true
		}
	}
	return false
}

// PortOwner says who listens on port: whether it is a process of the
// service's tree (root's descendants and group pgid), and otherwise which
// process holds it, as "pid 812 (node)"; "" when nobody visible does.
func PortOwner(port, root, pgid int) (ours bool, holder string) {
	inodes := listeners(port)
	if len(inodes) == 0 {
		return false, ""
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
