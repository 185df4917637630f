package proc

import (
	"io"
	"os/exec"
	"testing"
)

// A command on the terminal sees a terminal of the size given on stdout
// and stderr, and its output arrives as written: no echo, no "\r\n".
func TestOpenPTY(t *testing.T) {
	m, tty, err := OpenPTY(33, 101)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	defer m.Close()
	c := exec.Command("sh", "-c", `test -t 1 && test -t 2 && stty size <&1 && printf 'a\nb'`)
	c.Stdout, c.Stderr = tty, tty
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	out, _ := io.ReadAll(m) // EIO once the command's end of the terminal is closed
	if err := c.Wait(); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	if string(out) != "33 101\na\nb" {
		t.Errorf("read %q", out)
	}
}
