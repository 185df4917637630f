package claude

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentry/agentry/lib/host"
)

// A CLI whose --version prints nothing, or fails, is a version unknown,
// never a panic at hello.
func TestVersionUnknown(t *testing.T) {
	dir := t.TempDir()
	for _, script := range []string{"#!/bin/sh\n", "#!/bin/sh\nexit 3\n", "#!/bin/sh\necho '   '\n"} {
		prog := filepath.Join(dir, "claude")
		if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		config, _ := json.Marshal(map[string]any{"claude": map[string]any{"program": prog}})
		b, err := New(config, host.Env{Environ: os.Environ(), Stderr: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := b.Version(), "claude (version unknown)"; got != want {
			t.Errorf("script %q: Version() = %q, want %q", script, got, want)
		}
	}
}

// The CLI is asked its version once, however often the host asks (hello
// asks twice): each ask starts the whole CLI.
func TestVersionAskedOnce(t *testing.T) {
	dir := t.TempDir()
	prog, count := filepath.Join(dir, "claude"), filepath.Join(dir, "count")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\necho x >> '"+count+"'\necho '2.1.332 (Claude Code)'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	config, _ := json.Marshal(map[string]any{"claude": map[string]any{"program": prog}})
	b, err := New(config, host.Env{Environ: os.Environ(), Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if got := b.Version(); got != "claude 2.1.332" {
			t.Errorf("Version() = %q", got)
		}
	}
	if n, _ := os.ReadFile(count); string(n) != "x\n" {
		t.Errorf("claude --version ran %d times", len(n)/2)
	}
}
