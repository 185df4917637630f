package agenthome

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/grant"
)

// codexUser is a user's codex setup: a provider in config.toml and a
// credential, under a state home of its own.
func codexUser(t *testing.T) (user string, env []string) {
	user = t.TempDir()
	os.WriteFile(filepath.Join(user, "config.toml"), []byte("model_provider = \"fake\"\n"), 0o600)
	os.WriteFile(filepath.Join(user, "auth.json"), []byte(`{"token":"one"}`), 0o600)
	return user, []string{"CODEX_HOME=" + user, "XDG_STATE_HOME=" + t.TempDir()}
}

func codexGrant(t *testing.T, o grant.Options) *grant.Grant {
	o.Harness = grant.Codex
	if o.Level == 0 {
		o.Level = 1
	}
	g, err := grant.For(o)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestKeptCodexHome(t *testing.T) {
	user, env := codexUser(t)
	g := codexGrant(t, grant.Options{})
	first, err := PrepareCodex(g, CodexSource{Keep: true}, env)
	if err != nil || !first.Kept {
		t.Fatalf("first: %+v %v", first, err)
	}
	os.WriteFile(filepath.Join(first.Dir, "state_5.sqlite"), []byte("codex's own"), 0o600)
	first.Remove()
	again, err := PrepareCodex(g, CodexSource{Keep: true}, env)
	if err != nil || again.Dir != first.Dir {
		t.Fatalf("the same configuration got another home: %s then %s (%v)", first.Dir, again.Dir, err)
	}
	if b, _ := os.ReadFile(filepath.Join(again.Dir, "state_5.sqlite")); string(b) != "codex's own" {
		t.Error("what codex keeps in its home did not survive the run")
	}
	if fi, _ := os.Stat(again.Dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("home mode %v, want 0700", fi.Mode().Perm())
	}
	cfg, _ := os.ReadFile(filepath.Join(again.Dir, "config.toml"))
	if !strings.Contains(string(cfg), `model_provider = "fake"`) || !strings.Contains(string(cfg), "multi_agent = false") {
		t.Errorf("config.toml:\n%s", cfg)
	}

	// The credential follows the user's: a new one is copied, a removed
	// one is removed.
	os.WriteFile(filepath.Join(user, "auth.json"), []byte(`{"token":"two"}`), 0o600)
	PrepareCodex(g, CodexSource{Keep: true}, env)
	if b, _ := os.ReadFile(filepath.Join(again.Dir, "auth.json")); string(b) != `{"token":"two"}` {
		t.Errorf("auth.json %q after the user's changed", b)
	}
	os.Remove(filepath.Join(user, "auth.json"))
	PrepareCodex(g, CodexSource{Keep: true}, env)
	if _, err := os.Stat(filepath.Join(again.Dir, "auth.json")); !os.IsNotExist(err) {
		t.Error("a credential the user removed is still in the kept home")
	}

	// Another configuration, another home; one unused for a month goes.
	os.WriteFile(filepath.Join(user, "config.toml"), []byte("model_provider = \"other\"\n"), 0o600)
	other, err := PrepareCodex(g, CodexSource{Keep: true}, env)
	if err != nil || other.Dir == first.Dir || filepath.Dir(other.Dir) != filepath.Dir(first.Dir) {
		t.Fatalf("another configuration's home %s beside %s (%v)", other.Dir, first.Dir, err)
	}
	old := time.Now().Add(-keptHomeIdle - time.Hour)
	os.Chtimes(first.Dir, old, old)
	PrepareCodex(g, CodexSource{Keep: true}, env)
	if _, err := os.Stat(first.Dir); !os.IsNotExist(err) {
		t.Error("a kept home unused for over a month was not removed")
	}
}

func TestFreshCodexHome(t *testing.T) {
	_, env := codexUser(t)
	// agent-host keeps nothing; a run with MCP servers of its own (a port
	// that changes every run) gets a fresh home even when keeping.
	for _, c := range []struct {
		name string
		g    *grant.Grant
		src  CodexSource
	}{
		{"not kept", codexGrant(t, grant.Options{}), CodexSource{}},
		{"own MCP server", codexGrant(t, grant.Options{ToolsURL: "http://127.0.0.1:1/mcp"}), CodexSource{Keep: true}},
	} {
		h, err := PrepareCodex(c.g, c.src, env)
		if err != nil || h.Kept {
			t.Fatalf("%s: %+v %v", c.name, h, err)
		}
		if _, err := os.Stat(filepath.Join(h.Dir, "auth.json")); err != nil {
			t.Errorf("%s: no credential copied: %v", c.name, err)
		}
		h.Remove()
		if _, err := os.Stat(h.Dir); !os.IsNotExist(err) {
			t.Errorf("%s: a fresh home outlived Remove", c.name)
		}
	}
}
