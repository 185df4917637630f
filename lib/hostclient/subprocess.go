package hostclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/ndjson"
	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/protocol"
)

// SubprocessOptions say how to start agent-host.
type SubprocessOptions struct {
	// Path is the agent-host binary; Args its arguments (--backend …).
	Path string
	Args []string
	Env  []string
	Dir  string
	// Stderr receives the host's stderr (the backend's noise); its tail is
	// kept for the error when the host dies either way.
	Stderr io.Writer
	// Notice receives the host's log and metric notices.
	Notice func(protocol.Msg)
	// Restart starts a fresh host on the next call after one died, after a
	// backoff that doubles from 100ms up to MaxBackoff (default 10s) while
	// hosts keep dying, and says hello again with the last hello's daemon
	// and config. OnRestart hears of every restart.
	Restart    bool
	MaxBackoff time.Duration
	OnRestart  func(attempt int, cause error, ready *protocol.Ready)
	// MaxLine caps lines read from the host (default 64 MiB).
	MaxLine int
}

// Subprocess returns a Client that starts agent-host now and talks to it.
func Subprocess(opts SubprocessOptions) (Client, error) {
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 10 * time.Second
	}
	s := &subprocess{opts: opts}
	if err := s.spawn(); err != nil {
		return nil, err
	}
	return &client{c: s}, nil
}

type subprocess struct {
	opts SubprocessOptions

	mu       sync.Mutex
	cur      *conn
	child    *proc.Child
	exited   chan struct{} // closed once the current process is reaped
	closed   bool
	hello    *protocol.Hello // replayed on restart
	failures int
	lastDied time.Time
}

// spawn starts a host process; s.mu is held or s is not shared yet.
func (s *subprocess) spawn() error {
	cmd := exec.Command(s.opts.Path, s.opts.Args...)
	cmd.Env, cmd.Dir = s.opts.Env, s.opts.Dir
	// The daemon gone, the host gets SIGTERM: it drains, and stops its
	// backend's processes.
	child, err := proc.StartPiped(cmd, proc.Pipes{StdinPipe: true, Stderr: s.opts.Stderr, Options: proc.Options{DeathSignal: syscall.SIGTERM}})
	if err != nil {
		return fmt.Errorf("starting agent-host: %w", err)
	}
	stdin, stdout, tail := child.Stdin, child.Stdout, child.Stderr
	w := ndjson.NewWriter(stdin)
	c := newConn(func(m protocol.Msg) error {
		b, err := protocol.Encode(m)
		if err != nil {
			return err
		}
		if err := w.WriteLine(b); err != nil {
			return fmt.Errorf("%w: writing to it: %v", ErrHostDied, err)
		}
		return nil
	}, s.opts.Notice)
	exited := make(chan struct{})
	s.cur, s.child, s.exited = c, child.Child, exited

	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		_ = ndjson.Lines(stdout, s.opts.MaxLine, nil, func(line []byte) bool {
			if len(line) > 0 {
				c.receive(protocol.Parse(line))
			}
			return true
		})
	}()
	go func() {
		// Once the host has exited, what it left in its group is killed,
		// and what it wrote before it died is read, bounded in case an
		// escaped process holds the pipe.
		exit := child.End()
		_ = stdout.SetReadDeadline(time.Now().Add(time.Second))
		<-readDone
		stdout.Close()
		how := exit.String()
		if t := strings.TrimSpace(tail.String()); t != "" {
			how += "; stderr: " + t
		}
		c.fail(fmt.Errorf("%w: %s", ErrHostDied, how))
		close(exited)
	}()
	return nil
}

func (s *subprocess) conn(ctx context.Context) (*conn, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errors.New("agent-host client: closed")
	}
	c := s.cur
	dead := c.err()
	if dead == nil {
		s.mu.Unlock()
		return c, nil
	}
	if !s.opts.Restart {
		s.mu.Unlock()
		return nil, dead
	}
	backoff := min(100*time.Millisecond<<min(s.failures, 10), s.opts.MaxBackoff)
	if time.Since(s.lastDied) > 4*s.opts.MaxBackoff {
		backoff, s.failures = 0, 0 // it had been up a while: not a crash loop
	}
	s.mu.Unlock()
	if backoff > 0 {
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	s.mu.Lock()
	if s.cur != c { // another call restarted it meanwhile
		s.mu.Unlock()
		return s.conn(ctx)
	}
	s.failures++
	s.lastDied = time.Now()
	attempt := s.failures
	if err := s.spawn(); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	nc, hello := s.cur, s.hello
	s.mu.Unlock()
	var ready *protocol.Ready
	if hello != nil {
		m, err := nc.call(ctx, func(id string) protocol.Msg { h := *hello; h.ID = id; return &h })
		if err != nil {
			return nil, fmt.Errorf("agent-host restarted, but hello failed: %w", err)
		}
		ready, _ = m.(*protocol.Ready)
	}
	if s.opts.OnRestart != nil {
		s.opts.OnRestart(attempt, dead, ready)
	}
	return nc, nil
}

// rememberHello keeps hello's arguments for restarts.
func (s *subprocess) rememberHello(daemon string, config json.RawMessage) {
	s.mu.Lock()
	s.hello = &protocol.Hello{Protocol: protocol.Version, Daemon: daemon, Config: config}
	s.mu.Unlock()
}

// ping treats a host that does not answer by ctx's deadline as dead.
func (s *subprocess) ping(ctx context.Context) error {
	c, err := s.conn(ctx)
	if err != nil {
		return err
	}
	err = pingConn(ctx, c)
	if errors.Is(err, context.DeadlineExceeded) {
		s.kill()
		c.fail(fmt.Errorf("%w: no answer to ping in time", ErrHostDied))
		return c.err()
	}
	return err
}

// kill ends the current host's whole group, if it is not reaped yet.
func (s *subprocess) kill() {
	s.mu.Lock()
	child := s.child
	s.mu.Unlock()
	_ = child.Signal(syscall.SIGKILL)
}

func (s *subprocess) shutdown(ctx context.Context) error {
	c, err := s.conn(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	exited := s.exited
	s.mu.Unlock()
	if err := shutdownConn(ctx, c, nil); err != nil {
		return err
	}
	select {
	case <-exited:
		return nil
	case <-ctx.Done():
		s.kill()
		return ctx.Err()
	}
}

// closeGrace bounds how long Close waits for the host to stop its
// backend's processes: an interrupt's grace, then a CLI's stop ladder.
const closeGrace = 20 * time.Second

// close stops the host at once, with a shutdown that gives runs in flight
// no time: the host interrupts them and stops its backend's processes. A
// SIGKILL to the host alone would leave those running, in process groups
// of their own; it comes only if the host has not ended by closeGrace.
func (s *subprocess) close() error {
	s.mu.Lock()
	s.closed = true
	exited, c, alive := s.exited, s.cur, s.child.Running()
	s.mu.Unlock()
	if alive && c != nil && c.err() == nil {
		ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
		now := time.Duration(0)
		if shutdownConn(ctx, c, &now) == nil {
			select {
			case <-exited:
			case <-ctx.Done():
			}
		}
		cancel()
	}
	s.kill()
	<-exited
	return nil
}
