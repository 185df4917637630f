package proc

import (
	"os"
	"os/exec"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// A descriptor this process inherited without close-on-exec stays usable
// here but no longer reaches a child.
func TestCloseOnExecFrom(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if _, err := unix.FcntlInt(w.Fd(), unix.F_SETFD, 0); err != nil { // as if inherited
		t.Fatal(err)
	}
	fd := strconv.Itoa(int(w.Fd()))
	leaks := func() bool {
		return exec.Command("sh", "-c", "test -e /proc/self/fd/"+fd).Run() == nil
	}
	if !leaks() {
		t.Skip("the descriptor did not reach the child to begin with")
	}
	CloseOnExecFrom(3)
	if leaks() {
		t.Errorf("descriptor %s still reaches a child", fd)
	}
	if _, err := w.Write([]byte("x")); err != nil {
		t.Errorf("descriptor unusable here: %v", err)
	}
}
