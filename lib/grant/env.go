package grant

import (
	"bufio"
	"path"
	"strings"
)

// baseEnv is what every agent gets in a clean environment: what a
// program needs to run at all, and to reach its API through a proxy.
var baseEnv = []string{"PATH", "HOME", "LANG", "LC_*", "TERM", "TMPDIR",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy"}

// ownEnv are each agent's own variables: its credentials and settings.
var ownEnv = map[string][]string{
	Claude: {"ANTHROPIC_*", "CLAUDE_*", "DISABLE_AUTOUPDATER"},
	Codex:  {"OPENAI_*", "CODEX_*"},
}

// EnvAllowed is what a clean environment passes for harness: the base,
// the agent's own variables, and allow (names or globs such as "GO*").
func EnvAllowed(harness string, allow []string) []string {
	return append(append(append([]string(nil), baseEnv...), ownEnv[harness]...), allow...)
}

// GitGuard is env with git told to take a bare repository only where one
// is named (--git-dir, GIT_DIR): safe.bareRepository=explicit, given as
// configuration of the command line (GIT_CONFIG_PARAMETERS, after what
// the environment gives there already, and read after GIT_CONFIG_COUNT's,
// so that it is the last word), which a repository's own settings cannot
// undo. An agent that may write files in the working copy could otherwise
// write a bare repository's HEAD, objects, refs and a config naming a
// program (core.fsmonitor), and have a git status a policy allows run it
// with git -C DIR. Every agent's environment is given it. (Not
// GIT_CONFIG_COUNT: a codex shell policy that drops variables named like
// *KEY* would keep the count without its GIT_CONFIG_KEY_0, and git would
// refuse every command.)
func GitGuard(env []string) []string {
	const guard = "'safe.bareRepository=explicit'"
	params := ""
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GIT_CONFIG_PARAMETERS="); ok {
			params = v
			continue
		}
		out = append(out, kv)
	}
	if params = strings.TrimSpace(params); params != "" {
		params += " "
	}
	return append(out, "GIT_CONFIG_PARAMETERS="+params+guard)
}

// FilterEnv splits env by the patterns: what is passed, and the names of
// what is not.
func FilterEnv(env, patterns []string) (kept []string, dropped []string) {
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if matchAny(name, patterns) {
			kept = append(kept, kv)
		} else {
			dropped = append(dropped, name)
		}
	}
	return kept, dropped
}

func matchAny(name string, patterns []string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// CodexEnvKeys are the variables a codex config.toml names as its model
// providers' keys (env_key = "NAME"): a clean environment passes them too.
func CodexEnvKeys(config string) []string {
	var keys []string
	sc := bufio.NewScanner(strings.NewReader(config))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok || strings.TrimSpace(k) != "env_key" {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		if v != "" {
			keys = append(keys, v)
		}
	}
	return keys
}
