// Package peers runs runagent end to end against the real Claude Code and
// Codex CLIs, offline, against fake model APIs and a fake MCP server on
// loopback. make test-peers installs the CLIs (pinned) and sets
// AGENTRY_PEERS to where they are; without it these tests are skipped,
// and make test-peers fails when they cannot run.
package peers

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentry/agentry/lib/await"
)

var (
	claudeBin, codexBin, runagentBin string
)

func TestMain(m *testing.M) {
	peers := os.Getenv("AGENTRY_PEERS")
	if peers == "" {
		os.Exit(m.Run()) // each test skips
	}
	claudeBin = filepath.Join(peers, "node_modules/@anthropic-ai/claude-code-linux-x64/claude")
	codexBin = filepath.Join(peers, "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")
	bin := os.Getenv("AGENTRY_BIN")
	if bin == "" {
		dir, _ := os.MkdirTemp("", "peers-bin-")
		defer os.RemoveAll(dir)
		for _, args := range [][]string{{"build", "-o", dir + "/", "../../cmd/..."}} {
			if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
				os.Stderr.Write(out)
				os.Exit(2)
			}
		}
		bin = dir
	}
	runagentBin = filepath.Join(bin, "runagent")
	for _, b := range []string{claudeBin, codexBin, runagentBin} {
		if _, err := os.Stat(b); err != nil {
			os.Stderr.WriteString("peers: missing " + b + " (make test-peers installs the CLIs)\n")
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}

func need(t *testing.T) {
	if claudeBin == "" {
		t.Skip("AGENTRY_PEERS is not set: make test-peers runs these against the real CLIs")
	}
}

type result struct {
	stdout, stderr string
	code           int
}

// claudeEnv is the environment PEERS.md gives for an offline claude.
func claudeEnv(t *testing.T, api *server) []string {
	home := t.TempDir()
	return append(os.Environ(), "ANTHROPIC_BASE_URL="+api.URL, "ANTHROPIC_API_KEY=fake-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "CLAUDE_CODE_MAX_RETRIES=0", "HOME="+home,
		"RUNAGENT_CLAUDE_BIN="+claudeBin, "DISABLE_AUTOUPDATER=1")
}

func runagent(t *testing.T, env []string, dir string, args ...string) result {
	t.Helper()
	cmd := exec.Command(runagentBin, args...)
	cmd.Env, cmd.Dir = env, dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(120 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("runagent %v did not finish in 120s; stderr %s", args, errb.String())
	}
	return result{out.String(), errb.String(), cmd.ProcessState.ExitCode()}
}

// Level 1: a Bash call from the model is refused by the CLI itself — the
// tool does not exist — while the run's MCP tool works.
func TestClaudeLevel1(t *testing.T) {
	need(t)
	api, mcp := fakeAnthropic(t), fakeMCP(t)
	env := claudeEnv(t, api)
	work := t.TempDir()
	r := runagent(t, env, work, "-l", "1", "--tools-url", mcp.URL+"/mcp", `CALL Bash {"command":"echo RAN > bash_ran.txt"}`)
	if os.Getenv("PEERS_DUMP") != "" {
		for _, b := range api.bodies {
			t.Logf("request: %.3000s", b)
		}
	}
	if r.code != 0 || !strings.Contains(r.stdout, "TOOL_RESULT(True)") || !strings.Contains(r.stdout, "No such tool available") {
		t.Fatalf("Bash at level 1: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(work, "bash_ran.txt")); err == nil {
		t.Error("Bash ran at level 1")
	}
	r = runagent(t, env, work, "-l", "1", "--tools-url", mcp.URL+"/mcp", `CALL mcp__tools__echo {"text":"ping from model"}`)
	if strings.Contains(r.stdout, "No such tool available") {
		// Claude Code connects MCP servers as it starts; on a loaded
		// machine the first call can come before the connection. Once.
		t.Logf("the MCP tool was not connected yet (retrying once): %s", r.stdout)
		r = runagent(t, env, work, "-l", "1", "--tools-url", mcp.URL+"/mcp", `CALL mcp__tools__echo {"text":"ping from model"}`)
	}
	if r.code != 0 || strings.TrimSpace(r.stdout) != "TOOL_RESULT(False): echo: ping from model" {
		t.Fatalf("MCP at level 1: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}

// Level 2: Bash and Write act in the working copy.
func TestClaudeLevel2(t *testing.T) {
	need(t)
	api := fakeAnthropic(t)
	env := claudeEnv(t, api)
	work := t.TempDir()
	r := runagent(t, env, work, "-l", "2", `CALL Bash {"command":"echo BASH-RAN > made_by_bash.txt","description":"test"}`)
	if r.code != 0 || !strings.Contains(r.stdout, "TOOL_RESULT(False)") {
		t.Fatalf("Bash at level 2: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(work, "made_by_bash.txt")); err != nil || string(b) != "BASH-RAN\n" {
		t.Errorf("Bash did not act in the working copy: %q %v", b, err)
	}
	target := filepath.Join(work, "written.txt")
	r = runagent(t, env, work, "-l", "2", `CALL Write {"file_path":"`+target+`","content":"WRITTEN\n"}`)
	if b, err := os.ReadFile(target); r.code != 0 || err != nil || string(b) != "WRITTEN\n" {
		t.Errorf("Write at level 2: exit %d, file %q %v\nstdout %s\nstderr %s", r.code, b, err, r.stdout, r.stderr)
	}
	sub := filepath.Join(work, "sub", "deeper.txt")
	os.Mkdir(filepath.Join(work, "sub"), 0o755)
	r = runagent(t, env, work, "-l", "2", `CALL Edit {"file_path":"`+target+`","old_string":"WRITTEN","new_string":"EDITED"}`)
	if b, _ := os.ReadFile(target); r.code != 0 || string(b) != "EDITED\n" {
		t.Errorf("Edit at level 2: exit %d, file %q\nstdout %s\nstderr %s", r.code, b, r.stdout, r.stderr)
	}
	r = runagent(t, env, work, "-l", "2", `CALL Write {"file_path":"`+sub+`","content":"DEEP\n"}`)
	if b, err := os.ReadFile(sub); r.code != 0 || err != nil || string(b) != "DEEP\n" {
		t.Errorf("Write in a subdirectory at level 2: exit %d, file %q %v\nstdout %s\nstderr %s", r.code, b, err, r.stdout, r.stderr)
	}
	// Outside the working copy the level writes nothing: the model is told.
	outside := filepath.Join(t.TempDir(), "outside.txt")
	r = runagent(t, env, work, "-l", "2", `CALL Write {"file_path":"`+outside+`","content":"ESCAPED\n"}`)
	if _, err := os.Stat(outside); err == nil {
		t.Errorf("Write outside the working copy at level 2 wrote %s\nstdout %s\nstderr %s", outside, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "TOOL_RESULT(True)") {
		t.Errorf("Write outside the working copy: the model is not told it failed: %s", r.stdout)
	}
	// Through agentry's host (a policy that says nothing of the path),
	// agentry itself refuses it: the level, not only the CLI's mode.
	pol := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(pol, []byte("[commands]\ndeny = [\"git push*\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runagent(t, env, work, "-l", "2", "--policy", pol, `CALL Write {"file_path":"`+outside+`","content":"ESCAPED\n"}`)
	if _, err := os.Stat(outside); err == nil {
		t.Errorf("Write outside the working copy at level 2 under a policy wrote %s\nstdout %s\nstderr %s", outside, r.stdout, r.stderr)
	}
	r = runagent(t, env, work, "-l", "2", "--policy", pol, `CALL Write {"file_path":"`+filepath.Join(work, "hosted.txt")+`","content":"IN\n"}`)
	if b, err := os.ReadFile(filepath.Join(work, "hosted.txt")); err != nil || string(b) != "IN\n" {
		t.Errorf("Write in the working copy under a policy: %q %v\nstdout %s\nstderr %s", b, err, r.stdout, r.stderr)
	}
	// Nor in its .git, whose config names programs git runs: with and
	// without agentry's host.
	if err := os.MkdirAll(filepath.Join(work, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-l", "2"}, {"-l", "2", "--policy", pol}} {
		cfg := filepath.Join(work, ".git", "config")
		r = runagent(t, env, work, append(args, `CALL Write {"file_path":"`+cfg+`","content":"[core]\n\tfsmonitor = touch pwned\n"}`)...)
		if _, err := os.Stat(cfg); err == nil {
			t.Errorf("runagent %v: Write to .git/config at level 2 wrote it\nstdout %s\nstderr %s", args, r.stdout, r.stderr)
			os.Remove(cfg)
		}
	}
}

// A resumed session continues the same conversation.
func TestClaudeResume(t *testing.T) {
	need(t)
	api := fakeAnthropic(t)
	env := claudeEnv(t, api)
	work := t.TempDir()
	r := runagent(t, env, work, "-l", "1", "--new-session", "--json", "SAY noted. remember ALPHA-7")
	if r.code != 0 || !strings.Contains(r.stdout, `"ok":true`) {
		t.Fatalf("first turn: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	i := strings.Index(r.stdout, `"session":"`)
	session := r.stdout[i+11 : i+11+36]
	r = runagent(t, env, work, "-l", "1", "--resume", session, "RECALL")
	if r.code != 0 || !strings.Contains(r.stdout, "remember ALPHA-7") {
		t.Fatalf("resumed turn: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}

// An API error is a failure with a reason, not an answer.
func TestClaudeAPIError(t *testing.T) {
	need(t)
	api := fakeAnthropic(t)
	r := runagent(t, claudeEnv(t, api), t.TempDir(), "-l", "1", "ERROR 500")
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "runagent: error: claude") || !strings.Contains(r.stderr, "500") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, claudeBin) {
		t.Errorf("the reason names the binary's path: %s", r.stderr)
	}
}

// SIGTERM to runagent: the agent is gone, the signal is named, exit 143;
// the prompt was never on the agent's command line.
func TestClaudeSIGTERM(t *testing.T) {
	need(t)
	api := fakeAnthropic(t)
	dir := t.TempDir()
	cmd, errb, pidFile := startRunagent(t, claudeEnv(t, api), dir, "SLOW 400 UNIQUE-PROMPT-TEXT", "-l", "1")
	defer cmd.Process.Kill()
	pid, err := await.PID(pidFile, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Wait until the model is streaming, so the agent is mid-turn.
	waitRequest(t, api, "claude", errb)
	cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if bytes.Contains(cmdline, []byte("UNIQUE-PROMPT-TEXT")) {
		t.Error("the prompt is on the agent's command line")
	}
	termAndCheck(t, cmd, errb, pid, "claude")
}

// startRunagent starts runagent ARGS --pid-file in dir with stdin as the
// prompt; it returns the command, its stderr and the pid file's path.
func startRunagent(t *testing.T, env []string, dir, stdin string, args ...string) (*exec.Cmd, *bytes.Buffer, string) {
	t.Helper()
	pidFile := filepath.Join(dir, "pid")
	cmd := exec.Command(runagentBin, append(args, "--pid-file", pidFile)...)
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdin = strings.NewReader(stdin)
	errb := new(bytes.Buffer)
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, errb, pidFile
}

// waitRequest waits until the fake API has had a request from the agent.
func waitRequest(t *testing.T, api *server, agent string, errb *bytes.Buffer) {
	t.Helper()
	if !await.Until(60*time.Second, func() bool {
		api.mu.Lock()
		defer api.mu.Unlock()
		return api.requests > 0
	}) {
		t.Fatalf("%s never called the model; stderr %s", agent, errb.String())
	}
}

// waitEnd waits for a started command to end, failing with why after d.
func waitEnd(t *testing.T, cmd *exec.Cmd, d time.Duration, why string) {
	t.Helper()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s (waited %v)", why, d)
	}
}

// termAndCheck sends runagent SIGTERM and checks that it ends with 143,
// names the signal, and leaves the agent (pid) gone.
func termAndCheck(t *testing.T, cmd *exec.Cmd, errb *bytes.Buffer, pid int, agent string) {
	t.Helper()
	cmd.Process.Signal(syscall.SIGTERM)
	waitEnd(t, cmd, 30*time.Second, "runagent did not end after SIGTERM")
	if code := cmd.ProcessState.ExitCode(); code != 143 || !strings.Contains(errb.String(), "runagent: stopped by SIGTERM") {
		t.Errorf("exit %d, stderr %s", code, errb.String())
	}
	if st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && !bytes.Contains(st, []byte(") Z ")) {
		t.Errorf("%s (pid %d) is still running", agent, pid)
	}
}

// codexEnv makes a user CODEX_HOME whose config points codex at the fake.
func codexEnv(t *testing.T, api *server) []string {
	home := t.TempDir()
	cfg := `model = "gpt-5.5"
model_provider = "fake"

[model_providers.fake]
name = "Fake"
base_url = "` + api.URL + `/v1"
env_key = "FAKE_OPENAI_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`
	os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600)
	return append(os.Environ(), "CODEX_HOME="+home, "FAKE_OPENAI_KEY=fake-key", "HOME="+t.TempDir(),
		"XDG_STATE_HOME="+t.TempDir(), "RUNAGENT_CODEX_BIN="+codexBin)
}

func TestCodexText(t *testing.T) {
	need(t)
	api := fakeOpenAI(t)
	r := runagent(t, codexEnv(t, api), t.TempDir(), "--agent", "codex", "-l", "1", "SAY hello from codex")
	for _, b := range api.bodies {
		if strings.Contains(b, "multi_agent") || strings.Contains(b, `"name":"spawn_agent"`) {
			t.Error("codex offered the model a subagent tool")
		}
	}
	if r.code != 0 || strings.TrimSpace(r.stdout) != "hello from codex" {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}

// The read-only sandbox (level 1) against workspace-write (level 2): the
// same shell call writes a file only at level 2, in the working copy.
func TestCodexSandboxes(t *testing.T) {
	need(t)
	api := fakeOpenAI(t)
	env := codexEnv(t, api)
	call := `CALL exec_command {"cmd":"echo CX-RAN > cx_ran.txt; echo DONE"}`
	work1 := t.TempDir()
	r := runagent(t, env, work1, "--agent", "codex", "-l", "1", call)
	if _, err := os.Stat(filepath.Join(work1, "cx_ran.txt")); err == nil {
		t.Errorf("the read-only sandbox let a write through")
	}
	t.Logf("level 1: exit %d %s %s", r.code, r.stdout, r.stderr)
	// Level 1 has no shell at all, as claude's has none: a read-only
	// sandbox would still let one read every file the user can.
	api.mu.Lock()
	for _, b := range api.bodies {
		for _, tool := range []string{`"type":"function","name":"exec_command"`, `"type":"function","name":"shell"`, `"type":"function","name":"view_image"`} {
			if strings.Contains(b, tool) {
				t.Errorf("level 1 offered the model %s", tool)
			}
		}
	}
	seen := len(api.bodies)
	api.mu.Unlock()
	work2 := t.TempDir()
	r = runagent(t, env, work2, "--agent", "codex", "-l", "2", call)
	if b, err := os.ReadFile(filepath.Join(work2, "cx_ran.txt")); r.code != 0 || err != nil || string(b) != "CX-RAN\n" {
		t.Errorf("level 2 shell: exit %d, file %q %v\nstdout %s\nstderr %s", r.code, b, err, r.stdout, r.stderr)
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	if len(api.bodies) <= seen || !strings.Contains(api.bodies[seen], `"type":"function","name":"exec_command"`) {
		t.Errorf("level 2 offered the model no shell")
	}
}

// A resumed codex thread continues the conversation.
func TestCodexResume(t *testing.T) {
	need(t)
	api := fakeOpenAI(t)
	env := codexEnv(t, api)
	work := t.TempDir()
	r := runagent(t, env, work, "--agent", "codex", "-l", "1", "--json", "SAY noted. remember BETA-9")
	i := strings.Index(r.stdout, `"session":"`)
	if r.code != 0 || i < 0 {
		t.Fatalf("first turn: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	session := r.stdout[i+11:]
	session = session[:strings.IndexByte(session, '"')]
	r = runagent(t, env, work, "--agent", "codex", "-l", "1", "--resume", session, "RECALL")
	if r.code != 0 || !strings.Contains(r.stdout, "remember BETA-9") {
		t.Fatalf("resumed turn: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}

// A message and then a failed turn is a failure; an API error too.
func TestCodexFailures(t *testing.T) {
	need(t)
	api := fakeOpenAI(t)
	env := codexEnv(t, api)
	r := runagent(t, env, t.TempDir(), "--agent", "codex", "-l", "1", "FAILAFTER partial progress")
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "turn failed") {
		t.Errorf("message then turn.failed: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	r = runagent(t, env, t.TempDir(), "--agent", "codex", "-l", "1", "ERROR 500")
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "runagent: error: codex") {
		t.Errorf("API error: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}

// SIGTERM mid-turn: codex gone, the signal named, nothing of the run left
// in TMPDIR; the CODEX_HOME is the one kept for the configuration.
func TestCodexSIGTERM(t *testing.T) {
	need(t)
	api := fakeOpenAI(t)
	tmp, state := t.TempDir(), t.TempDir()
	env := append(codexEnv(t, api), "TMPDIR="+tmp, "XDG_STATE_HOME="+state)
	cmd, errb, pidFile := startRunagent(t, env, t.TempDir(), "SLOW 400", "--agent", "codex", "-l", "1")
	defer cmd.Process.Kill()
	waitRequest(t, api, "codex", errb)
	homes, _ := filepath.Glob(filepath.Join(state, "runagent", "codex-homes", "*"))
	if len(homes) != 1 {
		t.Fatalf("%d kept CODEX_HOMEs during the run", len(homes))
	}
	b, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	termAndCheck(t, cmd, errb, pid, "codex")
	// The run's directories are among the user's, in TMPDIR/agentry-UID,
	// which the run made.
	if _, err := os.Stat(filepath.Join(tmp, "agentry-"+strconv.Itoa(os.Getuid()))); err != nil {
		t.Errorf("the user's run directories: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "agentry-*", "runagent-*"))
	fallback, _ := filepath.Glob(filepath.Join(tmp, "runagent-*"))
	if left = append(left, fallback...); len(left) != 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
	if _, err := os.Stat(filepath.Join(homes[0], "config.toml")); err != nil {
		t.Errorf("the kept CODEX_HOME: %v", err)
	}
}
