package codex

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/protocol"
)

// codex with nothing to sign in with is said in the words of the
// backend's configuration, which has no flags, and nothing starts.
func TestNotSignedIn(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "codex")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\ntouch "+filepath.Join(dir, "started")+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	config, _ := json.Marshal(map[string]any{"codex": map[string]any{"program": prog, "workspace": dir}})
	env := []string{"HOME=" + dir, "CODEX_HOME=" + filepath.Join(dir, "nohome"), "XDG_STATE_HOME=" + filepath.Join(dir, "state"), "PATH=" + os.Getenv("PATH")}
	b, err := New(config, host.Env{Environ: env, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	want := "codex is not signed in on this machine (no credential and no model provider; run codex login, or set the codex configuration's configFile to a config.toml that names a model provider)"
	err = b.WarmSession(context.Background(), "c1")
	var e *protocol.ErrorInfo
	if !errors.As(err, &e) || e.Message != want {
		t.Fatalf("%#v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
		t.Error("codex was started")
	}
}
