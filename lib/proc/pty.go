package proc

import (
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// OpenPTY opens a pseudo-terminal for a command's output: the master end
// to read, the terminal for the command's stdout and stderr. The terminal
// has the given size, does not echo, and does not rewrite "\n" as
// "\r\n", so what is read is what the command wrote. It is nobody's
// controlling terminal.
func OpenPTY(rows, cols uint16) (master, tty *os.File, err error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			m.Close()
		}
	}()
	mfd := int(m.Fd())
	if err = unix.IoctlSetPointerInt(mfd, unix.TIOCSPTLCK, 0); err != nil {
		return nil, nil, err
	}
	n, err := unix.IoctlGetUint32(mfd, unix.TIOCGPTN)
	if err != nil {
		return nil, nil, err
	}
	t, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	if err = setupTerminal(int(t.Fd()), rows, cols); err != nil {
		t.Close()
		return nil, nil, err
	}
	return m, t, nil
}

func setupTerminal(fd int, rows, cols uint16) error {
	tio, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return err
	}
	tio.Lflag &^= unix.ECHO | unix.ECHONL
	tio.Oflag &^= unix.OPOST
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, tio); err != nil {
		return err
	}
	return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols})
}

// TerminalSize is the size of the first of fds that is a terminal, else
// 24 rows of 80 columns.
func TerminalSize(fds ...int) (rows, cols uint16) {
	for _, fd := range fds {
		if ws, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ); err == nil && ws.Row > 0 && ws.Col > 0 {
			return ws.Row, ws.Col
		}
	}
	return 24, 80
}
