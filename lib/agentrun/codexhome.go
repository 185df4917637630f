package agentrun

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentry/agentry/lib/grant"
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
}

// PrepareCodexHome makes the run's own CODEX_HOME: a config.toml with the
// user's provider settings and the grant's keys (which win), a copy of the
// user's credential when there is one, and the shared sessions directory.
// The caller removes it when the run ends, however it ends.
func PrepareCodexHome(g *grant.Grant, src CodexSource, env []string) (string, error) {
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
		return "", &StartError{"cannot read the codex configuration: " + errnoName(err)}
	}
	auth, authErr := os.ReadFile(filepath.Join(userHome, "auth.json"))
	hasProvider := strings.Contains(string(userConfig), "model_provider")
	hasKey := lookup(env, "OPENAI_API_KEY") != "" || lookup(env, "CODEX_API_KEY") != ""
	if authErr != nil && !hasProvider && !hasKey {
		return "", &StartError{"codex is not signed in on this machine (no credential and no model provider; run codex login, or give --codex-config)"}
	}
	home, err := RunDir("runagent-codex")
	if err != nil {
		return "", &StartError{"could not make a CODEX_HOME: " + errnoName(err)}
	}
	fail := func(err error) (string, error) {
		os.RemoveAll(home)
		return "", &StartError{"could not prepare CODEX_HOME: " + errnoName(err)}
	}
	config := MergeCodexConfig(string(userConfig), g.CodexConfig)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o600); err != nil {
		return fail(err)
	}
	if authErr == nil {
		if err := os.WriteFile(filepath.Join(home, "auth.json"), auth, 0o600); err != nil {
			return fail(err)
		}
	}
	sessions := src.Sessions
	if sessions == "" {
		state := lookup(env, "XDG_STATE_HOME")
		if state == "" {
			if h, err := os.UserHomeDir(); err == nil {
				state = filepath.Join(h, ".local", "state")
			}
		}
		sessions = filepath.Join(state, "runagent", "codex-sessions")
	}
	if err := os.MkdirAll(sessions, 0o700); err == nil {
		_ = os.Symlink(sessions, filepath.Join(home, "sessions"))
	}
	return home, nil
}

// MergeCodexConfig keeps the user's configuration (their model provider,
// model and the like) but none of the tables or keys the grant owns —
// features, analytics, mcp_servers, sandbox settings — and adds the
// grant's. TOML forbids a key twice, so dropping is how the grant wins.
func MergeCodexConfig(user, grantConfig string) string {
	owned := func(name string) bool {
		for _, p := range []string{"features", "analytics", "mcp_servers", "sandbox_workspace_write", "sandbox_mode", "approval_policy", "profile", "profiles"} {
			if name == p || strings.HasPrefix(name, p+".") {
				return true
			}
		}
		return false
	}
	var b strings.Builder
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
	return out + grantConfig
}

func lookup(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}
