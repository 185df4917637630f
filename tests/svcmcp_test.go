package tests

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpSession is an MCP client session with svc mcp, from the SDK svc mcp
// is built on.
type mcpSession struct {
	t *testing.T
	*mcp.ClientSession
}

func connectMCP(t *testing.T, transport mcp.Transport) *mcpSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	s, err := c.Connect(ctx, transport, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return &mcpSession{t, s}
}

// call calls a tool and returns its structured result, or its error text
// when it answered with a tool error; a protocol error fails the test.
func (s *mcpSession) call(name string, args map[string]any) (map[string]any, string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		s.t.Fatalf("%s %v: %v", name, args, err)
	}
	if res.IsError {
		var text []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text = append(text, tc.Text)
			}
		}
		return nil, strings.Join(text, "\n")
	}
	var out map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &out)
	return out, ""
}

// must calls a tool that must succeed.
func (s *mcpSession) must(name string, args map[string]any) map[string]any {
	s.t.Helper()
	out, errText := s.call(name, args)
	if errText != "" {
		s.t.Fatalf("%s %v: tool error %s", name, args, errText)
	}
	return out
}

// mustFail calls a tool that must answer with a tool error matching re.
func (s *mcpSession) mustFail(name string, args map[string]any, re string) {
	s.t.Helper()
	out, errText := s.call(name, args)
	if errText == "" {
		s.t.Fatalf("%s %v succeeded: %v", name, args, out)
	}
	if !regexp.MustCompile(re).MatchString(errText) {
		s.t.Fatalf("%s %v: error %q does not match %s", name, args, errText, re)
	}
}

// Every tool over stdio, with a scope: a server started, read by cursor and
// stopped; bad input answered with tool errors; and nothing of the user's
// outside the scope seen or touched.
func TestSvcMCPStdio(t *testing.T) {
	home := t.TempDir()
	svcCmd := svcIn(home)
	t.Cleanup(func() { svcCmd("stop", "--all").Run() })
	// The user's own service, outside any scope.
	if out, err := svcCmd("start", "--name", "mine", "--settle", "100ms", "--", "sleep", "1000").CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	cmd := svcCmd("mcp", "--scope", "agent")
	cmd.Dir = t.TempDir()
	s := connectMCP(t, &mcp.CommandTransport{Command: cmd})
	exerciseTools(t, s)

	// The scope holds: the user's service is not there for the agent.
	list := s.must("list", nil)
	for _, sv := range list["services"].([]any) {
		if n := sv.(map[string]any)["name"]; n == "mine" || strings.Contains(n.(string), "/") {
			t.Errorf("list shows %v", n)
		}
	}
	for _, tool := range []string{"status", "stop", "output"} {
		s.mustFail(tool, map[string]any{"name": "mine"}, `^no service called mine$`)
	}
	s.mustFail("status", map[string]any{"name": "../mine"}, `cannot start with|has`)
	if out, _ := svcCmd("status", "mine").Output(); !strings.HasPrefix(string(out), "mine: running") && !strings.HasPrefix(string(out), "mine: starting") {
		t.Errorf("the user's service after the agent's calls: %s", out)
	}
	// The agent's services are the scope's in svc ls.
	out, _ := svcCmd("ls").Output()
	if !regexp.MustCompile(`(?m)^agent/web +stopped`).Match(out) {
		t.Errorf("svc ls:\n%s", out)
	}
}

// The same tools over streamable HTTP, with svc mcp itself a service of
// svc.
func TestSvcMCPHTTP(t *testing.T) {
	home := t.TempDir()
	svcCmd := svcIn(home)
	t.Cleanup(func() { svcCmd("stop", "--all").Run() })
	out, err := svcCmd("start", "--name", "mcp", "--", filepath.Join(binDir, "svc"), "mcp", "--http", "127.0.0.1:0", "--scope", "web-agent").Output()
	if err != nil {
		t.Fatalf("%v %s", err, out)
	}
	// Ready by the URL line it prints, or by its listening socket when svc
	// sees that first (it listens, then prints): the port either way.
	m := regexp.MustCompile(`^mcp is ready at (http://127\.0\.0\.1:\d+/)(mcp)? `).FindSubmatch(out)
	if m == nil {
		t.Fatalf("svc start of svc mcp: %s", out)
	}
	s := connectMCP(t, &mcp.StreamableClientTransport{Endpoint: string(m[1]) + "mcp"})
	exerciseTools(t, s)

	// The Origin header, as the MCP specification requires: a page of
	// another site (a DNS rebinding) is refused; a page of this machine,
	// or a client that sends none (above), is answered.
	endpoint := string(m[1]) + "mcp"
	for origin, want := range map[string]int{"http://evil.example:8080": 403, "null": 403,
		strings.TrimSuffix(string(m[1]), "/"): 200, "http://localhost:5173": 200} {
		if got, body := initialize(t, endpoint, origin); got != want {
			t.Errorf("Origin %s: %d %s, want %d", origin, got, body, want)
		} else if want == 403 && !strings.Contains(body, `"jsonrpc":"2.0","error":{"code":-32600,"message":"Forbidden: `) {
			t.Errorf("Origin %s: body %s", origin, body)
		}
	}

	// Not on any other address.
	bad := exec.Command(filepath.Join(binDir, "svc"), "mcp", "--http", "0.0.0.0:0")
	bad.Env = append(bad.Environ(), "SVC_HOME="+home)
	if b, err := bad.CombinedOutput(); err == nil || !strings.Contains(string(b), "svc: error: --http 0.0.0.0:0: svc mcp listens only on a loopback address") {
		t.Errorf("--http 0.0.0.0:0: %v %s", err, b)
	}
}

// initialize posts an MCP initialize request with an Origin header, and
// returns the status and body of the answer.
func initialize(t *testing.T, endpoint, origin string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"page","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Origin", origin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", endpoint, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b)
}

func exerciseTools(t *testing.T, s *mcpSession) {
	if l := s.must("list", nil); len(l["services"].([]any)) != 0 {
		t.Fatalf("a new scope lists %v", l)
	}
	// start: a real server on a port svc picks, ready with its URL.
	st := s.must("start", map[string]any{"name": "web", "command": "echo booting; exec python3 -m http.server {port} --bind 127.0.0.1", "port": "auto"})
	if st["status"] != "ready" || !regexp.MustCompile(`^http://127\.0\.0\.1:\d+/$`).MatchString(st["url"].(string)) {
		t.Fatalf("start: %v", st)
	}
	s.mustFail("start", map[string]any{"name": "web", "command": "sleep 1"}, `a service called web is running`)
	s.mustFail("start", map[string]any{"command": ""}, `command is empty`)
	s.mustFail("start", map[string]any{"command": "no-such-command-here"}, `exited with code 127`)
	s.mustFail("start", map[string]any{"command": "true", "port": "lots"}, `port is auto or a port number`)
	s.mustFail("start", map[string]any{"command": "true", "port": 1.5}, `^port is auto or a port number, not 1.5$`)

	// output: rows by cursor, the next cursor, nothing new, a cursor from
	// the future refused.
	page := s.must("output", map[string]any{"name": "web"})
	rows := page["rows"].([]any)
	if len(rows) < 2 || rows[0].(map[string]any)["line"] != "booting" || page["ended"] != false {
		t.Fatalf("output from 0: %v", page)
	}
	next := page["next_cursor"].(float64)
	if next != float64(len(rows)) {
		t.Errorf("next_cursor %v after %d rows", next, len(rows))
	}
	if again := s.must("output", map[string]any{"name": "web", "cursor": next}); len(again["rows"].([]any)) != 0 {
		t.Errorf("nothing new after the cursor, got %v", again)
	}
	one := s.must("output", map[string]any{"name": "web", "max_rows": 1})
	if len(one["rows"].([]any)) != 1 || one["more"] != true || one["next_cursor"].(float64) != 1 {
		t.Errorf("max_rows 1: %v", one)
	}
	s.mustFail("output", map[string]any{"name": "web", "cursor": next + 100}, `cursor \d+ is past the last row`)
	s.mustFail("output", map[string]any{"name": "nope"}, `^no service called nope$`)
	// A negative number is refused, not taken for the default.
	s.mustFail("output", map[string]any{"name": "web", "max_rows": -1}, `^max_rows cannot be negative \(-1\); leave it out for the default$`)
	s.mustFail("output", map[string]any{"name": "web", "max_bytes": -10}, `^max_bytes cannot be negative`)
	s.mustFail("start", map[string]any{"name": "neg", "command": "sleep 1", "ready_timeout_seconds": -1}, `^ready_timeout_seconds cannot be negative`)
	s.mustFail("run", map[string]any{"command": "true", "timeout_seconds": -0.5}, `^timeout_seconds cannot be negative \(-0\.5\)`)

	status := s.must("status", map[string]any{"name": "web"})
	if status["status"] != "ready" || status["rows"].(float64) < 2 {
		t.Errorf("status: %v", status)
	}
	// who: web's port is web's, named within the scope; a port nothing
	// listens on is nobody's.
	port := status["port"].(float64)
	who := s.must("who", map[string]any{"port": port})
	if who["service"] != "web" || who["listening"] != true || !strings.Contains(who["summary"].(string), "of service web") {
		t.Errorf("who %v: %v", port, who)
	}
	if who := s.must("who", map[string]any{"port": 1}); who["listening"] != false || who["service"] != nil {
		t.Errorf("who 1: %v", who)
	}
	s.mustFail("who", map[string]any{"port": 70000}, `70000 is not a port`)
	// The list has web ready, and the command that could not run as it
	// ended (its log is there to read).
	live := 0
	for _, sv := range s.must("list", nil)["services"].([]any) {
		if m := sv.(map[string]any); m["status"] == "ready" && m["name"] == "web" {
			live++
		} else if m["status"] != "exited" {
			t.Errorf("list: %v", m)
		}
	}
	if live != 1 {
		t.Errorf("list: web is not ready in it")
	}

	// run: a command that ends; one that cannot run at all; one that looks
	// long-running goes to the background, in the scope.
	r := s.must("run", map[string]any{"command": "echo out; echo err >&2; exit 3"})
	if r["exit_code"].(float64) != 3 || r["output"] != "out\nerr\n" {
		t.Errorf("run: %v", r)
	}
	s.mustFail("run", map[string]any{"command": "no-such-command-here --flag"}, `could not be run \(exit 127\)`)
	r = s.must("run", map[string]any{"command": "sleep 30", "timeout_seconds": 0.3})
	if r["exit_code"].(float64) != 124 || r["timed_out"] != true {
		t.Errorf("run past its timeout: %v", r)
	}
	bg := s.must("run", map[string]any{"name": "dev", "command": "python3 -m http.server 0 --bind 127.0.0.1"})
	if b, ok := bg["background"].(map[string]any); !ok || b["name"] != "dev" {
		t.Errorf("run of a server: %v", bg)
	}

	// stop, then the log says the service ended.
	if st := s.must("stop", map[string]any{"name": "web"}); st["stopped"] != true {
		t.Errorf("stop: %v", st)
	}
	if st := s.must("stop", map[string]any{"name": "web"}); st["stopped"] != false {
		t.Errorf("stop again: %v", st)
	}
	s.must("stop", map[string]any{"name": "dev"})
	if end := s.must("output", map[string]any{"name": "web", "cursor": next}); end["ended"] != true {
		t.Errorf("output after stop: %v", end)
	}

	// Started again under its name, web's output is this start's: the
	// earlier start's rows are before start_cursor, and read only from an
	// explicit cursor 0.
	before := s.must("status", map[string]any{"name": "web"})["rows"].(float64)
	st = s.must("start", map[string]any{"name": "web", "command": "echo second; exec python3 -m http.server {port} --bind 127.0.0.1", "port": "auto"})
	if st["start_cursor"] != before {
		t.Errorf("start again: start_cursor %v, want %v (rows before it)", st["start_cursor"], before)
	}
	page = s.must("output", map[string]any{"name": "web"})
	if rows := page["rows"].([]any); len(rows) == 0 || rows[0].(map[string]any)["line"] != "second" || page["start_cursor"] != before {
		t.Errorf("output of the second start: %v", page)
	}
	all := s.must("output", map[string]any{"name": "web", "cursor": 0})
	if rows := all["rows"].([]any); len(rows) == 0 || rows[0].(map[string]any)["line"] != "booting" {
		t.Errorf("output from cursor 0: %v", all)
	}
	s.must("stop", map[string]any{"name": "web"})
	// Output is plain text: a colour's escapes and a terminal's carriage
	// return are left out of the rows (the log keeps them).
	s.must("start", map[string]any{"name": "colour", "command": `printf '\033[1;32mgreen\033[0m\r\n\033]0;title\007done\n'; exec sleep 600`, "ready_timeout_seconds": 0.3})
	// (Both rows are in the log once the monitor has read them: asked
	// again until then, within a deadline.)
	await.Until(10*time.Second, func() bool {
		page = s.must("output", map[string]any{"name": "colour"})
		return len(page["rows"].([]any)) >= 2
	})
	if rows := page["rows"].([]any); len(rows) != 2 || rows[0].(map[string]any)["line"] != "green" || rows[1].(map[string]any)["line"] != "done" {
		t.Errorf("output of colours: %v", page)
	}
	s.must("stop", map[string]any{"name": "colour"})
	// A port given as a JSON number is taken as its string is.
	free := freePort(t)
	num := s.must("start", map[string]any{"name": "num", "command": "exec python3 -m http.server {port} --bind 127.0.0.1", "port": free})
	if num["status"] != "ready" || num["port"] != float64(free) {
		t.Errorf("start with a numeric port %d: %v", free, num)
	}
	s.must("stop", map[string]any{"name": "num"})
}

// start of a watcher answers as soon as svc knows it does not listen, not
// after its ready timeout (300s here: past the call's own 60s deadline),
// and says so in an agent's terms.
func TestSvcMCPWatcher(t *testing.T) {
	home := t.TempDir()
	svcCmd := svcIn(home)
	t.Cleanup(func() { svcCmd("stop", "--all").Run() })
	cmd := svcCmd("mcp", "--scope", "agent")
	cmd.Dir = t.TempDir()
	s := connectMCP(t, &mcp.CommandTransport{Command: cmd})
	st := s.must("start", map[string]any{"name": "logs", "command": "touch app.log; exec tail -f app.log", "ready_timeout_seconds": 300})
	if st["status"] != "running" || !strings.Contains(st["summary"].(string), "logs is running (pid ") ||
		!strings.Contains(st["summary"].(string), "does not listen") {
		t.Errorf("start of tail -f: %v", st)
	}
}

// freePort is a TCP port nothing listens on at the moment.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
