package ready

import (
	"bufio"
	"encoding/binary"
	"io"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/agentry/agentry/lib/svc/sock"
)

// Usable reports whether a client can use the server s, held by pid, at
// a now. It asks only the servers svc knows, each the way its own
// clients do, so the server logs nothing: Redis a PING, PostgreSQL its
// pid file (a startup message only when that cannot be read), MySQL its
// handshake. A MySQL server that logs to its output is better taken at
// its word (SaysReady): a client leaving at the handshake is logged as an
// aborted connection. Any other listener is usable as soon as it
// listens. false means "not yet": the server turns clients away for now
// (PostgreSQL starting up or recovering, Redis loading its data set), or
// the connection failed.
func Usable(s Server, a netip.AddrPort, pid int) bool {
	switch s {
	case Redis:
		return redisUsable(a)
	case Postgres:
		return postgresUsable(a, pid)
	case MySQL:
		return mysqlUsable(a)
	}
	return true
}

// dial connects to a with a deadline for the whole exchange.
func dial(a netip.AddrPort) (*os.File, error) {
	c, err := sock.DialTCP(a, time.Second)
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(2 * time.Second))
	return c, nil
}

// redisUsable sends an inline PING: +PONG is ready; -LOADING (the data
// set is being read) and -BUSY (a script holds the server) are not yet;
// any other error (-NOAUTH, a full server) is a server up and serving
// clients that have what it asks for.
func redisUsable(a netip.AddrPort) bool {
	c, err := dial(a)
	if err != nil {
		return false
	}
	defer c.Close()
	if _, err := io.WriteString(c, "PING\r\n"); err != nil {
		return false
	}
	line, err := bufio.NewReaderSize(c, 256).ReadString('\n')
	if err != nil && line == "" {
		return false
	}
	return !strings.HasPrefix(line, "-LOADING") && !strings.HasPrefix(line, "-BUSY")
}

// mysqlUsable reads the handshake a MySQL or MariaDB server sends first:
// a handshake (protocol 10) is a server taking clients, and so is an
// error packet (too many connections, a blocked host): the server is up,
// and says why this client may not come in. A client that leaves there
// is one the server counts as aborted, and MariaDB, at its default
// log_warnings=2, logs a warning for it: this is asked only of a server
// whose log svc does not see (see SaysReady).
func mysqlUsable(a netip.AddrPort) bool {
	c, err := dial(a)
	if err != nil {
		return false
	}
	defer c.Close()
	var hdr [4]byte // 3 bytes of length, a sequence number
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return false
	}
	n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
	if n < 1 || n > 4096 {
		return false
	}
	// All of it is read, so that hanging up is a FIN the server reads as
	// a client leaving, not a reset with data unread.
	payload := make([]byte, n)
	if _, err := io.ReadFull(c, payload); err != nil {
		return false
	}
	return payload[0] == 10 || payload[0] == 0xff
}

// postgresUsable asks PostgreSQL whether it accepts sessions. The
// postmaster's pid file says so (line 8: starting, ready, standby,
// stopping — what pg_ctl -w waits on, taking standby as ready too, for a
// hot standby takes read-only sessions), which costs the server nothing
// and leaves nothing in its log: no connection is made. Only a server
// whose pid file svc cannot read (run as another user, out of svc's
// sight) is sent a startup message, as role postgres to database
// postgres — the role of packaged and container clusters; a cluster
// without one logs that it does not exist. An authentication request or
// a session is ready, and so is any error but 57P03 (starting up,
// shutting down, in recovery), which is not yet.
func postgresUsable(a netip.AddrPort, pid int) bool {
	switch pidFileStatus(pid) {
	case "ready", "standby":
		return true
	case "unknown":
		return postgresAnswers(a)
	}
	return false // starting, stopping, or not written yet
}

// postgresAnswers sends PostgreSQL a startup message and reads its
// answer.
func postgresAnswers(a netip.AddrPort) bool {
	c, err := dial(a)
	if err != nil {
		return false
	}
	defer c.Close()
	if _, err := c.Write(startupMessage("postgres", "postgres")); err != nil {
		return false
	}
	r := bufio.NewReader(c)
	for range 64 {
		typ, body, err := pgMessage(r)
		if err != nil {
			return false
		}
		switch typ {
		case 'R':
			if len(body) >= 4 && binary.BigEndian.Uint32(body) != 0 {
				return true // a password is asked for: hanging up now is what psql does, and is not logged
			}
			// AuthenticationOk: a session starts; read on to ReadyForQuery.
		case 'Z':
			c.Write([]byte{'X', 0, 0, 0, 4}) // Terminate
			return true
		case 'E':
			return pgErrorCode(body) != "57P03"
		}
	}
	return true
}

// pidFileStatus is the status line of the postmaster's pid file, in its
// data directory (the postmaster's working directory): "" while the
// postmaster has not written it yet, "unknown" when there is no pid file
// of pid's to read (a server older than PostgreSQL 10 writes none).
func pidFileStatus(pid int) string {
	if pid <= 0 {
		return "unknown"
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cwd/postmaster.pid")
	if err != nil {
		return "unknown"
	}
	lines := strings.Split(string(b), "\n")
	if strings.TrimSpace(lines[0]) != strconv.Itoa(pid) {
		return "unknown" // another's, or stale
	}
	if len(lines) < 8 {
		return ""
	}
	return strings.TrimSpace(lines[7])
}

// startupMessage is a protocol 3.0 StartupMessage.
func startupMessage(user, database string) []byte {
	body := binary.BigEndian.AppendUint32(nil, 3<<16)
	for _, kv := range []string{"user", user, "database", database, "application_name", "svc"} {
		body = append(append(body, kv...), 0)
	}
	body = append(body, 0)
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body)+4)), body...)
}

// pgMessage reads one backend message: its type and body.
func pgMessage(r *bufio.Reader) (byte, []byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n < 4 || n > 1<<16 {
		return 0, nil, io.ErrUnexpectedEOF
	}
	body := make([]byte, n-4)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, nil, err
	}
	return hdr[0], body, nil
}

// pgErrorCode is the SQLSTATE of an ErrorResponse body.
func pgErrorCode(body []byte) string {
	for len(body) > 1 {
		field := body[0]
		end := 1
		for end < len(body) && body[end] != 0 {
			end++
		}
		if field == 'C' {
			return string(body[1:end])
		}
		body = body[min(end+1, len(body)):]
	}
	return ""
}

// SaysReady is whether a line of a MySQL or MariaDB server's error log
// says it takes clients: "mysqld: ready for connections." (MySQL 8 goes
// on with its version on the line; MySQL 8's "X Plugin ready for
// connections" is not it). Saying so, the server is usable, and it is
// asked nothing.
func SaysReady(line string) bool {
	return strings.Contains(line, ": ready for connections")
}

// SaysShutDown is whether a line of a MySQL or MariaDB server's error log
// says it has shut down: a "ready for connections" before it was said by
// a server that is gone (a container's entrypoint starts one to set up
// its data, then the real one).
func SaysShutDown(line string) bool {
	return strings.Contains(line, ": Shutdown complete")
}

// LogsToOutput is whether the server pid writes its error log to its
// standard error, and that is a pipe, a socket or a terminal — what svc
// reads of a service. A server given --log-error, or whose standard error
// is a file or /dev/null, logs where svc does not see; so does one whose
// standard error svc may not look at and that was given --log-error.
func LogsToOutput(pid int) bool {
	dir := "/proc/" + strconv.Itoa(pid)
	if to, err := os.Readlink(dir + "/fd/2"); err == nil {
		// mysqld points its standard error at its --log-error file.
		return strings.HasPrefix(to, "pipe:") || strings.HasPrefix(to, "socket:") ||
			strings.HasPrefix(to, "/dev/pts/") || strings.HasPrefix(to, "/dev/tty")
	}
	raw, _ := os.ReadFile(dir + "/cmdline")
	for _, arg := range strings.Split(string(raw), "\x00") {
		if strings.HasPrefix(arg, "--log-error") || strings.HasPrefix(arg, "--log_error") {
			return false
		}
	}
	return true
}
