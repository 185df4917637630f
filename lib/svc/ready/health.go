package ready

import (
	"bufio"
	"errors"
	"fmt"
	"net/netip"
	neturl "net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/agentry/agentry/lib/svc/sock"
)

// The ways a health probe fails, besides the system's own errors (a
// connection refused).
var (
	ErrProbeTimeout = errors.New("no answer in time")
	ErrNotHTTP      = errors.New("not an HTTP answer")
)

// StatusError is an HTTP answer other than 2xx or 3xx.
type StatusError struct{ Code int }

func (e *StatusError) Error() string { return fmt.Sprintf("HTTP status %d", e.Code) }

// CheckHTTP is one health probe of url: a GET (HTTP/1.0, as HTTP does
// it, no net/http) that must be answered 2xx or 3xx within timeout, the
// connection included. Only the status line is read. An https URL is
// healthy when a TLS server answers.
func CheckHTTP(rawURL string, timeout time.Duration) error {
	u, err := neturl.Parse(rawURL)
	if err != nil || u.Host == "" {
		return ErrNotHTTP
	}
	port := 80
	if u.Scheme == "https" {
		port = 443
	}
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil || port < 1 || port > 65535 {
			return ErrNotHTTP
		}
	}
	deadline := time.Now().Add(timeout)
	c, err := sock.DialHost(u.Hostname(), uint16(port), timeout)
	if err != nil {
		return timedOut(err)
	}
	defer c.Close()
	c.SetDeadline(deadline)
	if u.Scheme == "https" {
		if !tlsAnswers(c, u.Hostname()) {
			return ErrNotHTTP
		}
		return nil
	}
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.0\r\nHost: %s\r\nUser-Agent: svc-health\r\nConnection: close\r\n\r\n", u.RequestURI(), u.Host); err != nil {
		return timedOut(err)
	}
	line, err := bufio.NewReaderSize(c, 256).ReadString('\n')
	if err != nil && line == "" {
		return timedOut(err)
	}
	f := strings.Fields(line)
	if len(f) < 2 || !strings.HasPrefix(f[0], "HTTP/") {
		return ErrNotHTTP
	}
	code, err := strconv.Atoi(f[1])
	if err != nil {
		return ErrNotHTTP
	}
	if code < 200 || code > 399 {
		return &StatusError{Code: code}
	}
	return nil
}

// CheckPort is one health probe of a port: it accepts a connection on
// 127.0.0.1 or ::1 within timeout.
func CheckPort(port int, timeout time.Duration) error {
	var err error
	for _, host := range []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()} {
		var c *os.File
		if c, err = sock.DialTCP(netip.AddrPortFrom(host, uint16(port)), timeout); err == nil {
			c.Close()
			return nil
		}
	}
	return timedOut(err)
}

func timedOut(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return ErrProbeTimeout
	}
	return err
}
