package claude

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// probeMCP checks that an HTTP MCP server answers an initialize request.
// Servers of other types (stdio) are not probed.
//
// It speaks one HTTP/1.1 request over net.Dial rather than net/http:
// this package is linked into runagent, and net/http (with crypto/tls)
// costs every start of it some forty package inits. An https server is
// probed for a TCP connection only, which is what its absence shows.
func probeMCP(ctx context.Context, cfg json.RawMessage) error {
	typ, raw := gjson.GetBytes(cfg, "type").Str, gjson.GetBytes(cfg, "url").Str
	if raw == "" || (typ != "" && typ != "http" && typ != "sse") {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("bad url: %q", raw)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot connect: %v", err)
	}
	defer conn.Close()
	if u.Scheme == "https" {
		return nil
	}
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	code, err := postInitialize(conn, u)
	if err != nil {
		return fmt.Errorf("cannot connect: %v", err)
	}
	if code >= 400 {
		return fmt.Errorf("answered HTTP %d to initialize", code)
	}
	return nil
}

// postInitialize writes the MCP initialize request to conn and returns
// the status code of the answer.
func postInitialize(conn net.Conn, u *url.URL) (int, error) {
	const body = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"agent-host","version":"1"}}}`
	req := "POST " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host +
		"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream" +
		"\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\nConnection: close\r\n\r\n" + body
	if _, err := conn.Write([]byte(req)); err != nil {
		return 0, err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return 0, err
	}
	f := strings.Fields(line)
	if len(f) < 2 || !strings.HasPrefix(f[0], "HTTP/") {
		return 0, fmt.Errorf("not an HTTP answer: %q", strings.TrimSpace(line))
	}
	code, err := strconv.Atoi(f[1])
	if err != nil {
		return 0, fmt.Errorf("not an HTTP answer: %q", strings.TrimSpace(line))
	}
	return code, nil
}
