package agentrun

import (
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/grant"
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
