package cmdline

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
// something that does not exit on its own: a server, a watcher, or a
// loop that never ends by itself (while true; do …; done). svc run
// --background auto starts those as services.
func LooksLongRunning(command string) bool {
	words, endless := readLine(command)
	return endless || classifyCommand(words) != OneShot
}

// RunsAtOnce tells, from a command line alone, whether what it starts
// has nothing to be ready for: a watcher, or a loop that never ends by
// itself of commands known never to serve — the shell's plumbing, sleep,
// and the few tools a ticker or a poller runs (while true; do echo tick;
// sleep 0.5; done; while :; do curl -s URL; sleep 5; done). It is running
// from its start, and ready only if it listens later. A loop of a
// command svc does not know (while :; do node server.js; done) may serve,
// and is waited for as any command is.
func RunsAtOnce(command string) bool {
	words, endless := readLine(command)
	if classifyCommand(words) == Watcher {
		return true
	}
	return endless && (len(words) == 0 || neverServes(filepath.Base(words[0])))
}

// neverServes tells a program that never listens: the shell's plumbing,
// sleep, and tools that print, fetch or look and exit.
func neverServes(prog string) bool {
	switch prog {
	case "sleep", "date", "curl", "wget", "ping", "ls", "cat", "df", "du", "free", "uptime", "ps", "touch",
		"logger", "wc", "tee", "head", "tail", "grep", "find", "stat", "redis-cli", "psql", "mysql", "pg_isready":
		return true
	}
	return isPlumbing(prog)
}

// Classify tells, from a command line alone, what it starts. It looks at
// the command lastCommand finds (the last of a && or ; chain that is not
// shell plumbing, past environment assignments and wrappers such as npx,
// nice and bundle exec). A loop is what its command is: an endless loop
// of a command svc does not know may still serve (while :; do node
// server.js; done), so it is left to the monitor to find out.
func Classify(command string) Kind {
	return classifyCommand(lastCommand(command))
}

// classifyCommand tells what one command (past its wrappers) starts.
func classifyCommand(words []string) Kind {
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

// lastCommand returns the words of the command a line runs: of its
// pipelines, the last that is not only shell plumbing (cd, echo, wait,
// true, exit, set …; a sleep only when nothing else runs), its first
// command, quotes removed, past environment assignments and wrappers
// (npx, env, exec, nice, timeout, setpriv, sudo, sh -c …).
func lastCommand(line string) []string {
	words, _ := readLine(line)
	return words
}

// readLine is lastCommand, and whether the line (or the sh -c in it) has
// a loop that never ends by itself (while true, while :, until false).
func readLine(line string) (words []string, endless bool) {
	var pacer, plumbing []string
	cmds := shellCommands(line)
	for i := len(cmds) - 1; i >= 0; i-- {
		endless = endless || cmds[i].endless
		if !cmds[i].pipeStart {
			continue
		}
		w, e := unwrap(cmds[i].words)
		endless = endless || e
		switch {
		case len(w) == 0:
		case words != nil:
		case isPlumbing(w[0]):
			if plumbing == nil {
				plumbing = w
			}
		case filepath.Base(w[0]) == "sleep":
			if pacer == nil {
				pacer = w
			}
		default:
			words = w
		}
	}
	switch {
	case words != nil:
		return words, endless
	case pacer != nil:
		return pacer, endless
	}
	return plumbing, endless
}

// isPlumbing tells the shell's own commands, which set up, report or
// wait for what a line runs without being it.
func isPlumbing(prog string) bool {
	switch prog {
	case "wait", "true", "false", ":", "exit", "return", "set", "export", "unset", "cd", "pushd", "popd",
		"trap", "shift", "break", "continue", "echo", "printf", "[", "[[", "test", "local", "readonly",
		"declare", "typeset", "umask", "ulimit", "source", ".", "read", "exec", "kill":
		return true
	}
	return false
}

// skipWrappers drops what runs a command without being it: environment
// assignments, redirections, wrappers with their options (npx -y, env -i,
// nice -n 5, timeout 10, taskset -c 0, setpriv --reuid=…, sudo -u x,
// runuser -u x --, bundle exec, uv run), and a shell's -c, su's or
// runuser's -c, for the command in its string. A wrapper with no command
// after it is the command (sudo -i: sudo).
func skipWrappers(words []string) []string {
	w, _ := unwrap(words)
	return w
}

// unwrap is skipWrappers, and whether a shell line it read in a -c has a
// loop that never ends by itself.
func unwrap(words []string) ([]string, bool) {
	orig := words
	for len(words) > 0 {
		w := words[0]
		var next []string
		switch {
		case isRedirection(w):
			next = words[1:]
			if strings.TrimLeft(w, "0123456789<>&|-") == "" && len(next) > 0 {
				next = next[1:] // > file
			}
		case strings.Contains(w, "=") && !strings.HasPrefix(w, "-"):
			next = words[1:] // FOO=bar
		case w == "bundle" && len(words) > 1 && words[1] == "exec",
			(w == "poetry" || w == "uv" || w == "pipenv") && len(words) > 1 && words[1] == "run":
			next = words[2:]
		default:
			rest, line, ok := wrapped(words)
			switch {
			case !ok:
				return words, false
			case line != "":
				// sh -c 'tail -f x.log': shorter each time.
				if inner, endless := readLine(line); len(inner) > 0 {
					return inner, endless
				}
			}
			next = rest
		}
		if len(next) == 0 {
			break
		}
		words = next
	}
	// Nothing is left: the wrapper is the command (sudo -i, exec >log).
	if isRedirection(orig[0]) {
		return nil, false
	}
	return orig, false
}

// isRedirection tells a word that redirects (>log, 2>&1, <in, &>x).
func isRedirection(w string) bool {
	w = strings.TrimLeft(w, "0123456789")
	return strings.HasPrefix(w, ">") || strings.HasPrefix(w, "<") || strings.HasPrefix(w, "&>")
}

// wrapped reads words as a wrapper's: rest is the command it runs, past
// its options (those taking a value with it) and the words it takes
// before the command (timeout's duration, taskset's mask), or line is the
// shell line of its -c (sh -c, su -c, runuser -c). ok is false when
// words[0] is no wrapper, or one that runs no command (su user).
func wrapped(words []string) (rest []string, line string, ok bool) {
	prog, args := filepath.Base(words[0]), words[1:]
	switch prog {
	case "npx", "bunx", "pnpx":
		return skipOptions(args, "-p", "--package"), "", true
	case "exec":
		return skipOptions(args, "-a"), "", true
	case "env":
		return skipOptions(args, "-u", "--unset", "-C", "--chdir", "-S", "--split-string"), "", true
	case "time":
		return skipOptions(args, "-f", "--format", "-o", "--output"), "", true
	case "nohup", "setsid":
		return skipOptions(args), "", true
	case "tini", "dumb-init":
		return skipOptions(args, "-p", "-e", "-r", "--rewrite"), "", true
	case "nice":
		return skipOptions(args, "-n", "--adjustment"), "", true
	case "ionice":
		return skipOptions(args, "-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"), "", true
	case "chrt":
		rest = skipOptions(args, "-T", "-P", "-D", "--sched-runtime", "--sched-period", "--sched-deadline")
		if len(rest) > 0 && strings.Trim(rest[0], "0123456789") == "" {
			rest = rest[1:] // the priority
		}
		return rest, "", true
	case "taskset":
		return skipWords(skipOptions(args), 1), "", true // the mask or list
	case "timeout":
		return skipWords(skipOptions(args, "-s", "--signal", "-k", "--kill-after"), 1), "", true // the duration
	case "stdbuf":
		return skipOptions(args, "-i", "--input", "-o", "--output", "-e", "--error"), "", true
	case "setpriv":
		return skipOptions(args, "--ruid", "--euid", "--reuid", "--rgid", "--egid", "--regid", "--groups",
			"--inh-caps", "--ambient-caps", "--bounding-set", "--securebits", "--pdeathsig",
			"--selinux-label", "--apparmor-profile", "--landlock-access", "--landlock-rule", "--seccomp-filter"), "", true
	case "sudo":
		return skipOptions(args, "-u", "--user", "-g", "--group", "-C", "--close-from", "-D", "--chdir", "-h", "--host",
			"-p", "--prompt", "-r", "--role", "-t", "--type", "-U", "--other-user", "-T", "--command-timeout", "-R", "--chroot"), "", true
	case "doas":
		return skipOptions(args, "-u", "-C"), "", true
	case "su", "runuser":
		if c, ok := optionValue(args, "-c", "--command"); ok {
			return nil, c, true
		}
		if _, ok := optionValue(args, "-u", "--user"); ok && prog == "runuser" {
			return skipOptions(args, "-u", "--user", "-g", "--group", "-G", "--supp-group", "-s", "--shell", "-w", "--whitelist-environment"), "", true
		}
		return nil, "", false // a login shell
	case "sh", "bash", "dash", "zsh", "ksh", "ash":
		return shellC(args)
	}
	return nil, "", false
}

// shellC reads a shell's arguments: the line of its -c (bash -lc '…',
// sh -e -c '…'), else not a wrapper (sh start.sh runs a script).
func shellC(args []string) (rest []string, line string, ok bool) {
	c := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--rcfile" || a == "--init-file":
			i++
		case strings.HasPrefix(a, "--"):
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
			c = c || strings.Contains(a, "c")
			if strings.Contains(a, "o") || strings.Contains(a, "O") {
				i++ // -o pipefail
			}
		case c:
			return nil, a, true
		default:
			return nil, "", false
		}
	}
	return nil, "", false
}

// optionValue is the value of the first of the options names in args (up
// to a "--"), given as the next word or after '=' (--command=…).
func optionValue(args []string, names ...string) (string, bool) {
	for i, a := range args {
		if a == "--" {
			break
		}
		for _, n := range names {
			if a == n && i+1 < len(args) {
				return args[i+1], true
			}
			if v, ok := strings.CutPrefix(a, n+"="); ok && strings.HasPrefix(n, "--") {
				return v, true
			}
		}
	}
	return "", false
}

// skipWords drops n words from the start of words.
func skipWords(words []string, n int) []string {
	return words[min(n, len(words)):]
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
