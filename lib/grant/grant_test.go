package grant

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestClaudeGrants(t *testing.T) {
	g, err := For(Options{Level: 1, Harness: "claude", ToolsURL: "http://127.0.0.1:7/run/r1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"claude", "-p", "--output-format", "stream-json", "--verbose",
		"--mcp-config", `{"mcpServers":{"tools":{"type":"http","url":"http://127.0.0.1:7/run/r1"}}}`, "--strict-mcp-config",
		"--setting-sources", "", "--tools", "", "--allowedTools", "mcp__tools__*"}
	if strings.Join(g.Argv, "|") != strings.Join(want, "|") {
		t.Errorf("level 1:\n got %q\nwant %q", g.Argv, want)
	}
	if !g.Scratch || len(g.BuiltinTools) != 0 || g.Subagents {
		t.Errorf("level 1 grant %+v", g)
	}
	g2, _ := For(Options{Level: 2, Harness: "claude", Model: "claude-sonnet-5", SessionID: "11111111-2222-4333-8444-555555555555"})
	joined := strings.Join(g2.Argv, " ")
	for _, want := range []string{`--mcp-config {"mcpServers":{}}`, "--tools Read,Glob,Grep,Edit,Write,Bash", "--allowedTools Read,Glob,Grep,Bash ",
		"--permission-mode acceptEdits", "--model claude-sonnet-5", "--session-id 11111111-2222-4333-8444-555555555555"} {
		if !strings.Contains(joined, want) {
			t.Errorf("level 2 argv lacks %q: %s", want, joined)
		}
	}
	for _, g := range []*Grant{g, g2} {
		for _, a := range g.Argv {
			if strings.Contains(a, "Task") || strings.Contains(a, "bypassPermissions") {
				t.Errorf("grant has %q", a)
			}
		}
	}
	if g2.Scratch {
		t.Error("level 2 runs in a scratch directory")
	}
}

func TestCodexGrants(t *testing.T) {
	g, _ := For(Options{Level: 1, Harness: "codex", ToolsURL: "http://127.0.0.1:7/run/r1"})
	if got := strings.Join(g.Argv, " "); got != "codex exec -s read-only --json --skip-git-repo-check --ignore-rules" {
		t.Errorf("level 1: %s", got)
	}
	if !strings.Contains(g.CodexConfig, "multi_agent = false") || !strings.Contains(g.CodexConfig, `default_tools_approval_mode = "approve"`) ||
		!strings.Contains(g.CodexConfig, `url = "http://127.0.0.1:7/run/r1"`) {
		t.Errorf("config:\n%s", g.CodexConfig)
	}
	g, _ = For(Options{Level: 3, Harness: "codex", Resume: "01a22faa-8cff", Model: "gpt-5.5"})
	// exec-level options before resume; never --ephemeral.
	if got := strings.Join(g.Argv, " "); got != "codex exec -s workspace-write -c sandbox_workspace_write.network_access=true -m gpt-5.5 resume 01a22faa-8cff - --json --skip-git-repo-check --ignore-rules" {
		t.Errorf("level 3 resume: %s", got)
	}
}

func TestGrantErrors(t *testing.T) {
	for _, o := range []Options{
		{Level: 0, Harness: "claude"}, {Level: 4}, {Level: 1, Harness: "gemini"}, {Level: 1, Harness: "Claude"},
		{Level: 1, SessionID: "not-a-uuid"}, {Level: 1, Harness: "codex", SessionID: "11111111-2222-4333-8444-555555555555"},
		{Level: 1, SessionID: "11111111-2222-4333-8444-555555555555", Resume: "x"},
	} {
		if _, err := For(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

// The answers of the recorded real runs.
func TestAnswersFromTranscripts(t *testing.T) {
	cases := []struct {
		harness, name string
		text, reason  string
		session       string
	}{
		{Claude, "level1-mcp-echo", "TOOL_RESULT(False): echo: ping from model", "", "11111111-2222-4333-8444-555555555555"},
		{Claude, "err500-streamjson", "", "claude: API Error: 500 fake-anthropic forced HTTP 500", "b6cde0dc-dc39-422e-994c-9f46a22027ee"},
		{Codex, "resume-1-new", "FIRST-CX", "", "01a22faa-8cff-7c22-b46c-f4df0b04a6d5"},
		{Codex, "message-then-turn-failed", "", "codex: the turn failed: We’re currently experiencing high demand", ""},
		{Codex, "err-failed", "", "codex: the turn failed: stream disconnected before completion", ""},
	}
	for _, c := range cases {
		f, err := os.Open(filepath.Join("testdata", c.harness, c.name+".stdout"))
		if err != nil {
			t.Fatal(err)
		}
		tr := &Transcript{Harness: c.harness}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			tr.Feed(sc.Bytes())
		}
		f.Close()
		text, reason := tr.Answer()
		if text != c.text || !strings.HasPrefix(reason, c.reason) || (c.reason == "") != (reason == "") {
			t.Errorf("%s/%s: text %q reason %q", c.harness, c.name, text, reason)
		}
		if c.session != "" && tr.Session != c.session {
			t.Errorf("%s/%s: session %q", c.harness, c.name, tr.Session)
		}
	}
	// A message followed by turn.failed: the failure wins even on exit 0.
	tr := &Transcript{Harness: Codex}
	for _, l := range []string{`{"type":"thread.started","thread_id":"t"}`, `{"type":"error","message":"Reconnecting... 1/5"}`,
		`{"type":"item.completed","item":{"type":"agent_message","text":"done!"}}`, `{"type":"turn.completed"}`} {
		tr.Feed([]byte(l))
	}
	if text, reason := tr.Answer(); text != "done!" || reason != "" {
		t.Errorf("an error line before a retry is not a failure: %q %q", text, reason)
	}
}

func TestShellQuoteRoundTrips(t *testing.T) {
	for _, s := range []string{"plain", "", "two words", "it's", `a"b`, "$HOME", "x;y", "--flag=v/1"} {
		out, err := exec.Command("sh", "-c", "printf %s "+ShellQuote(s)).Output()
		if err != nil || string(out) != s {
			t.Errorf("ShellQuote(%q) = %s: the shell read %q (%v)", s, ShellQuote(s), out, err)
		}
	}
}

func TestNewSessionIDIsAUUIDClaudeTakes(t *testing.T) {
	a, b := NewSessionID(), NewSessionID()
	if a == b {
		t.Fatalf("two session ids are the same: %s", a)
	}
	if _, err := For(Options{Level: 1, Harness: Claude, SessionID: a}); err != nil {
		t.Errorf("%s: %v", a, err)
	}
}

// Asking offers every code tool but allows only the level's own, and
// turns on claude's stdio prompts; codex cannot ask through exec.
func TestAskGrant(t *testing.T) {
	for level, want := range map[int][2]string{1: {"", "Read,Glob,Grep,Edit,Write,Bash"}, 2: {"Read,Glob,Grep,Edit,Write", "Bash"}} {
		g, err := For(Options{Level: level, Harness: Claude, Ask: true, Stream: true})
		if err != nil {
			t.Fatal(err)
		}
		argv := strings.Join(g.Argv, " ")
		if strings.Join(g.BuiltinTools, ",") != want[0] || strings.Join(g.AskTools, ",") != want[1] {
			t.Errorf("level %d: allowed %v asked %v", level, g.BuiltinTools, g.AskTools)
		}
		if !strings.Contains(argv, "--tools Read,Glob,Grep,Edit,Write,Bash") || !strings.Contains(argv, "--permission-prompt-tool stdio") {
			t.Errorf("level %d argv: %s", level, argv)
		}
		// Edit and Write are asked of agentry, which allows one in the
		// working copy (Granted) and puts any other to the daemon.
		if level == 2 && (!strings.Contains(argv+" ", "--allowedTools Read,Glob,Grep ") || strings.Contains(argv, "acceptEdits")) {
			t.Errorf("level 2 argv: %s", argv)
		}
		if level == 1 && strings.Contains(argv, "--allowedTools") {
			t.Errorf("level 1 allows: %s", argv)
		}
	}
	if g, _ := For(Options{Level: 2, Harness: Claude}); strings.Contains(strings.Join(g.Argv, " "), "permission-prompt-tool") {
		t.Error("a grant that does not ask has --permission-prompt-tool")
	}
	if _, err := For(Options{Level: 2, Harness: Codex, Ask: true}); err == nil {
		t.Error("codex exec was given an asking grant")
	}
}

// The version an error tells a user to install is the one make
// test-peers tests against.
func TestPinnedIsWhatThePeersInstall(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "tests", "peers", "install.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{Claude, Codex} {
		want := "want_" + h + "=\"" + Pinned(h) + "\"\n"
		if !strings.Contains(string(b), want) {
			t.Errorf("tests/peers/install.sh has no %s: grant.Pinned(%q) and the peers' pin differ", strings.TrimSpace(want), h)
		}
	}
}

// Questions offers AskUserQuestion, asked on stdio and never allowed
// outright; AskAll asks on stdio with the level's flags otherwise the
// same. Neither is codex's.
func TestClaudeQuestionsAndAskAll(t *testing.T) {
	plain, _ := For(Options{Level: 2, Harness: Claude, Stream: true})
	q, err := For(Options{Level: 2, Harness: Claude, Stream: true, Questions: true})
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(q.Argv, " ")
	for _, want := range []string{"--tools Read,Glob,Grep,Edit,Write,Bash,AskUserQuestion", "--permission-prompt-tool stdio",
		"--allowedTools Read,Glob,Grep,Bash ", "--permission-mode acceptEdits"} {
		if !strings.Contains(joined, want) {
			t.Errorf("questions argv lacks %q: %s", want, joined)
		}
	}
	l1, _ := For(Options{Level: 1, Harness: Claude, Stream: true, Questions: true})
	if j := strings.Join(l1.Argv, " "); !strings.Contains(j, "--tools AskUserQuestion ") || strings.Contains(j, "--allowedTools") {
		t.Errorf("level 1 with questions: %s", j)
	}
	all, _ := For(Options{Level: 2, Harness: Claude, Stream: true, AskAll: true})
	if got, want := strings.Join(all.Argv, " "), strings.Join(plain.Argv, " ")+" --permission-prompt-tool stdio"; !sameWords(got, want) {
		t.Errorf("ask-all argv %s, want the level's own and the prompt tool: %s", got, want)
	}
	if j := strings.Join(plain.Argv, " "); strings.Contains(j, "AskUserQuestion") || strings.Contains(j, "--permission-prompt-tool") {
		t.Errorf("plain argv offers questions or asks: %s", j)
	}
	none, _ := For(Options{Level: 2, Harness: Claude, Stream: true, Questions: true, NoTools: true})
	if strings.Contains(strings.Join(none.Argv, " "), "AskUserQuestion") {
		t.Errorf("no tools still offers questions: %q", none.Argv)
	}
	for _, o := range []Options{{Level: 2, Harness: Codex, Questions: true}, {Level: 2, Harness: Codex, AskAll: true}} {
		if _, err := For(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

// sameWords: a and b have the same words, in any order.
func sameWords(a, b string) bool {
	x, y := strings.Fields(a), strings.Fields(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}
