package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
)

// The monitor's socket against a second local user (issue 43, items 2
// and 5): the other user can see every abstract socket's name in
// /proc/net/unix and connect to it, and can bind a name before the
// monitor that would use it.

// legacySocket is the name monitors before random names listened on: an
// FNV-1a hash of the service's directory, which anyone can work out.
func legacySocket(home, name string) string {
	h := fnv.New64a()
	h.Write([]byte(filepath.Join(home, name)))
	return fmt.Sprintf("@agentry-svc-%016x", h.Sum64())
}

// stateOf is a service's state.json, as a map.
func stateOf(t *testing.T, home, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, name, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// asOther runs this test binary as the other user, as the monsock
// command.
func asOther(t *testing.T, u *otherUser, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	reachable(t, filepath.Dir(exe))
	cmd := u.Command(exe, args...)
	cmd.Args[0] = "monsock"
	return cmd
}

// A second user who reads the monitor's socket name from /proc/net/unix
// and asks it to stop the service is closed on unanswered: the service
// runs on, and the attacker learns nothing of it.
func TestMonitorSocketRefusesOtherUser(t *testing.T) {
	u := newOtherUser(t)
	home := t.TempDir()
	svcCmd := svcIn(home)
	if out, err := svcCmd("start", "--name", "victim", "--ready-timeout", "10ms", "--", "sleep", "4731").CombinedOutput(); err != nil {
		t.Fatalf("svc start: %v\n%s", err, out)
	}
	defer svcCmd("stop", "victim").Run()
	st := stateOf(t, home, "victim")
	name, _ := st["socket"].(string)
	if name == "" {
		name = legacySocket(home, "victim") // a monitor from before random names
	}
	pid := int(st["pid"].(float64))

	// The attacker tries only this service's socket, though it sees them
	// all: on a shared machine, others' monitors may not refuse it yet.
	out, err := asOther(t, u, "attack", name).CombinedOutput()
	if err != nil {
		t.Fatalf("the attacker: %v\n%s", err, out)
	}
	t.Logf("the attacker:\n%s", out)
	if !bytes.Contains(out, []byte("seen "+name+"\n")) {
		t.Fatalf("the attacker did not find %s in /proc/net/unix:\n%s", name, out)
	}
	if !regexp.MustCompile(`(?m)^reply ` + regexp.QuoteMeta(name) + ` 0 ""`).Match(out) {
		t.Errorf("the monitor answered another user:\n%s", out)
	}
	said := bytes.ReplaceAll(out, []byte(name), nil)
	for _, leak := range []string{strconv.Itoa(pid), "sleep", "signalled", "victim"} {
		if bytes.Contains(said, []byte(leak)) {
			t.Errorf("the attacker learnt %q:\n%s", leak, out)
		}
	}
	// The attacker has exited, so whatever the monitor would do with the
	// request is done.
	js, err := svcCmd("status", "--json", "victim").Output()
	if err != nil {
		t.Fatalf("svc status: %v %s", err, js)
	}
	var l struct {
		Status     string `json:"status"`
		Supervised bool   `json:"supervised"`
		PID        int    `json:"pid"`
	}
	if err := json.Unmarshal(js, &l); err != nil {
		t.Fatalf("%v: %s", err, js)
	}
	if !l.Supervised || l.PID != pid || (l.Status != "starting" && l.Status != "running" && l.Status != "ready") {
		t.Errorf("the service after the attack: %s", js)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Errorf("the service's process %d: %v", pid, err)
	}
	// Its owner still stops it.
	if out, err := svcCmd("stop", "victim").CombinedOutput(); err != nil || !bytes.Contains(out, []byte("victim stopped")) {
		t.Errorf("svc stop: %v\n%s", err, out)
	}
}

// holder is a process holding a unix socket's name, reporting each
// connection it took.
type holder struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

// hold has the process cmd (monsock hold NAME) bind and listen, and
// returns once it does.
func hold(t *testing.T, cmd *exec.Cmd) *holder {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &holder{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	t.Cleanup(func() {
		h.stdin.Close()
		h.cmd.Process.Kill()
		h.cmd.Wait()
	})
	line, err := h.out.ReadString('\n')
	if line != "listening\n" {
		t.Fatalf("the holder: %q %v", line, err)
	}
	return h
}

// done ends the holder and returns what it reported of the connections
// it took.
func (h *holder) done(t *testing.T) string {
	t.Helper()
	h.stdin.Close()
	rest, _ := io.ReadAll(h.out)
	if err := h.cmd.Wait(); err != nil {
		t.Errorf("the holder: %v", err)
	}
	if !strings.HasSuffix(string(rest), "done\n") {
		t.Errorf("the holder: %q", rest)
	}
	return strings.TrimSuffix(string(rest), "done\n")
}

// Another user binding the name a monitor used to take — worked out from
// the service's directory — does not keep the service from starting, and
// svc's commands never talk to it.
func TestMonitorSocketPreboundName(t *testing.T) {
	u := newOtherUser(t)
	home := t.TempDir()
	svcCmd := svcIn(home)
	old := legacySocket(home, "victim")
	h := hold(t, asOther(t, u, "hold", old))

	out, err := svcCmd("start", "--name", "victim", "--ready-timeout", "10ms", "--", "sleep", "4732").CombinedOutput()
	defer svcCmd("stop", "victim").Run()
	if err != nil {
		t.Fatalf("svc start with %s taken by another user: %v\n%s", old, err, out)
	}
	name, _ := stateOf(t, home, "victim")["socket"].(string)
	if !regexp.MustCompile(`^@agentry-svc-[0-9a-f]{32}$`).MatchString(name) {
		t.Errorf("the recorded socket %q is not a random name", name)
	}
	if out, err := svcCmd("stop", "victim").CombinedOutput(); err != nil || !bytes.Contains(out, []byte("victim stopped")) {
		t.Errorf("svc stop: %v\n%s", err, out)
	}
	if conns := h.done(t); conns != "" {
		t.Errorf("svc connected to the other user's socket:\n%s", conns)
	}
}

// A service whose state has no socket name (started by an earlier svc)
// is reached on the legacy name, and only when the kernel says the
// listener there is its monitor: this user's process, of the recorded
// monitor pid. svc sends nothing to anything else.
func TestMonitorSocketClientChecksListener(t *testing.T) {
	u := newOtherUser(t)
	home := t.TempDir()
	svcCmd := svcIn(home)
	// legacy makes a service as an earlier svc left it, supervised: its
	// state without a socket, and its lock held (by this process, as its
	// monitor would). The lock is let go at the end of the test, or by
	// calling the function returned.
	legacy := func(t *testing.T, name string, monitorPID int) func() {
		dir := filepath.Join(home, name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		st := fmt.Sprintf(`{"name":%q,"status":"running","spec":{"command":["sleep","4733"]},"monitorPid":%d,"startedAt":%q}`+"\n",
			name, monitorPID, time.Now().Format(time.RFC3339Nano))
		if err := os.WriteFile(filepath.Join(dir, "state.json"), []byte(st), 0o600); err != nil {
			t.Fatal(err)
		}
		lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
			t.Fatal(err)
		}
		var once sync.Once
		release := func() { once.Do(func() { lock.Close() }) }
		t.Cleanup(release)
		return release
	}

	t.Run("another user", func(t *testing.T) {
		legacy(t, "old", os.Getpid())
		h := hold(t, asOther(t, u, "hold", legacySocket(home, "old")))
		cmd := svcCmd("stop", "old")
		out, err := cmd.CombinedOutput()
		want := fmt.Sprintf("svc: error: cannot reach the monitor of old: another user's process (pid %d, uid %d) holds its socket", h.cmd.Process.Pid, u.UID)
		if cmd.ProcessState.ExitCode() != 1 || !strings.HasPrefix(string(out), want) {
			t.Errorf("svc stop: %v\n%s\nwant it to start with %q", err, out, want)
		}
		// svc connected, and closed without a byte sent.
		if conns := h.done(t); !regexp.MustCompile(`^(conn 0 ""\n)+$`).MatchString(conns) {
			t.Errorf("the other user's listener got:\n%q", conns)
		}
	})

	// A listener of this user, which is not the recorded monitor, gets
	// nothing either; the recorded monitor itself is asked.
	for _, tc := range []struct {
		name       string
		monitorPID int
		ok         bool
	}{{"not the monitor", 1, false}, {"the monitor", os.Getpid(), true}} {
		t.Run(tc.name, func(t *testing.T) {
			svcName := strings.ReplaceAll(tc.name, " ", "-")
			release := legacy(t, svcName, tc.monitorPID)
			ln, err := net.Listen("unix", legacySocket(home, svcName))
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			got := make(chan string, 1)
			go func() {
				c, err := ln.Accept()
				if err != nil {
					got <- err.Error()
					return
				}
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				line, err := bufio.NewReader(c).ReadString('\n')
				if err == nil {
					fmt.Fprintf(c, `{"name":%q,"status":"stopped","signalled":[]}`+"\n", svcName)
					c.Close()
					release() // as a monitor that has stopped its service
				}
				got <- line
			}()
			cmd := svcCmd("stop", svcName)
			out, _ := cmd.CombinedOutput()
			if tc.ok {
				if cmd.ProcessState.ExitCode() != 0 || !strings.HasPrefix(string(out), svcName+" stopped") {
					t.Errorf("svc stop through the recorded monitor:\n%s", out)
				}
				if line := <-got; !strings.Contains(line, `"op":"stop"`) {
					t.Errorf("the monitor got %q", line)
				}
				return
			}
			want := fmt.Sprintf("svc: error: cannot reach the monitor of %s: process %d holds its socket, not the monitor (pid 1); nothing was sent", svcName, os.Getpid())
			if cmd.ProcessState.ExitCode() != 1 || !strings.HasPrefix(string(out), want) {
				t.Errorf("svc stop:\n%s\nwant it to start with %q", out, want)
			}
			if line := <-got; line != "" {
				t.Errorf("the listener got %q", line)
			}
		})
	}
}

// monsock is the other user's end of these tests, this test binary run
// as that user:
//
//	monsock attack NAME...  finds the agentry-svc sockets in
//	    /proc/net/unix ("seen NAME" for each that is one of NAMEs), and
//	    sends each of those a stop request, printing what came back:
//	    "reply NAME BYTES QUOTED"
//	monsock hold NAME       binds NAME and prints "listening"; for each
//	    connection, "conn BYTES QUOTED" with what it sent; "done" once
//	    stdin is closed and every connection made by then is read
func monsock() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: monsock attack NAME... | monsock hold NAME")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "attack":
		attack(os.Args[2:], `{"op":"stop","graceMs":1}`)
	case "attack-with": // monsock attack-with REQUEST NAME...
		attack(os.Args[3:], os.Args[2])
	case "hold":
		holdName(os.Args[2])
	default:
		fmt.Fprintln(os.Stderr, "monsock: unknown", os.Args[1])
		os.Exit(2)
	}
}

func attack(targets []string, request string) {
	b, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		fmt.Fprintln(os.Stderr, "monsock:", err)
		os.Exit(1)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 8 && strings.HasPrefix(f[7], "@agentry-svc-") {
			seen[f[7]] = true
		}
	}
	for _, name := range targets {
		if !seen[name] {
			continue
		}
		fmt.Printf("seen %s\n", name)
		c, err := net.Dial("unix", name)
		if err != nil {
			fmt.Printf("dial %s %v\n", name, err)
			continue
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		c.Write([]byte(request + "\n"))
		reply, err := io.ReadAll(c)
		c.Close()
		fmt.Printf("reply %s %d %q (%v)\n", name, len(reply), reply, err)
	}
}

// The terminal of a --pty service is no more another user's than its
// stop: a send and an attach from one are closed on unread and unanswered,
// nothing reaches the service, and nothing of its screen comes back.
func TestMonitorSocketRefusesOtherUserTerminal(t *testing.T) {
	u := newOtherUser(t)
	home := t.TempDir()
	svcCmd := svcIn(home)
	if out, err := svcCmd("start", "--pty", "--name", "victim", "--ready-timeout", "10ms", "--", "sh", "-c", "echo secret-screen; exec cat").CombinedOutput(); err != nil {
		t.Fatalf("svc start: %v\n%s", err, out)
	}
	defer svcCmd("stop", "victim").Run()
	st := stateOf(t, home, "victim")
	name, _ := st["socket"].(string)
	for _, req := range []string{`{"op":"send","keys":"PWNED\n"}`, `{"op":"attach"}`, `{"op":"resize","size":{"rows":3,"cols":3}}`} {
		out, err := asOther(t, u, "attack-with", req, name).CombinedOutput()
		if err != nil {
			t.Fatalf("the attacker: %v\n%s", err, out)
		}
		if !regexp.MustCompile(`(?m)^reply ` + regexp.QuoteMeta(name) + ` 0 ""`).Match(out) {
			t.Errorf("%s: the monitor answered another user:\n%s", req, out)
		}
	}
	// The owner's own send goes through, after the attacker's would have.
	if out, err := svcCmd("send", "victim", `mine\n`).CombinedOutput(); err != nil {
		t.Fatalf("svc send: %v\n%s", err, out)
	}
	log := filepath.Join(home, "victim", "log")
	if _, err := await.Match(log, regexp.MustCompile(`(?m)^mine$`), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(log); bytes.Contains(b, []byte("PWNED")) {
		t.Errorf("another user's keys reached the service:\n%s", b)
	}
}

func holdName(name string) {
	ln, err := net.Listen("unix", name)
	if err != nil {
		fmt.Fprintln(os.Stderr, "monsock:", err)
		os.Exit(1)
	}
	fmt.Println("listening")
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	read := func(c net.Conn) {
		defer wg.Done()
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		b, _ := io.ReadAll(c)
		mu.Lock()
		fmt.Printf("conn %d %q\n", len(b), b)
		mu.Unlock()
	}
	stdinDone := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(stdinDone)
	}()
	ul := ln.(*net.UnixListener)
	acceptorDone := make(chan struct{})
	go func() {
		defer close(acceptorDone)
		for {
			c, err := ul.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go read(c)
		}
	}()
	<-stdinDone
	// Every connection made before stdin closed is queued by now. The
	// acceptor is stopped, then what it left in the queue is taken
	// without the poller (which a passed deadline would skip).
	ul.SetDeadline(time.Now())
	<-acceptorDone
	rc, err := ul.SyscallConn()
	if err == nil {
		rc.Control(func(fd uintptr) {
			for {
				nfd, _, err := syscall.Accept4(int(fd), syscall.SOCK_CLOEXEC)
				if err != nil {
					return
				}
				f := os.NewFile(uintptr(nfd), "conn")
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer f.Close()
					b, _ := io.ReadAll(f)
					mu.Lock()
					fmt.Printf("conn %d %q\n", len(b), b)
					mu.Unlock()
				}()
			}
		})
	}
	wg.Wait()
	fmt.Println("done")
}
