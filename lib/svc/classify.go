package svc

import (
	"path/filepath"
	"slices"
	"strings"
)

// LooksLongRunning tells, from a command line alone, whether it starts
// something that does not exit on its own: a dev server, a watcher, a
// database, tail -f. svc run --background auto starts those as services.
// It looks at the last command of a && or ; chain, past environment
// assignments and wrappers such as npx and bundle exec.
func LooksLongRunning(command string) bool {
	words := lastCommand(command)
	if len(words) == 0 {
		return false
	}
	prog := filepath.Base(words[0])
	args := words[1:]
	has := func(flags ...string) bool {
		for _, a := range args {
			for _, f := range flags {
				if a == f || strings.HasPrefix(a, f+"=") {
					return true
				}
			}
		}
		return false
	}
	first := ""
	if len(args) > 0 {
		first = args[0]
	}
	switch prog {
	case "npm", "pnpm", "yarn", "bun":
		script := first
		if script == "run" && len(args) > 1 {
			script = args[1]
		}
		switch script {
		case "dev", "start", "serve", "watch", "develop", "preview":
			return true
		}
		return false
	case "vite":
		return first != "build" && first != "optimize"
	case "next", "nuxt", "nuxi", "astro", "remix", "svelte-kit":
		return first == "dev" || first == "start" || first == "preview"
	case "webpack":
		return first == "serve" || has("--watch", "-w")
	case "webpack-dev-server", "nodemon", "live-server", "http-server", "serve", "browser-sync",
		"uvicorn", "gunicorn", "hypercorn", "redis-server", "postgres", "mongod", "mysqld", "memcached", "nginx":
		return !(prog == "nginx" && has("-t", "-s"))
	case "tsc", "jest", "mocha", "esbuild", "rollup", "babel", "tailwindcss", "sass":
		return has("--watch", "-w", "--watchAll", "--serve")
	case "vitest":
		return first != "run" && !has("--run")
	case "python", "python3":
		return len(args) >= 2 && args[0] == "-m" && (args[1] == "http.server" || args[1] == "uvicorn" || args[1] == "flask" && has("run"))
	case "flask":
		return first == "run"
	case "rails":
		return first == "s" || first == "server"
	case "php":
		return has("-S")
	case "hugo":
		return first == "server" || first == "serve"
	case "jekyll":
		return first == "serve" || first == "s"
	case "docker", "podman":
		if first == "compose" && len(args) > 1 && args[1] == "up" {
			return !has("-d", "--detach")
		}
		// docker run is a one-shot as often as a server: not guessed.
		return false
	case "docker-compose", "podman-compose":
		return first == "up" && !has("-d", "--detach")
	case "tail", "journalctl":
		return has("-f", "-F", "--follow")
	case "watch", "watchexec", "entr", "air", "reflex":
		return true
	case "go":
		return false
	case "cargo":
		return first == "watch"
	}
	return false
}

// lastCommand returns the words of the last command of a line — the first
// of its last pipeline, quotes removed — past environment assignments and
// wrappers (npx, bunx, exec, bundle exec).
func lastCommand(command string) []string {
	return skipWrappers(lastPipelineHead(command))
}

// skipWrappers drops what runs a command without being it: environment
// assignments, and wrappers with their options (npx -y, env -i, bundle
// exec, uv run).
func skipWrappers(words []string) []string {
	for len(words) > 0 {
		w := words[0]
		switch {
		case strings.Contains(w, "=") && !strings.HasPrefix(w, "-"):
			words = words[1:] // FOO=bar
		case w == "npx" || w == "bunx" || w == "exec" || w == "env" || w == "time" || w == "nohup" || w == "pnpx":
			words = skipOptions(words[1:], "-p", "--package")
		case w == "bundle" && len(words) > 1 && words[1] == "exec":
			words = words[2:]
		case w == "poetry" && len(words) > 1 && words[1] == "run", w == "uv" && len(words) > 1 && words[1] == "run", w == "pipenv" && len(words) > 1 && words[1] == "run":
			words = words[2:]
		default:
			return words
		}
	}
	return nil
}

// skipOptions drops the options at the start of words; those named in
// withValue take the next word as their value.
func skipOptions(words []string, withValue ...string) []string {
	for len(words) > 0 && strings.HasPrefix(words[0], "-") {
		if words[0] == "--" {
			return words[1:]
		}
		if slices.Contains(withValue, words[0]) && len(words) > 1 {
			words = words[1:]
		}
		words = words[1:]
	}
	return words
}
