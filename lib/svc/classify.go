package svc

import (
	"path/filepath"
	"slices"
	"strings"
)

// Kind is what a command line starts, as far as it tells by itself.
type Kind int

const (
	// OneShot is a command that exits on its own, or one svc cannot tell.
	OneShot Kind = iota
	// Server serves clients on a port: a dev server, a database, a
	// server restarted on changes (nodemon).
	Server
	// Watcher runs until stopped without serving anything: tail -f, a
	// build in watch mode, a queue worker.
	Watcher
)

// LooksLongRunning tells, from a command line alone, whether it starts
// something that does not exit on its own: a server or a watcher. svc
// run --background auto starts those as services.
func LooksLongRunning(command string) bool { return Classify(command) != OneShot }

// Classify tells, from a command line alone, what it starts. It looks at
// the last command of a && or ; chain, past environment assignments and
// wrappers such as npx and bundle exec.
func Classify(command string) Kind {
	words := lastCommand(command)
	if len(words) == 0 {
		return OneShot
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
	either := func(long bool, k Kind) Kind {
		if long {
			return k
		}
		return OneShot
	}
	switch prog {
	case "npm", "pnpm", "yarn", "bun":
		script := first
		if script == "run" && len(args) > 1 {
			script = args[1]
		}
		switch script {
		case "dev", "start", "serve", "develop", "preview":
			return Server
		case "watch":
			return Watcher
		}
		return OneShot
	case "vite":
		return either(first != "build" && first != "optimize", Server)
	case "next", "nuxt", "nuxi", "astro", "remix", "svelte-kit":
		return either(first == "dev" || first == "start" || first == "preview", Server)
	case "webpack":
		if first == "serve" {
			return Server
		}
		return either(has("--watch", "-w"), Watcher)
	case "webpack-dev-server", "nodemon", "live-server", "http-server", "serve", "browser-sync",
		"uvicorn", "gunicorn", "hypercorn", "daphne", "redis-server", "postgres", "mongod", "mysqld", "mariadbd", "memcached":
		return Server
	case "nginx":
		return either(!has("-t", "-s"), Server)
	case "esbuild":
		if has("--serve") {
			return Server
		}
		return either(has("--watch"), Watcher)
	case "tsc", "jest", "mocha", "rollup", "babel", "tailwindcss", "sass", "coffee":
		return either(has("--watch", "-w", "--watchAll"), Watcher)
	case "vitest":
		return either(first != "run" && !has("--run"), Watcher)
	case "python", "python3":
		return python(args, has("run"))
	case "flask":
		return either(first == "run", Server)
	case "celery":
		return either(slices.Contains(args, "worker") || slices.Contains(args, "beat"), Watcher)
	case "sidekiq", "rqworker", "dramatiq", "huey_consumer", "huey_consumer.py":
		return Watcher
	case "rq":
		return either(first == "worker", Watcher)
	case "rails":
		return either(first == "s" || first == "server", Server)
	case "php":
		if has("-S") {
			return Server
		}
		return either(first == "artisan" && len(args) > 1 && (args[1] == "queue:work" || args[1] == "queue:listen"), Watcher)
	case "hugo":
		return either(first == "server" || first == "serve", Server)
	case "jekyll":
		return either(first == "serve" || first == "s", Server)
	case "docker", "podman":
		if first == "compose" && len(args) > 1 && args[1] == "up" {
			return either(!has("-d", "--detach"), Server)
		}
		// docker run is a one-shot as often as a server: not guessed.
		return OneShot
	case "docker-compose", "podman-compose":
		return either(first == "up" && !has("-d", "--detach"), Server)
	case "tail", "journalctl":
		return either(has("-f", "-F", "--follow"), Watcher)
	case "inotifywait":
		return either(has("-m", "--monitor"), Watcher)
	case "watch", "watchexec", "entr", "reflex", "fswatch":
		return Watcher
	case "air":
		return Server // a Go server rebuilt on changes
	case "cargo":
		return either(first == "watch", Watcher)
	}
	return OneShot
}

// python classifies python's arguments: a module that serves, a queue
// worker, or a Django management command that does either.
func python(args []string, run bool) Kind {
	if len(args) >= 2 && args[0] == "-m" {
		switch args[1] {
		case "http.server", "uvicorn", "gunicorn", "hypercorn", "daphne":
			return Server
		case "flask":
			if run {
				return Server
			}
		case "celery":
			if slices.Contains(args, "worker") || slices.Contains(args, "beat") {
				return Watcher
			}
		case "rq":
			if len(args) > 2 && args[2] == "worker" {
				return Watcher
			}
		}
		return OneShot
	}
	if len(args) >= 2 && filepath.Base(args[0]) == "manage.py" {
		switch args[1] {
		case "runserver":
			return Server
		case "rqworker", "celery", "qcluster", "process_tasks":
			return Watcher
		}
	}
	return OneShot
}

// lastCommand returns the words of the last command of a line — the first
// of its last pipeline, quotes removed — past environment assignments and
// wrappers (npx, bunx, exec, sh -c, bundle exec).
func lastCommand(command string) []string {
	return skipWrappers(lastPipelineHead(command))
}

// skipWrappers drops what runs a command without being it: environment
// assignments, wrappers with their options (npx -y, env -i, bundle exec,
// uv run), and a shell's -c, for the command in its string.
func skipWrappers(words []string) []string {
	for len(words) > 0 {
		w := words[0]
		switch {
		case strings.Contains(w, "=") && !strings.HasPrefix(w, "-"):
			words = words[1:] // FOO=bar
		case w == "npx" || w == "bunx" || w == "exec" || w == "env" || w == "time" || w == "nohup" || w == "pnpx":
			words = skipOptions(words[1:], "-p", "--package")
		case (w == "sh" || w == "bash" || w == "dash" || w == "zsh") && len(words) > 2 && words[1] == "-c":
			words = lastPipelineHead(words[2]) // sh -c 'tail -f x.log': shorter each time
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
