package cmdline

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Ports are the TCP ports a command line names for what it starts to
// listen on, as far as its words tell, in the order they come: the value
// of --port N, --port=N or -p N; an address with a port and no scheme
// (:8000, 0.0.0.0:8000, localhost:8000, --bind=127.0.0.1:8000); the
// number python -m http.server and manage.py runserver take as their
// port; and PORT=N before a command (or env PORT=N). It reads the command
// past wrappers and sh -c, as Classify does. A client of another server
// (redis-cli -p, psql -p, curl) names none: its port is not its own.
// Read conservatively: a word that is only a number is a port only where
// the program takes one there.
func Ports(command string) []int {
	var out []int
	add := func(s string) {
		if p, err := strconv.Atoi(s); err == nil && p >= 1 && p <= 65535 && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, v := range portAssignments(command, 0) {
		add(v)
	}
	words := lastCommand(command)
	if len(words) == 0 || isClient(filepath.Base(words[0])) {
		return out
	}
	args := words[1:]
	for i, a := range args {
		next := ""
		if i+1 < len(args) {
			next = args[i+1]
		}
		name, value, eq := strings.Cut(a, "=")
		switch {
		case a == "--":
		case (a == "--port" || a == "-p") && next != "":
			add(next)
		case eq && name == "--port":
			add(value)
		case eq && strings.HasPrefix(name, "-"):
			if listenFlag(name) {
				add(addressPort(value))
			}
		case !strings.HasPrefix(a, "-"):
			// An address is the command's own after a flag that says
			// where to listen, or standing alone; after any other flag
			// (--redis 127.0.0.1:6379) it is one the command connects to.
			if i == 0 || !strings.HasPrefix(args[i-1], "-") || listenFlag(args[i-1]) {
				add(addressPort(a))
			}
		}
	}
	if p, ok := positionalPort(args); ok {
		add(p)
	}
	return out
}

// listenFlag reports whether a flag's value is where the command
// listens: -b/--bind (gunicorn), -S (php), -addr (Go's flag package),
// --listen, --web.listen-address and their kin.
func listenFlag(flag string) bool {
	name := strings.TrimLeft(flag, "-")
	switch name {
	case "b", "bind", "S", "addr", "address", "l", "listen", "http", "http-addr", "http-address":
		return true
	}
	return strings.HasSuffix(name, "listen-address") || strings.HasSuffix(name, "listen-addr")
}

// portAssignments are the values of PORT=N in the line's commands, and
// in the line of a sh -c among them (depth: how deep that is).
func portAssignments(line string, depth int) []string {
	var out []string
	for _, c := range shellCommands(line) {
		for i, w := range c.words {
			if v, ok := strings.CutPrefix(w, "PORT="); ok {
				out = append(out, v)
			}
			if !isShell(filepath.Base(w)) || depth >= 4 {
				continue
			}
			if _, inner, ok := shellC(c.words[i+1:]); ok {
				out = append(out, portAssignments(inner, depth+1)...)
			}
		}
	}
	return out
}

// addressPort is the port of an address without a scheme, host:port or
// :port, with a host a server binds to ("" when a is none): a word with
// "://" is a URL, which a client is given as often as a server.
func addressPort(a string) string {
	if strings.Contains(a, "://") {
		return ""
	}
	i := strings.LastIndexByte(a, ':')
	if i < 0 {
		return ""
	}
	host, port := a[:i], a[i+1:]
	switch strings.Trim(host, "[]") {
	case "", "localhost", "127.0.0.1", "0.0.0.0", "::", "::1", "*":
		return port
	}
	return ""
}

// positionalPort is the port a server takes as a bare argument:
// python -m http.server [PORT], manage.py runserver [[ADDR:]PORT].
func positionalPort(args []string) (string, bool) {
	for i, a := range args {
		var rest []string
		switch {
		case a == "http.server" && i > 0 && args[i-1] == "-m":
			rest = skipValues(args[i+1:], "-b", "--bind", "-d", "--directory", "--protocol", "-p")
		case a == "runserver" && i > 0 && filepath.Base(args[i-1]) == "manage.py":
			rest = args[i+1:]
		default:
			continue
		}
		for _, r := range rest {
			if !strings.HasPrefix(r, "-") && strings.Trim(r, "0123456789") == "" {
				return r, true
			}
		}
		return "", false
	}
	return "", false
}

// skipValues drops from args the options named and the value each takes
// as its next word.
func skipValues(args []string, withValue ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if slices.Contains(withValue, args[i]) {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// isClient tells a program that connects to a server rather than being
// one: a port it is given is the server's.
func isClient(prog string) bool {
	switch prog {
	case "redis-cli", "redis-benchmark", "psql", "pg_isready", "pgbench", "mysql", "mariadb", "mysqladmin",
		"mongo", "mongosh", "memtier_benchmark", "ssh", "scp", "sftp", "curl", "wget", "nc", "ncat", "netcat",
		"telnet", "http", "https", "xh", "grpcurl", "ab", "wrk", "hey", "k6", "socat":
		return true
	}
	return false
}

func isShell(prog string) bool {
	switch prog {
	case "sh", "bash", "dash", "zsh", "ksh", "ash":
		return true
	}
	return false
}
