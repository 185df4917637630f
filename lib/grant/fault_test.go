package grant

import (
	"strings"
	"testing"
	"time"
)

// The failures as the pinned CLIs reported them (PEERS.md's transcripts,
// trimmed to the fields read).
func TestFault(t *testing.T) {
	claudeResult := func(status, result string) string {
		return `{"type":"result","subtype":"success","is_error":true,"terminal_reason":"api_error","api_error_status":` + status + `,"result":"` + result + `","session_id":"s"}`
	}
	codexFailed := func(msg string) string {
		return `{"type":"turn.failed","error":{"message":"` + msg + `"}}`
	}
	cases := []struct {
		harness, line string
		want          string
		transient     bool
		after         time.Duration
	}{
		{Claude, claudeResult("529", "API Error: 529 fake-anthropic forced HTTP 529. This is a server-side issue, usually temporary — try again in a moment."), "HTTP 529", true, 0},
		{Claude, claudeResult("500", "API Error: 500 …"), "HTTP 500", true, 0},
		{Claude, claudeResult("429", "API Error: 429 rate limited, retry after 7"), "HTTP 429", true, 7 * time.Second},
		{Claude, claudeResult("null", "API Error: Connection to the API was lost (ECONNRESET). This is usually temporary — try again."), "a cut stream", true, 0},
		{Claude, claudeResult("401", "Failed to authenticate. API Error: 401 fake-anthropic forced HTTP 401"), "HTTP 401", false, 0},
		{Claude, claudeResult("400", "API Error: 400 bad request"), "HTTP 400", false, 0},
		{Claude, `{"type":"result","subtype":"error_max_turns","is_error":true,"terminal_reason":"max_turns"}`, "", false, 0},
		{Claude, `{"type":"result","subtype":"success","is_error":false,"result":"ok"}`, "", false, 0},
		{Codex, codexFailed("unexpected status 529 \u003cunknown status code\u003e: flaky forced HTTP 529, url: http://127.0.0.1:40673/v1/responses"), "HTTP 529", true, 0},
		{Codex, codexFailed("unexpected status 503 Service Unavailable: x"), "HTTP 503", true, 0},
		{Codex, codexFailed("exceeded retry limit, last status: 429 Too Many Requests, request id: req_1. Please try again in 1.5s"), "HTTP 429", true, 1500 * time.Millisecond},
		{Codex, codexFailed("We’re currently experiencing high demand, which may cause temporary errors."), "HTTP 503", true, 0},
		{Codex, codexFailed("stream disconnected before completion: stream closed before response.completed"), "a cut stream", true, 0},
		{Codex, codexFailed("unexpected status 401 Unauthorized: fake-openai forced HTTP 401, url: http://x"), "HTTP 401", false, 0},
		{Codex, codexFailed(`{\"error\": {\"message\": \"fake-openai forced HTTP 400\", \"type\": \"invalid_request_error\"}}`), "", false, 0},
		{Codex, codexFailed("Incomplete response returned, reason: max_output_tokens"), "", false, 0},
	}
	for _, c := range cases {
		tr := &Transcript{Harness: c.harness}
		tr.Feed([]byte(c.line))
		f := tr.Fault()
		if f.String() != c.want || f.Transient() != c.transient || f.RetryAfter != c.after {
			t.Errorf("%s %.80s: got %q transient %v after %v; want %q %v %v", c.harness, c.line, f, f.Transient(), f.RetryAfter, c.want, c.transient, c.after)
		}
	}
}

func TestCleanEnvFilter(t *testing.T) {
	job := []string{"PATH=/bin", "HOME=/root", "LC_ALL=C", "GH_TOKEN=secret", "ANTHROPIC_API_KEY=k", "OPENAI_API_KEY=o", "GOFLAGS=-mod=mod", "FAKE_KEY=f"}
	kept, dropped := FilterEnv(job, EnvAllowed(Claude, []string{"GO*"}))
	if got := strings.Join(kept, " "); got != "PATH=/bin HOME=/root LC_ALL=C ANTHROPIC_API_KEY=k GOFLAGS=-mod=mod" {
		t.Errorf("claude keeps %s", got)
	}
	if got := strings.Join(dropped, " "); got != "GH_TOKEN OPENAI_API_KEY FAKE_KEY" {
		t.Errorf("claude drops %s", got)
	}
	keys := CodexEnvKeys("model_provider = \"fake\"\n[model_providers.fake]\nenv_key = \"FAKE_KEY\"\n  env_key='OTHER'\n")
	kept, _ = FilterEnv(job, EnvAllowed(Codex, keys))
	if got := strings.Join(kept, " "); got != "PATH=/bin HOME=/root LC_ALL=C OPENAI_API_KEY=o FAKE_KEY=f" {
		t.Errorf("codex keeps %s", got)
	}
}

// A wrap-up grant has no tools whatever the level: claude none at all
// (and no MCP server), codex the read-only sandbox.
func TestNoTools(t *testing.T) {
	g, err := For(Options{Level: 2, Harness: Claude, ToolsURL: "http://127.0.0.1:7/mcp", NoTools: true, Resume: "s", MaxTurns: 1})
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(g.Argv, " ")
	if !strings.Contains(joined, `--mcp-config {"mcpServers":{}} --strict-mcp-config --setting-sources  --tools  `) || strings.Contains(joined, "allowedTools") ||
		strings.Contains(joined, "acceptEdits") || !strings.Contains(joined, "--max-turns 1 --resume s") {
		t.Errorf("claude: %s", joined)
	}
	g, _ = For(Options{Level: 3, Harness: Codex, NoTools: true, Resume: "t"})
	if joined := strings.Join(g.Argv, " "); joined != "codex exec -s read-only resume t - --json --skip-git-repo-check --ignore-rules" {
		t.Errorf("codex: %s", joined)
	}
}
