package ready

import "testing"

// A URL is taken as printed, with a wildcard host put as loopback; a
// host:port or "port N" names a port and nothing of its protocol.
func TestFindEndpoint(t *testing.T) {
	cases := []struct {
		line string
		url  string
		port int
	}{
		{"  ➜  Local:   http://localhost:5173/", "http://localhost:5173/", 5173},
		{"Listening on 127.0.0.1:8080", "", 8080},
		{"server started at [::]:3000", "", 3000},
		{"listening on port 4000", "", 4000},
		{"Serving HTTP on 0.0.0.0 port 8000 (http://0.0.0.0:8000/) ...", "http://127.0.0.1:8000/", 8000},
		{"  ➜  Network: http://0.0.0.0:5173/app/", "http://127.0.0.1:5173/app/", 5173},
		{"Listening on http://[::]:4000", "http://[::1]:4000", 4000},
		{"see http://0.0.0.0.example.com:81/", "http://0.0.0.0.example.com:81/", 81},
		{"ready - started server on 0.0.0.0:3001, url: http://localhost:3001", "http://localhost:3001", 3001},
		{"Port: 9229", "", 9229},
		{`LOG:  listening on IPv4 address "127.0.0.1", port 5433`, "", 5433},
		{"https://example.dev:8443/path.", "https://example.dev:8443/path", 8443},
	}
	for _, c := range cases {
		ep, ok := FindEndpoint(c.line)
		if !ok || ep.Port != c.port || ep.URL != c.url {
			t.Errorf("FindEndpoint(%q) = %+v, %v; want %q %d", c.line, ep, ok, c.url, c.port)
		}
	}
	for _, line := range []string{"compiled 12 files in 3.2s", "time: 12:30:45", "port", "error: 99999 things"} {
		if ep, ok := FindEndpoint(line); ok {
			t.Errorf("FindEndpoint(%q) found %+v", line, ep)
		}
	}
}

func TestStripANSI(t *testing.T) {
	cases := map[string]string{
		"plain": "plain",
		"\x1b[32m➜\x1b[39m  \x1b[1mLocal\x1b[22m:   \x1b[36mhttp://localhost:\x1b[1m5173\x1b[22m/\x1b[39m": "➜  Local:   http://localhost:5173/",
		"\x1b]8;;http://x/\x07link\x1b]8;;\x07": "link",
		"\x1b]0;title\x1b\\after":               "after",
		"\x1b(Bx\x1b[":                          "x",
		"cut\x1b":                               "cut",
	}
	for in, want := range cases {
		if got := StripANSI(in); got != want {
			t.Errorf("StripANSI(%q) = %q, want %q", in, got, want)
		}
	}
}
