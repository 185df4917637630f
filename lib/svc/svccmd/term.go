package svccmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/svc"
	"golang.org/x/sys/unix"
)

// StopKeys reads svc start's --stop-keys (and svc.toml's stop_keys): the
// escapes of svc send.
func StopKeys(text string) (string, error) {
	keys, err := svc.UnescapeKeys(text)
	if err != nil {
		return "", cli.Usagef("--stop-keys %v", err)
	}
	return keys, nil
}

// Send writes text, its escapes read, to a --pty service's terminal; a
// text of "-" is standard input, as it is.
func (v *Verbs) Send(name string, text []string, stdin io.Reader) error {
	d, err := v.Resolve(name)
	if err != nil {
		return err
	}
	keys, err := sendText(text, stdin)
	if err != nil {
		return err
	}
	n, err := svc.Send(d, keys)
	if err != nil {
		return sayTerminal(err)
	}
	if v.JSON {
		cli.PrintJSON(v.Out, map[string]any{"name": d.Name, "sent": n})
	}
	return nil
}

func sendText(text []string, stdin io.Reader) (string, error) {
	if len(text) == 1 && text[0] == "-" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			return "", cli.Failf("reading standard input: %v", err)
		}
		return string(b), nil
	}
	keys, err := svc.UnescapeKeys(strings.Join(text, " "))
	if err != nil {
		return "", cli.Usagef("%v", err)
	}
	return keys, nil
}

// Attach shows a --pty service's terminal and forwards the keys typed
// until the detach keys; the service runs on. 0 detached, 1 the service
// ended meanwhile.
func (v *Verbs) Attach(name, detachKeys string) error {
	d, err := v.Resolve(name)
	if err != nil {
		return err
	}
	detach, err := svc.ParseDetachKeys(detachKeys)
	if err != nil {
		return cli.Usagef("--detach-keys %v", err)
	}
	if err := svc.CheckTerminal(d); err != nil {
		return sayTerminal(err)
	}
	v.Voice.Notef("attached to %s; %s detaches, and it runs on", d.Name, detachKeys)
	restore := rawTerminal(os.Stdin)
	stopResizing := followResizes(d)
	end, err := svc.Attach(d, os.Stdin, v.Out, detach, termSize())
	stopResizing()
	restore()
	if err != nil {
		return sayTerminal(err)
	}
	switch end {
	case svc.ServiceEnded:
		return cli.Failf("%s ended", d.Name)
	default:
		fmt.Fprintln(v.Out)
		v.Voice.Notef("detached from %s; it runs on (svc attach %s again, svc stop %s to end it)", d.Name, d.Name, d.Name)
	}
	return nil
}

// sayTerminal words the errors of send and attach.
func sayTerminal(err error) error {
	var noPTY *svc.NoPTYError
	var notLive *svc.NotLiveError
	switch {
	case errors.As(err, &noPTY):
		return cli.Usagef("%s has no terminal to talk to: it was not started with --pty (svc start --pty, or pty = true in svc.toml)", noPTY.Name)
	case errors.As(err, &notLive):
		return cli.Failf("%s is not running (%s)", notLive.Name, notLive.Status)
	}
	return say(err)
}

// termSize is the size of the terminal attach runs on; nil when it has
// none.
func termSize() *svc.TermSize {
	for _, fd := range []int{0, 1} {
		if ws, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ); err == nil && ws.Row > 0 && ws.Col > 0 {
			return &svc.TermSize{Rows: ws.Row, Cols: ws.Col}
		}
	}
	return nil
}

// followResizes passes the attach's terminal size on to the service's
// each time its window changes (SIGWINCH), until the returned function is
// called.
func followResizes(d svc.Dir) func() {
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-winch:
				if size := termSize(); size != nil {
					_ = svc.Resize(d, *size)
				}
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(winch)
		close(done)
	}
}

// rawTerminal puts f, when it is a terminal, in raw mode for keys — each
// key as it is typed, ^C and ^Z sent on rather than acted on — while what
// is shown still has "\n" made "\r\n" (the service's terminal leaves it
// as it is written). The returned function puts it back.
func rawTerminal(f *os.File) func() {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return func() {}
	}
	raw := *old
	raw.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	raw.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	raw.Cflag &^= unix.CSIZE | unix.PARENB
	raw.Cflag |= unix.CS8
	raw.Oflag |= unix.OPOST | unix.ONLCR
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &raw); err != nil {
		return func() {}
	}
	return func() { _ = unix.IoctlSetTermios(fd, unix.TCSETS, old) }
}
