package mcpserver

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// checkOrigin refuses, with 403 and a JSON-RPC error without an id, a
// request whose Origin header is not a loopback origin, as MCP's
// streamable HTTP transport requires of every server ("Servers MUST
// validate the Origin header on all incoming connections to prevent DNS
// rebinding attacks"): a web page whose name was rebound to 127.0.0.1
// sends its own origin. A request without Origin (a client that is not a
// browser) passes; so does a page served from this machine (http or
// https, localhost, 127.0.0.0/8 or [::1], any port), which is no remote
// site. The SDK's handler already refuses a Host that is not loopback.
func checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origins := r.Header.Values("Origin"); len(origins) > 0 && !(len(origins) == 1 && loopbackOrigin(origins[0])) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Forbidden: svc mcp answers only pages of this machine (a loopback Origin), or clients that send no Origin"}}` + "\n"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackOrigin tells whether an Origin header names a loopback origin.
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || (u.Path != "" && u.Path != "/") {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
