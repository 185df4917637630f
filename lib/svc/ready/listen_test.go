package ready

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// handOff listens, says its port, and on a line from the test forks a
// daemon that keeps the socket, says the daemon's pid and exits, as nginx
// and redis do when they daemonize; the daemon lives until its input
// ends.
const handOff = `
import os, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
print(s.getsockname()[1], flush=True)
sys.stdin.readline()
pid = os.fork()
if pid == 0:
    os.close(1)  # the test reads the parent's words to their end
    os.setsid()
    sys.stdin.read()
    os._exit(0)
print(pid, flush=True)
os._exit(0)
`

// A listening socket whose holder exits and leaves it to a daemon it
// forked is the tree's at every look, the exit's own moment included: a
// look that read the exiting holder's descriptors after they were closed,
// and its children after the daemon had been handed to the subreaper,
// once took the socket for a stranger's for good (svc start nginx, not
// ready after 60s).
func TestListensFollowsASocketThroughAHandOff(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Skip(err)
	}
	defer unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
	rounds := 30
	if testing.Short() {
		rounds = 10
	}
	missed := 0
	for range rounds {
		missed += handOffRound(t)
	}
	if missed > 0 {
		t.Fatalf("%d looks in %d hand-offs did not place the socket as the tree's", missed, rounds)
	}
}

// handOffRound runs one hand-off, looking at the tree with a new Listens
// (every socket fresh, so placed) again and again across the holder's
// exit, and returns how many looks missed the socket.
func handOffRound(t *testing.T) int {
	t.Helper()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	cmd := exec.Command("python3", "-c", handOff)
	inR, in, err := os.Pipe() // not exec's own: Wait would close it, and the daemon would end
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	defer in.Close()
	out := bufio.NewScanner(outR)
	port := readInt(t, out)
	exited := make(chan struct{})
	if _, err := in.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); close(exited) }()
	missed, after := 0, 0
	deadline := time.Now().Add(10 * time.Second)
	for after < 50 {
		select {
		case <-exited:
			after++
		default:
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("python3 did not exit after forking its daemon")
		}
		l := NewListens(os.Getpid(), nil)
		if !slices.Contains(Ports(l.Poll()), port) {
			missed++
		}
		l.Close()
	}
	daemon := readInt(t, out)
	in.Close()
	var ws unix.WaitStatus
	if _, err := unix.Wait4(daemon, &ws, 0, nil); err != nil {
		t.Fatalf("reaping the daemon %d: %v", daemon, err)
	}
	return missed
}

func readInt(t *testing.T, s *bufio.Scanner) int {
	t.Helper()
	if !s.Scan() {
		t.Fatalf("python3 said nothing: %v", s.Err())
	}
	n, err := strconv.Atoi(strings.TrimSpace(s.Text()))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
