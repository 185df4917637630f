package svc

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// A --pty service's terminal, from the outside: Send writes keys to it,
// Attach shows its screen and forwards keys. Both go over the monitor's
// socket (OpSend, OpAttach), behind the same owner-only check as a stop.
const (
	OpSend   = "send"   // Request.Keys to the terminal; the Reply says how many bytes
	OpAttach = "attach" // a Reply line, then the socket is the terminal both ways
	OpResize = "resize" // Request.Size to the terminal: an attach's window changed
)

// StopKeys values of a StopReport: what the stop keys did.
const (
	StopKeysEnded   = "ended"   // the service exited on its stop keys: no signal was needed for it
	StopKeysIgnored = "ignored" // it was still running after the grace: the stop signal followed
)

// ErrNoPTY is a service that has no terminal to talk to: *NoPTYError.
var ErrNoPTY = errors.New("the service has no terminal")

// NoPTYError is a send or attach to a service started without a
// pseudo-terminal.
type NoPTYError struct{ Name string }

func (e *NoPTYError) Error() string        { return e.Name + " has no terminal" }
func (e *NoPTYError) Is(target error) bool { return target == ErrNoPTY }

// NotLiveError is a send or attach to a service that is not running.
type NotLiveError struct {
	Name   string
	Status Status
}

func (e *NotLiveError) Error() string { return fmt.Sprintf("%s is %s", e.Name, e.Status) }

// KeysError is text whose escapes do not read: Offset is where, in bytes.
type KeysError struct {
	Text   string
	Offset int
	Why    string
}

func (e *KeysError) Error() string {
	return fmt.Sprintf("%q at byte %d: %s", e.Text, e.Offset, e.Why)
}

// UnescapeKeys reads the escapes of svc send's text and of stop keys:
// \n \r \t \e (ESC) \a \b \0 \\ and \xHH; any other backslash is an error.
func UnescapeKeys(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(s) {
			return "", &KeysError{s, i, "a backslash ends the text (\\\\ is one backslash)"}
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'e':
			b.WriteByte(0x1b)
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case '0':
			b.WriteByte(0)
		case '\\':
			b.WriteByte('\\')
		case 'x':
			if i+2 >= len(s) {
				return "", &KeysError{s, i - 1, "\\x takes two hex digits"}
			}
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return "", &KeysError{s, i - 1, "\\x takes two hex digits"}
			}
			b.WriteByte(byte(v))
			i += 2
		default:
			return "", &KeysError{s, i - 1, fmt.Sprintf("\\%c is no escape (\\n \\r \\t \\e \\a \\b \\0 \\\\ \\xHH are)", s[i])}
		}
	}
	return b.String(), nil
}

// DefaultDetachKeys is what ends svc attach: Ctrl-], as in telnet.
const DefaultDetachKeys = "ctrl-]"

// ParseDetachKeys reads a detach sequence: keys separated by commas,
// each one character or ctrl-X (X a letter or one of @[\]^_), as in
// "ctrl-]" or "ctrl-p,ctrl-q".
func ParseDetachKeys(s string) ([]byte, error) {
	if s == "" {
		return nil, &KeysError{s, 0, "no keys"}
	}
	var out []byte
	off := 0
	for _, k := range strings.Split(s, ",") {
		switch {
		case len(k) == 1:
			out = append(out, k[0])
		case len(k) == 6 && strings.EqualFold(k[:5], "ctrl-"):
			c := k[5]
			if c >= 'a' && c <= 'z' {
				c -= 'a' - 'A'
			}
			if c < '@' || c > '_' {
				return nil, &KeysError{s, off, "ctrl- takes a letter or one of @[\\]^_"}
			}
			out = append(out, c-'@')
		default:
			return nil, &KeysError{s, off, "a key is one character or ctrl-X"}
		}
		off += len(k) + 1
	}
	return out, nil
}

// CheckTerminal returns nil when d runs with a terminal to talk to: a
// *NoPTYError when it has none, a *NotLiveError when it is not running.
func CheckTerminal(d Dir) error {
	l, err := Look(d)
	if err != nil {
		return err
	}
	if l.Spec.PTY == nil {
		return &NoPTYError{Name: d.Name}
	}
	if !l.Status.Live() || !Supervised(d) {
		return &NotLiveError{Name: d.Name, Status: l.Status}
	}
	return nil
}

// Send writes keys to the terminal of d, a --pty service, and returns how
// many bytes its terminal took.
func Send(d Dir, keys string) (int, error) {
	if err := CheckTerminal(d); err != nil {
		return 0, err
	}
	c, r, err := openTerminal(d, Request{Op: OpSend, Keys: keys})
	if err != nil {
		return 0, err
	}
	c.Close()
	return r.Sent, nil
}

// openTerminal sends one request for the terminal and reads its reply
// line, and no more: what follows an attach's reply is the screen, left
// in the returned reader.
func openTerminal(d Dir, req Request) (*os.File, *termReply, error) {
	c, err := dialMonitor(d)
	if err != nil {
		return nil, nil, err
	}
	b, _ := json.Marshal(req)
	if _, err := c.Write(append(b, '\n')); err != nil {
		c.Close()
		return nil, nil, err
	}
	br := bufio.NewReader(c)
	line, err := br.ReadBytes('\n')
	var rep Reply
	if err == nil {
		err = json.Unmarshal(line, &rep)
	}
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("the monitor of %s did not answer: %v", d.Name, err)
	}
	if rep.Error != "" {
		c.Close()
		if rep.NoPTY {
			return nil, nil, &NoPTYError{Name: d.Name}
		}
		if req.Op == OpSend {
			return nil, nil, fmt.Errorf("%s: %s", d.Name, rep.Error)
		}
		return nil, nil, fmt.Errorf("the monitor of %s refused the request: %s", d.Name, rep.Error)
	}
	return c, &termReply{Reply: rep, screen: br}, nil
}

type termReply struct {
	Reply
	screen io.Reader
}

// AttachEnd is how an attach ended.
type AttachEnd int

const (
	Detached     AttachEnd = iota // the detach keys were typed
	ServiceEnded                  // the monitor closed the terminal: the service ended
	InputEnded                    // the keys' input ended (end of file)
)

// Attach shows the terminal of d on out, starting with the recent
// screen, and forwards what is read from in until the detach sequence
// (which is not forwarded), the end of in, or the end of the service.
// Other attaches see the same screen; the keys go to the service from one
// attach at a time: the first that types has them until it detaches.
// size, when not nil, is the attach's own terminal size, which the
// service's terminal takes (the service gets SIGWINCH).
func Attach(d Dir, in io.Reader, out io.Writer, detach []byte, size *TermSize) (AttachEnd, error) {
	if err := CheckTerminal(d); err != nil {
		return 0, err
	}
	c, r, err := openTerminal(d, Request{Op: OpAttach, Size: size})
	if err != nil {
		return 0, err
	}
	defer c.Close()
	screenDone := make(chan struct{})
	go func() {
		_, _ = io.Copy(out, r.screen)
		close(screenDone)
	}()
	keys := make(chan AttachEnd, 1)
	go func() { keys <- forwardKeys(in, c, detach) }()
	select {
	case end := <-keys:
		return end, nil
	case <-screenDone:
		return ServiceEnded, nil
	}
}

// forwardKeys copies in to w until the detach sequence or the end of in.
// A partial match is held back until it is known not to be the sequence.
func forwardKeys(in io.Reader, w io.Writer, detach []byte) AttachEnd {
	buf := make([]byte, 4096)
	matched := 0
	for {
		n, err := in.Read(buf)
		var send []byte
		for _, b := range buf[:n] {
			if b == detach[matched] {
				matched++
				if matched == len(detach) {
					_, _ = w.Write(send)
					return Detached
				}
				continue
			}
			send = append(send, detach[:matched]...)
			matched = 0
			if b == detach[0] {
				matched = 1
				continue
			}
			send = append(send, b)
		}
		if len(send) > 0 {
			if _, werr := w.Write(send); werr != nil {
				return ServiceEnded
			}
		}
		if err != nil {
			return InputEnded
		}
	}
}

// Resize gives the terminal of d, a --pty service, a new size: an
// attach's window changed.
func Resize(d Dir, size TermSize) error {
	c, _, err := openTerminal(d, Request{Op: OpResize, Size: &size})
	if err != nil {
		return err
	}
	return c.Close()
}
