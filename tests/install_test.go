package tests

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoInstall installs the suite as a Go user does, `go install
// ./cmd/...` into an empty GOBIN, and runs it from there with nothing else
// of the suite on PATH: ndjson check --schema finds ndjson-schema beside
// it, and so does runagent --schema; svc start finds svc-monitor; every
// command starts.
func TestGoInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("go install builds every command")
	}
	gobin := t.TempDir()
	install := exec.Command("go", "install", "./cmd/...")
	install.Dir = ".."
	install.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install ./cmd/...: %v\n%s", err, out)
	}

	// PATH: the installed binaries, and a shell, cat and sleep.
	tools := t.TempDir()
	for _, name := range []string{"sh", "cat", "sleep"} {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(tools, name)); err != nil {
			t.Fatal(err)
		}
	}
	work := t.TempDir()
	env := []string{"PATH=" + gobin + ":" + tools, "HOME=" + work, "TMPDIR=" + t.TempDir()}
	run := func(stdin string, extraEnv []string, name string, args ...string) (stdout, stderr string, code int) {
		t.Helper()
		cmd := exec.Command(filepath.Join(gobin, name), args...)
		cmd.Dir, cmd.Env, cmd.Stdin = work, append(env, extraEnv...), strings.NewReader(stdin)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			code = ee.ExitCode()
		case err != nil:
			t.Fatalf("%s: %v", name, err)
		}
		return out.String(), errb.String(), code
	}
	write := func(name, text string) string {
		t.Helper()
		p := filepath.Join(work, name)
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("good.json", `{"type":"object","properties":{"answer":{"type":"integer"}},"required":["answer"]}`)
	write("bad.json", `{"type":3}`)

	for _, name := range []string{"ndjson", "ndjson-schema", "runagent", "svc", "svc-monitor", "agent-host"} {
		if out, errText, code := run("", nil, name, "--version"); code != 0 || !strings.HasPrefix(out, name+" ") {
			t.Errorf("%s --version: exit %d, stdout %q, stderr %q", name, code, out, errText)
		}
	}

	// svc start finds svc-monitor beside svc; the service is stopped with
	// its tree, and svc ls then shows it stopped.
	svcEnv := []string{"SVC_HOME=" + filepath.Join(work, "svc")}
	t.Cleanup(func() { run("", svcEnv, "svc", "stop", "--all", "--grace", "1s") })
	out, errText, code := run("", svcEnv, "svc", "start", "--name", "w", "--ready-regex", "^up$", "--", "sh", "-c", "echo up; exec sleep 600")
	if code != 0 || !strings.HasPrefix(out, "w is ready") {
		t.Errorf("svc start: exit %d, stdout %q, stderr %q; want w is ready", code, out, errText)
	}
	out, errText, code = run("", svcEnv, "svc", "stop", "w")
	if code != 0 || !strings.HasPrefix(out, "w stopped") {
		t.Errorf("svc stop: exit %d, stdout %q, stderr %q", code, out, errText)
	}

	out, errText, code = run("{\"answer\":1}\n{\"answer\":2}\n", nil, "ndjson", "check", "--schema", "good.json")
	if code != 0 || out != "2 lines: 2 valid, 0 blank, 0 bad\n" || errText != "" {
		t.Errorf("ndjson check --schema, conforming: exit %d, stdout %q, stderr %q", code, out, errText)
	}
	out, errText, code = run("{\"answer\":1}\n{\"answer\":\"x\"}\n", nil, "ndjson", "check", "--schema", "good.json")
	if want := "ndjson: line 2: does not conform to the schema: at /answer: got string, want integer\n"; code != 1 || !strings.HasPrefix(errText, want) || !strings.Contains(out, "schema_violation 1") {
		t.Errorf("ndjson check --schema, not conforming: exit %d, stdout %q, stderr %q; want exit 1, stderr %q", code, out, errText, want)
	}

	_, errText, code = run("", nil, "runagent", "-l", "1", "--schema", "bad.json", "hi")
	if want := "runagent: error: --schema " + filepath.Join(work, "bad.json") + " is not a valid JSON Schema: at /type: "; code != 2 || !strings.HasPrefix(errText, want) {
		t.Errorf("runagent --schema bad.json: exit %d, stderr %q; want exit 2, stderr %q…", code, errText, want)
	}

	// A claude whose recorded run ends with a structured answer.
	rec, err := os.ReadFile(filepath.Join("..", "lib", "grant", "testdata", "claude", "level1-mcp-echo.stdout"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(rec), "\n"), "\n")
	last := len(lines) - 1
	if !strings.HasPrefix(lines[last], `{`) || !strings.Contains(lines[last], `"type":"result"`) {
		t.Fatalf("the recorded run does not end with its result: %.80s", lines[last])
	}
	lines[last] = `{"structured_output":{"answer": 42},` + lines[last][1:]
	transcript := write("claude.stdout", strings.Join(lines, "\n")+"\n")
	claude := write("claude", "#!/bin/sh\ncat >/dev/null\nexec cat '"+transcript+"'\n")
	out, errText, code = run("", []string{"RUNAGENT_CLAUDE_BIN=" + claude}, "runagent", "-l", "1", "--schema", "good.json", "hi")
	if code != 0 || out != "{\"answer\":42}\n" {
		t.Errorf("runagent --schema good.json: exit %d, stdout %q, stderr %q; want {\"answer\":42}", code, out, errText)
	}
}
