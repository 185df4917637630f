package ready

import "testing"

func TestFindEndpoint(t *testing.T) {
	cases := []struct {
		line string
		url  string
		port int
	}{
		{"  ➜  Local:   http://localhost:5173/", "http://localhost:5173/", 5173},
		{"Listening on 127.0.0.1:8080", "http://localhost:8080", 8080},
		{"server started at [::]:3000", "http://localhost:3000", 3000},
		{"listening on port 4000", "http://localhost:4000", 4000},
		{"Serving HTTP on 0.0.0.0 port 8000 (http://0.0.0.0:8000/) ...", "http://0.0.0.0:8000/", 8000},
		{"ready - started server on 0.0.0.0:3001, url: http://localhost:3001", "http://localhost:3001", 3001},
		{"Port: 9229", "http://localhost:9229", 9229},
		{"https://example.dev:8443/path.", "https://example.dev:8443/path", 8443},
	}
	for _, c := range cases {
		ep, ok := FindEndpoint(c.line)
		if !ok || ep.Port != c.port || ep.URL != c.url {
			t.Errorf("FindEndpoint(%q) = %+v, %v; want %s %d", c.line, ep, ok, c.url, c.port)
		}
	}
	for _, line := range []string{"compiled 12 files in 3.2s", "time: 12:30:45", "port", "error: 99999 things"} {
		if ep, ok := FindEndpoint(line); ok {
			t.Errorf("FindEndpoint(%q) found %+v", line, ep)
		}
	}
}
