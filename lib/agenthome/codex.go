// Package agenthome makes what an agent CLI needs on disk: a private
// directory for one run, named for the process that owns it and swept
// once that process is gone (a scratch directory, a CODEX_HOME), and
// codex's home with a grant's configuration, kept per configuration
// or made for one run.
package agenthome

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentry/agentry/lib/atomicfile"
	"github.com/agentry/agentry/lib/grant"
	"github.com/agentry/agentry/lib/proc"
)

// CodexSource says where the user's codex setup is.
type CodexSource struct {
	// Home is the user's CODEX_HOME (default ~/.codex).
	Home string
	// Config is a config.toml to take the provider settings from instead
	// of Home's (--codex-config).
	Config string
	// Sessions is where codex threads are kept between runs, so that a
	// later run can resume one (default $XDG_STATE_HOME/runagent/codex-sessions).
	Sessions string
	// Keep: a CODEX_HOME is kept per configuration, in
	// $XDG_STATE_HOME/runagent/codex-homes, and reused by every later run
	// with the same configuration and no MCP server of its own (runagent);
	// see CodexHome.Kept. Otherwise every run gets a fresh one (agent-host).
	Keep bool
	// Runs is where a fresh one is made (the zero value: found when
	// needed).
	Runs Runs
}

// Error is a home that could not be made, in words for the user: the
// run should not start.
type Error struct{ Reason string }

func (e *Error) Error() string { return e.Reason }

// ErrNotSignedIn is PrepareCodex's error when codex has nothing to sign in
// with: no credential, no model provider in the configuration, no API key
// in the environment. Each face says how its user gives one.
var ErrNotSignedIn = errors.New("codex is not signed in on this machine (no credential and no model provider)")

// CodexHome is a run's CODEX_HOME.
type CodexHome struct {
	Dir string
	// Kept: Dir is a kept home that the run must not remove. Codex
	// initialises half a dozen sqlite databases in a new home, which cost
	// a run about 200 ms on the bench machine; a kept home pays it once.
	Kept bool
}

// Remove removes a home that is not kept.
func (h CodexHome) Remove() {
	if !h.Kept && h.Dir != "" {
		os.RemoveAll(h.Dir)
	}
}

// keptHomeIdle is how long a kept home may go unused before a run removes it.
const keptHomeIdle = 30 * 24 * time.Hour

// PrepareCodex makes the run's CODEX_HOME: a config.toml with the
// user's provider settings and the grant's keys (which win), a copy of the
// user's credential when there is one, and the shared sessions directory.
// The caller removes it (Remove) when the run ends, however it ends.
func PrepareCodex(g *grant.Grant, src CodexSource, env []string) (CodexHome, error) {
	userHome := src.Home
	if userHome == "" {
		if h := lookup(env, "CODEX_HOME"); h != "" {
			userHome = h
		} else if home, err := os.UserHomeDir(); err == nil {
			userHome = filepath.Join(home, ".codex")
		}
	}
	configPath := src.Config
	if configPath == "" {
		configPath = filepath.Join(userHome, "config.toml")
	}
	userConfig, err := os.ReadFile(configPath)
	if err != nil && (src.Config != "" || !errors.Is(err, os.ErrNotExist)) {
		return CodexHome{}, &Error{"cannot read the codex configuration: " + proc.ErrnoName(err)}
	}
	auth, authErr := os.ReadFile(filepath.Join(userHome, "auth.json"))
	hasProvider := strings.Contains(string(userConfig), "model_provider")
	hasKey := lookup(env, "OPENAI_API_KEY") != "" || lookup(env, "CODEX_API_KEY") != ""
	if authErr != nil && !hasProvider && !hasKey {
		return CodexHome{}, ErrNotSignedIn
	}
	config := []byte(MergeCodexConfig(string(userConfig), g.CodexConfig))
	sessions := src.Sessions
	if sessions == "" {
		sessions = filepath.Join(stateDir(env), "codex-sessions")
	}
	if src.Keep && len(g.MCPServers) == 0 {
		return keptHome(filepath.Join(stateDir(env), "codex-homes"), config, auth, authErr == nil, sessions)
	}
	home := CodexHome{}
	if home.Dir, err = src.Runs.Dir(CodexPrefix); err != nil {
		return home, &Error{"could not make a CODEX_HOME: " + proc.ErrnoName(err)}
	}
	if err := fillHome(home.Dir, config, auth, authErr == nil, sessions); err != nil {
		home.Remove()
		return CodexHome{}, err
	}
	return home, nil
}

// keptHome is the kept CODEX_HOME for this configuration under homes,
// named for the digest of its configuration and sessions directory, brought up to date with the user's credential
// (a copy that the user has since removed is removed), and stamped as
// used; kept homes unused for a month are removed.
func keptHome(homes string, config, auth []byte, hasAuth bool, sessions string) (CodexHome, error) {
	sum := sha256.Sum256(append(append(config, 0), sessions...))
	home := CodexHome{Dir: filepath.Join(homes, hex.EncodeToString(sum[:8])), Kept: true}
	if err := os.MkdirAll(home.Dir, 0o700); err != nil {
		return CodexHome{}, &Error{"could not make a CODEX_HOME: " + proc.ErrnoName(err)}
	}
	if err := fillHome(home.Dir, config, auth, hasAuth, sessions); err != nil {
		return CodexHome{}, err
	}
	now := time.Now()
	_ = os.Chtimes(home.Dir, now, now)
	pruneHomes(homes, home.Dir, now)
	return home, nil
}

// fillHome writes config.toml and auth.json into dir where they differ
// from what is there (each by an atomic rename, so that a run sharing a
// kept home never reads half a file), and links the sessions directory.
func fillHome(dir string, config, auth []byte, hasAuth bool, sessions string) error {
	fail := func(err error) error { return &Error{"could not prepare CODEX_HOME: " + proc.ErrnoName(err)} }
	if err := writeIfChanged(filepath.Join(dir, "config.toml"), config); err != nil {
		return fail(err)
	}
	authPath := filepath.Join(dir, "auth.json")
	if hasAuth {
		if err := writeIfChanged(authPath, auth); err != nil {
			return fail(err)
		}
	} else if err := os.Remove(authPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fail(err)
	}
	if sessions == "" {
		return nil
	}
	link := filepath.Join(dir, "sessions")
	if cur, err := os.Readlink(link); err == nil && cur == sessions {
		return nil
	}
	if err := os.MkdirAll(sessions, 0o700); err == nil {
		os.Remove(link)
		_ = os.Symlink(sessions, link)
	}
	return nil
}

func writeIfChanged(path string, data []byte) error {
	if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, data) {
		return nil
	}
	return atomicfile.Write(path, data, 0o600)
}

// pruneHomes removes the kept homes under homes, other than keep, that no
// run has used for keptHomeIdle.
func pruneHomes(homes, keep string, now time.Time) {
	ents, _ := os.ReadDir(homes)
	for _, e := range ents {
		dir := filepath.Join(homes, e.Name())
		if !e.IsDir() || dir == keep {
			continue
		}
		if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > keptHomeIdle {
			os.RemoveAll(dir)
		}
	}
}

// stateDir is runagent's directory under $XDG_STATE_HOME.
func stateDir(env []string) string {
	state := lookup(env, "XDG_STATE_HOME")
	if state == "" {
		if h, err := os.UserHomeDir(); err == nil {
			state = filepath.Join(h, ".local", "state")
		}
	}
	return filepath.Join(state, "runagent")
}

// MergeCodexConfig keeps the user's configuration (their model provider,
// model and the like) but none of the tables or keys the grant owns —
// features, analytics, mcp_servers, sandbox settings, and any top-level
// key the grant sets — and adds the grant's: its top-level keys first
// (a key after a table header would be that table's), its tables last.
// TOML forbids a key twice, so dropping is how the grant wins.
func MergeCodexConfig(user, grantConfig string) string {
	head, tables := splitTopLevel(grantConfig)
	mine := []string{"features", "analytics", "mcp_servers", "sandbox_workspace_write", "sandbox_mode", "approval_policy", "profile", "profiles"}
	for _, line := range strings.Split(head, "\n") {
		if key, _, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(strings.TrimSpace(line), "#") {
			mine = append(mine, strings.TrimSpace(key))
		}
	}
	owned := func(name string) bool {
		for _, p := range mine {
			if name == p || strings.HasPrefix(name, p+".") {
				return true
			}
		}
		return false
	}
	var b strings.Builder
	b.WriteString(head)
	skipping := false
	for _, line := range strings.Split(user, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") {
			name := strings.Trim(strings.TrimSpace(strings.Trim(t, "[]")), " ")
			skipping = owned(name)
		} else if !skipping && t != "" && !strings.HasPrefix(t, "#") {
			if key, _, ok := strings.Cut(t, "="); ok && owned(strings.TrimSpace(key)) {
				continue
			}
		}
		if !skipping {
			b.WriteString(line)
			b.WriteString("\n")
		}
	}
	out := strings.TrimRight(b.String(), "\n")
	if out != "" {
		out += "\n\n"
	}
	return out + tables
}

// splitTopLevel splits a configuration the grant wrote at its first table
// header: its top-level keys (with their comments), and its tables.
func splitTopLevel(config string) (head, tables string) {
	if strings.HasPrefix(config, "[") {
		return "", config
	}
	if i := strings.Index(config, "\n["); i >= 0 {
		return config[:i+1], config[i+1:]
	}
	return config, ""
}

func lookup(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}
