package monitor

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc"
	"golang.org/x/sys/unix"
)

// terminal is a --pty service's terminal as the monitor serves it: the
// master end of the current launch's pseudo-terminal, where svc send's
// keys are written, and the attaches that see its output. One attach at a
// time has the keyboard: the first to type, until it detaches.
type terminal struct {
	mu       sync.Mutex
	master   *os.File
	clients  map[*attachment]struct{}
	keyboard *attachment
	wmu      sync.Mutex // keys are written whole, one writer at a time
}

// attachment is one svc attach: its screen goes out through a queue, so
// that a slow one never holds up the service's output.
type attachment struct {
	out  chan []byte
	c    io.WriteCloser
	told bool // that another attach has the keyboard
}

// newTerminal is the terminal of a service started with --pty; nil
// without one. Its methods take a nil terminal as none.
func newTerminal(spec svc.Spec) *terminal {
	if spec.PTY == nil {
		return nil
	}
	return &terminal{clients: map[*attachment]struct{}{}}
}

// onTerminal gives the command the terminal as stdin too, and as its
// controlling terminal, in a session of its own: keys typed at it reach
// it, and ^C (\x03) interrupts its foreground group as in a terminal. The
// terminal echoes what is typed, as a terminal does.
func (m *monitor) onTerminal(cmd *exec.Cmd, master, tty *os.File) {
	if m.term == nil {
		return
	}
	if tio, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS); err == nil {
		tio.Lflag |= unix.ECHO
		_ = unix.IoctlSetTermios(int(tty.Fd()), unix.TCSETS, tio)
	}
	cmd.Stdin = tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	m.term.mu.Lock()
	m.term.master = master
	m.term.mu.Unlock()
}

// keep keeps output for reports and, under --pty, shows it to every
// attach in the same step, so that an attach's first screen and what
// follows neither miss nor repeat a byte.
func (m *monitor) keep(data []byte) {
	t := m.term
	if t == nil {
		m.out.keep(data)
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	m.out.keep(data)
	if len(t.clients) == 0 {
		return
	}
	chunk := append([]byte(nil), data...)
	for a := range t.clients {
		select {
		case a.out <- chunk:
		default: // it cannot keep up: it is let go, the service is not held
			t.dropLocked(a)
		}
	}
}

func (t *terminal) dropLocked(a *attachment) {
	if _, ok := t.clients[a]; !ok {
		return
	}
	delete(t.clients, a)
	close(a.out)
	if t.keyboard == a {
		t.keyboard = nil
	}
}

// resize gives the terminal a new size, when one is given: the kernel
// tells the service with SIGWINCH. Through the descriptor's Control, which
// leaves it as it is.
func (t *terminal) resize(size *svc.TermSize) {
	if size == nil || size.Rows == 0 || size.Cols == 0 {
		return
	}
	t.mu.Lock()
	master := t.master
	t.mu.Unlock()
	if master == nil {
		return
	}
	if rc, err := master.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) {
			_ = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Row: size.Rows, Col: size.Cols})
		})
	}
}

// errTerminalFull is keys the terminal did not take in time.
var errTerminalFull = errors.New("the terminal took no more keys for 5s: the service is not reading them")

// write writes keys to the terminal, and gives up after a few seconds: a
// service that reads nothing fills the terminal's input, and the master
// is in blocking mode (OpenPTY's ioctls took its descriptor), so no
// deadline reaches it. A write given up on finishes when the service
// reads, or fails when its terminal closes; writes after it queue behind
// it, whole.
func (t *terminal) write(keys []byte) (int, error) {
	t.mu.Lock()
	master := t.master
	t.mu.Unlock()
	if master == nil {
		return 0, errors.New("the terminal is not open")
	}
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		t.wmu.Lock()
		defer t.wmu.Unlock()
		n, err := master.Write(keys)
		done <- result{n, err}
	}()
	timer := time.NewTimer(5 * time.Second)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.n, r.err
	case <-timer.C:
		return 0, errTerminalFull
	}
}

// answerTerminal answers OpSend and OpAttach; false for any other
// request. in is the connection's reading end, past the request line.
func (m *monitor) answerTerminal(c io.WriteCloser, in io.Reader, enc *json.Encoder, req svc.Request) bool {
	if req.Op != svc.OpSend && req.Op != svc.OpAttach && req.Op != svc.OpResize {
		return false
	}
	if m.term == nil {
		_ = enc.Encode(svc.Reply{Error: svc.ErrNoPTY.Error(), NoPTY: true})
		return true
	}
	if req.Op == svc.OpSend {
		n, err := m.term.write([]byte(req.Keys))
		if err != nil {
			_ = enc.Encode(svc.Reply{Error: err.Error(), Sent: n})
			return true
		}
		_ = enc.Encode(svc.Reply{Sent: n})
		return true
	}
	m.term.resize(req.Size)
	if err := enc.Encode(svc.Reply{}); err != nil || req.Op == svc.OpResize {
		return true
	}
	m.attach(c, &pastLine{r: in})
	return true
}

// pastLine reads past the newline that ends the request line, which the
// JSON decoder leaves unread: it is no key.
type pastLine struct {
	r    io.Reader
	past bool
}

func (p *pastLine) Read(b []byte) (int, error) {
	for !p.past {
		var one [1]byte
		n, err := p.r.Read(one[:])
		if n == 1 {
			p.past = true
			if one[0] != '\n' {
				b[0] = one[0]
				return 1, nil
			}
		}
		if err != nil {
			return 0, err
		}
	}
	return p.r.Read(b)
}

// attach shows the screen to c, the recent output first, and takes keys
// from in until it closes.
func (m *monitor) attach(c io.WriteCloser, in io.Reader) {
	t := m.term
	a := &attachment{out: make(chan []byte, 1024), c: c}
	t.mu.Lock()
	if screen := m.out.screen(); len(screen) > 0 {
		a.out <- screen
	}
	t.clients[a] = struct{}{}
	t.mu.Unlock()
	go a.show()
	buf := make([]byte, 4096)
	for {
		n, err := in.Read(buf)
		if n > 0 && !t.typed(a, buf[:n]) {
			break
		}
		if err != nil {
			break
		}
	}
	t.mu.Lock()
	t.dropLocked(a)
	t.mu.Unlock()
}

// typed writes an attach's keys if it has the keyboard or takes it now;
// false when the terminal no longer takes keys.
func (t *terminal) typed(a *attachment, keys []byte) bool {
	t.mu.Lock()
	if _, ok := t.clients[a]; !ok {
		t.mu.Unlock()
		return false
	}
	if t.keyboard == nil {
		t.keyboard = a
	}
	if t.keyboard != a {
		if !a.told {
			a.told = true
			select {
			case a.out <- []byte("\r\n[svc: another attach has the keyboard until it detaches; this one watches]\r\n"):
			default:
			}
		}
		t.mu.Unlock()
		return true
	}
	a.told = false
	t.mu.Unlock()
	_, err := t.write(keys)
	return err == nil || errors.Is(err, errTerminalFull)
}

// show writes an attach's screen until its queue is closed, then closes
// the connection.
func (a *attachment) show() {
	defer a.c.Close()
	for chunk := range a.out {
		if _, err := a.c.Write(chunk); err != nil {
			for range a.out { // drained until it is dropped
			}
			return
		}
	}
}

// screen is the recent output an attach starts with: the last 2 KiB from
// a line's start, so the prompt is there.
func (t *tail) screen() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > 2048 {
		b = b[len(b)-2048:]
		for i, c := range b {
			if c == '\n' {
				b = b[i+1:]
				break
			}
		}
	}
	return append([]byte(nil), b...)
}

// stopLadder is the stop ladder over the launch's tree, after its stop
// keys when it has some: what the keys did ("" when none were tried) is
// for the report, whose time is then the keys' and the ladder's.
func (m *monitor) stopLadder(l *launched, grace time.Duration) (proc.LadderReport, string) {
	t0 := time.Now()
	keys := m.tryStopKeys(l, grace)
	lad := proc.LadderSparing(os.Getpid(), m.group(l), m.spec.Signal(), grace, svc.IsMonitor)
	if keys != "" {
		lad.ElapsedMs = proc.Ms(time.Since(t0))
	}
	return lad, keys
}

// tryStopKeys writes the spec's stop keys to the terminal and waits up to
// grace for the process the launch follows to exit: what they did, for
// the stop report ("" when there are none to try).
func (m *monitor) tryStopKeys(l *launched, grace time.Duration) string {
	if m.term == nil || m.spec.StopKeys == "" {
		return ""
	}
	select {
	case <-l.main().Exited():
		return ""
	default:
	}
	if _, err := m.term.write([]byte(m.spec.StopKeys)); err != nil {
		return svc.StopKeysIgnored
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-l.main().Exited():
		return svc.StopKeysEnded
	case <-t.C:
		return svc.StopKeysIgnored
	}
}
