package agentrun

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/grant"
	"github.com/agentry/agentry/lib/proc"
)

// A grant computed with ServicesPending gets the real URL where each
// harness takes it, and nowhere else: not in a prompt that happens to
// quote the placeholder.
func TestBindServices(t *testing.T) {
	s := &services{URL: "http://127.0.0.1:40123/mcp"}
	for _, h := range []string{grant.Claude, grant.Codex} {
		prompt := "see " + ServicesPending
		g, err := grant.For(grant.Options{Level: 2, Harness: h, ServicesURL: ServicesPending, AppendSystemPrompt: prompt})
		if err != nil {
			t.Fatal(err)
		}
		want, err := grant.For(grant.Options{Level: 2, Harness: h, ServicesURL: s.URL, AppendSystemPrompt: prompt})
		if err != nil {
			t.Fatal(err)
		}
		b := s.bind(g)
		if strings.Join(b.Argv, "\x00") != strings.Join(want.Argv, "\x00") || b.CodexConfig != want.CodexConfig {
			t.Errorf("%s: bound %q %q, want %q %q", h, b.Argv, b.CodexConfig, want.Argv, want.CodexConfig)
		}
		if !strings.Contains(strings.Join(g.Argv, " ")+g.CodexConfig, ServicesPending) {
			t.Errorf("%s: the grant bound was changed", h)
		}
	}
}

// A service's end reads as it always did: its exit among its fields, in
// their order.
func TestServiceEndJSON(t *testing.T) {
	code := 3
	b, _ := json.Marshal(ServiceEnd{Name: "web", Command: []string{"x"}, Port: 80, URL: "http://h/", Status: "exited",
		StoppedBy: "runagent", Ended: proc.Ended{ExitCode: &code, Signal: "SIGTERM"}, Tail: []string{"t"}})
	want := `{"name":"web","command":["x"],"port":80,"url":"http://h/","status":"exited","stoppedBy":"runagent","exitCode":3,"signal":"SIGTERM","tail":["t"]}`
	if string(b) != want {
		t.Errorf("%s\nwant %s", b, want)
	}
}
