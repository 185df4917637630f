package tests

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
)

// mcppost URL posts an MCP initialize request to URL and prints the
// answer's status and the start of its body, or "error" and why there was
// none.
func mcppost() {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"other","version":"1"}}}`
	req, _ := http.NewRequest("POST", os.Args[1], strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		fmt.Println("error", err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
	fmt.Println(resp.StatusCode, string(b))
}

// postAs is mcppost as the other user.
func postAs(t *testing.T, u *otherUser, endpoint string) string {
	t.Helper()
	out, err := u.Tool(t, "mcppost", endpoint).CombinedOutput()
	if err != nil {
		t.Fatalf("mcppost as uid %d: %v %s", u.UID, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Security (issue 43, item 1): svc mcp --http, started as the man page
// says, serves its owner and nobody else on the machine: another user who
// finds its port gets 403 before any tool is reachable.
func TestSvcMCPHTTPRefusesOtherUsers(t *testing.T) {
	u := newOtherUser(t)
	home := t.TempDir()
	svcCmd := svcIn(home)
	t.Cleanup(func() { svcCmd("stop", "--all").Run() })
	out, err := svcCmd("start", "--name", "tools", "--", filepath.Join(binDir, "svc"), "mcp", "--http", "127.0.0.1:0", "--scope", "agent").Output()
	if err != nil {
		t.Fatalf("%v %s", err, out)
	}
	m := regexp.MustCompile(`^tools is ready at (http://127\.0\.0\.1:\d+/)(mcp)? `).FindSubmatch(out)
	if m == nil {
		t.Fatalf("svc start of svc mcp: %s", out)
	}
	endpoint := string(m[1]) + "mcp"
	if got := postAs(t, u, endpoint); !strings.HasPrefix(got, "403 svc mcp serves only the user who started it.") {
		t.Errorf("another user's initialize: %q, want 403", got)
	}
	// The owner is served as before.
	if code, body := initialize(t, endpoint, strings.TrimSuffix(string(m[1]), "/")); code != 200 {
		t.Errorf("the owner's initialize: %d %s", code, body)
	}
	// What svc mcp says in its log of the refusal: nothing a user need act
	// on, so nothing; its log has only the URL line.
	log, _ := svcCmd("tail", "tools").Output()
	if strings.Count(strings.TrimSpace(string(log)), "\n") > 0 {
		t.Errorf("svc mcp's log: %s", log)
	}
}

// Security (issue 43, item 3): with --clean-env the agent runs as the same
// user as runagent, and must still not read the variables it was not
// given from runagent's own /proc/PID/environ. Run as an ordinary user:
// root reads any process's environ whatever it does.
func TestRunagentCleanEnvHidesItsOwnEnviron(t *testing.T) {
	u := newOtherUser(t)
	dir := t.TempDir()
	reachable(t, dir)
	transcript, err := os.ReadFile(filepath.Join("..", "lib", "grant", "testdata", "claude", "D-level2-bash.stdout"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "answer"), transcript, 0o644); err != nil {
		t.Fatal(err)
	}
	// The agent: it reads its parent's environment and memory, where the
	// secret would be, then answers as claude.
	agent := filepath.Join(dir, "agent")
	script := "#!/bin/sh\n{ tr '\\0' '\\n' < /proc/$PPID/environ; echo \"environ: $?\"; head -c 1 /proc/$PPID/mem; echo \"mem: $?\"; } > \"$SPY_OUT\" 2>&1\n" +
		"cat " + filepath.Join(dir, "answer") + "\n"
	if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// runagent from a directory the other user can reach: the checkout's
	// bin may be under a home it cannot enter.
	runagent := filepath.Join(dir, "runagent")
	b, err := os.ReadFile(filepath.Join(binDir, "runagent"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(runagent, b, 0o755); err != nil {
		t.Fatal(err)
	}
	spy := filepath.Join(u.Home, "spy")
	const secret = "ghp_0123456789abcdefSECRET"
	cmd := u.Command(runagent, "-l", "2", "--clean-env", "--env-allow", "SPY_OUT")
	cmd.Env = append(cmd.Env, "RUNAGENT_CLAUDE_BIN="+agent, "GH_TOKEN="+secret, "SPY_OUT="+spy)
	cmd.Stdin = strings.NewReader("hello")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("runagent as uid %d: %v\n%s", u.UID, err, out)
	}
	got, err := os.ReadFile(spy)
	if err != nil {
		t.Fatalf("the agent did not run: %v\n%s", err, out)
	}
	if strings.Contains(string(got), secret) {
		t.Errorf("the agent read GH_TOKEN from runagent's environ:\n%s", got)
	}
	if !strings.Contains(string(got), "Permission denied") || strings.Contains(string(got), "environ: 0") {
		t.Errorf("the agent read runagent's environ:\n%s", got)
	}
	if strings.Contains(string(out), secret) {
		t.Errorf("runagent's output has the secret:\n%s", out)
	}
}

// Security (issue 43, item 6): a state home another user made — a
// /tmp/svc a CI script names, made first by someone else — is refused by
// every command, before a service of it is stopped, started or logged to.
func TestSvcRefusesAHomeAnotherUserMade(t *testing.T) {
	u := newOtherUser(t)
	planted := filepath.Join(u.Home, "svc")
	if out, err := u.Command("mkdir", "-m", "0755", planted).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	reachable(t, u.Home)
	for _, args := range [][]string{{"ls"}, {"stop", "--all"}, {"start", "--name", "web", "--", "sleep", "4242"}, {"gc"}} {
		cmd := exec.Command(filepath.Join(binDir, "svc"), args...)
		cmd.Env = append(os.Environ(), "SVC_HOME="+planted)
		out, err := cmd.CombinedOutput()
		want := "svc: error: the state directory " + planted + " is owned by uid 61917, not by you (uid 0): another user could have made it or can change it\n"
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.HasPrefix(string(out), want) {
			t.Errorf("svc %v: %v\n%s", args, err, out)
		}
	}
	if entries, _ := os.ReadDir(planted); len(entries) != 0 {
		t.Errorf("svc wrote into the other user's directory: %v", entries)
	}
	// A home of one's own under the same sticky /tmp is used as ever.
	mine := filepath.Join(t.TempDir(), "svc")
	cmd := exec.Command(filepath.Join(binDir, "svc"), "ls")
	cmd.Env = append(os.Environ(), "SVC_HOME="+mine)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("svc ls in a home of one's own: %v %s", err, out)
	}
}

// Security (issue 43, item 8): svc mcp --http holds at most 128
// connections; one past that is closed at once, and once they go the
// server answers again.
func TestSvcMCPHTTPConnectionCap(t *testing.T) {
	home := t.TempDir()
	svcCmd := svcIn(home)
	t.Cleanup(func() { svcCmd("stop", "--all").Run() })
	out, err := svcCmd("start", "--name", "tools", "--", filepath.Join(binDir, "svc"), "mcp", "--http", "127.0.0.1:0").Output()
	if err != nil {
		t.Fatalf("%v %s", err, out)
	}
	m := regexp.MustCompile(`^tools is ready at http://(127\.0\.0\.1:\d+)/`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("svc start of svc mcp: %s", out)
	}
	addr := string(m[1])
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range 128 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	// The server has taken each of them once a request on the last one
	// is answered.
	fmt.Fprintf(held[127], "GET /mcp HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	held[127].SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := held[127].Read(make([]byte, 64)); n == 0 {
		t.Fatalf("the 128th connection was not served: %v", err)
	}
	extra, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	extra.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := extra.Read(make([]byte, 64)); n != 0 || err != io.EOF {
		t.Errorf("the 129th connection: %d bytes, %v; want it closed", n, err)
	}
	for _, c := range held {
		c.Close()
	}
	held = nil
	// The server gives a place back when it sees its connection close:
	// asked again until then.
	if !await.Until(10*time.Second, func() bool {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return false
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /mcp HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		n, _ := c.Read(make([]byte, 64))
		return n > 0
	}) {
		t.Error("the server did not answer once the connections went")
	}
}
