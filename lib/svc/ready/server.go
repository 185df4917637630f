package ready

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Server is what svc knows a listener to be, from the process that holds
// its socket: what to send it, if anything, to learn that a client can
// use it.
type Server int

const (
	// Unknown is a listener svc has no name for: one HTTP request tells
	// whether it speaks HTTP.
	Unknown Server = iota
	// WebServer is a known HTTP server (nginx, Apache, Caddy…): it is
	// serving once it listens, and is never sent a probe to log.
	WebServer
	// Redis answers an inline PING.
	Redis
	// Postgres answers a startup message.
	Postgres
	// MySQL (or MariaDB) speaks first: its handshake.
	MySQL
	// Quiet is a known server that speaks neither HTTP nor anything svc
	// asks (memcached, mongod…): listening is all svc learns, and it is
	// sent nothing.
	Quiet
)

// programs names the servers by program (a process's comm, or its
// argv[0]'s base name).
var programs = map[string]Server{
	"nginx": WebServer, "httpd": WebServer, "apache2": WebServer, "lighttpd": WebServer, "caddy": WebServer,
	"thttpd": WebServer, "mini_httpd": WebServer, "darkhttpd": WebServer, "h2o": WebServer, "traefik": WebServer,
	"redis-server": Redis, "valkey-server": Redis, "keydb-server": Redis,
	"postgres": Postgres, "postmaster": Postgres,
	"mysqld": MySQL, "mariadbd": MySQL, "mysqld-debug": MySQL,
	"memcached": Quiet, "mongod": Quiet, "mongos": Quiet, "beam.smp": Quiet, "etcd": Quiet,
	"sshd": Quiet, "dnsmasq": Quiet, "exim4": Quiet, "postfix": Quiet, "master": Quiet, "slapd": Quiet,
}

// ServerOf says what the process pid is, from its comm, its executable
// and its arguments (busybox httpd is "busybox" by comm).
func ServerOf(pid int) Server {
	if pid <= 0 {
		return Unknown
	}
	dir := "/proc/" + strconv.Itoa(pid)
	comm, _ := os.ReadFile(dir + "/comm")
	if s, ok := programs[strings.TrimSpace(string(comm))]; ok {
		return s
	}
	raw, _ := os.ReadFile(dir + "/cmdline")
	argv := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
	if exe, err := os.Readlink(dir + "/exe"); err == nil {
		if s, ok := programs[filepath.Base(exe)]; ok {
			return s
		}
	}
	if len(argv) > 0 && argv[0] != "" {
		// A server that retitles itself ("redis-server 127.0.0.1:6379",
		// "postgres: checkpointer") keeps its name first.
		name := filepath.Base(strings.Fields(argv[0] + " x")[0])
		if s, ok := programs[strings.TrimSuffix(name, ":")]; ok {
			return s
		}
		if name == "busybox" && len(argv) > 1 && argv[1] == "httpd" {
			return WebServer
		}
	}
	return Unknown
}
