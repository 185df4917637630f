package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// manBlock is the first literal block (.Bd -literal … .Ed) of man/page
// after the text after, as the shell reads it: roff's escapes undone.
func manBlock(t *testing.T, page, after string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "man", page))
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	i := strings.Index(s, after)
	if i < 0 {
		t.Fatalf("%s has no %q", page, after)
	}
	s = s[i:]
	start := strings.Index(s, ".Bd -literal")
	if start < 0 {
		t.Fatalf("%s has no literal block after %q", page, after)
	}
	s = s[start:]
	s = s[strings.Index(s, "\n")+1:]
	s = s[:strings.Index(s, ".Ed\n")]
	return strings.NewReplacer(`\e`, `\`, `\-`, `-`, `\&`, ``).Replace(s)
}

// runBlock runs a man page's block with sh in dir, the binaries first on
// PATH, and returns its stdout.
func runBlock(t *testing.T, dir, block string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", block)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", block, err, out)
	}
	return string(out)
}

// ndjson(1)'s join example "cost per model" is tokens times the price
// (issue 49: it summed a price per line).
func TestNdjsonManJoinCost(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"prices.ndjson": `{"id":"claude-opus-4","outputPerMTok":75}
{"id":"claude-sonnet-4","outputPerMTok":15}
`,
		"a.jsonl": `{"type":"summary","summary":"s"}
{"type":"assistant","message":{"model":"claude-opus-4","usage":{"output_tokens":1000}}}
{"type":"assistant","message":{"model":"claude-sonnet-4","usage":{"output_tokens":2000}}}
`,
		"b.jsonl": `{"type":"assistant","message":{"model":"claude-opus-4","usage":{"output_tokens":3000}}}
`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := strings.Split(strings.TrimSpace(runBlock(t, dir, manBlock(t, "ndjson.1", "Cost per model"))), "\n")
	want := map[string]bool{"claude-opus-4\t0.3": true, "claude-sonnet-4\t0.03": true}
	if len(got) != len(want) {
		t.Fatalf("cost per model: %q, want the rows of %v", got, want)
	}
	for _, row := range got {
		if !want[row] {
			t.Errorf("cost per model: row %q, want one of %v", row, want)
		}
	}
}

// ndjson(1)'s example that builds a request and sends it to agent-host
// says hello first, and the turn runs (issue 49: agent-host refused it).
func TestNdjsonManRequest(t *testing.T) {
	out := runBlock(t, t.TempDir(), manBlock(t, "ndjson.1", "Build the requests of a turn"))
	if !strings.Contains(out, `"type":"run_done","id":"t1"`) || strings.Contains(out, "not_ready") {
		t.Errorf("the turn did not run:\n%s", out)
	}
}

// ndjson(1) says one thing of where's validation: every line, selected or
// not (issue 49: it also said only the selected ones were).
func TestNdjsonManWhereValidates(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "man", "ndjson.1"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(src), "Only the lines selected are validated") {
		t.Error("ndjson.1 says both that every line is validated and that only the lines selected are")
	}
	// and that is what where does: a malformed line it would not select
	// is counted.
	cmd := exec.Command(filepath.Join(binDir, "ndjson"), "where", "--strict", "type==a")
	cmd.Stdin = strings.NewReader("{\"type\":\"a\"}\n{\"type\":\"b\",\n")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "skipped 1 malformed line (first at line 2)") {
		t.Errorf("where --strict over a malformed line it would not select: %v\n%s", err, out)
	}
}
