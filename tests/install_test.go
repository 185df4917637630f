package tests

import (
	"bytes"
	"cmp"
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

// TestMakeTestSetup runs make test on what looks like a machine with Go
// and nothing else: a PATH of go, make and the shell's tools, with fakes of
// id, apt-get and sudo that record what they were asked. Where it can
// install (root, or sudo -n), make test installs what is missing, saying
// why; where it cannot, it stops at once with the command to run. Either
// way no test runs while something the tests need is missing: go is never
// asked to vet or test.
func TestMakeTestSetup(t *testing.T) {
	if testing.Short() {
		t.Skip("runs make five times")
	}
	realGo, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	for _, tc := range []struct {
		name  string
		uid   string
		sudo  bool
		apt   string // the fake apt-get's exit status
		args  []string
		code  int
		calls []string // what apt-get and sudo were asked, in order
		says  []string // in make's output
	}{
		{name: "cannot install", uid: "1000", args: []string{"test"}, code: 2,
			says: []string{"this machine cannot install them unasked, so no test runs",
				"\n  jq                 ndjson's verbs are checked against jq\n",
				"Install them with:\n  sudo apt-get install -y python3 nodejs perl redis-server redis-tools memcached busybox postgresql-client uwsgi-core gunicorn python3-flask jq",
				"make test SETUP=no"}},
		{name: "root", uid: "0", args: []string{"test"}, code: 2,
			calls: []string{"apt-get update -qq", "apt-get install -y -qq python3 nodejs perl redis-server redis-tools memcached busybox postgresql-client uwsgi-core gunicorn python3-flask jq"},
			says: []string{"setup: installing what the tests need and this machine lacks, with apt-get:",
				"\n  redis-server       svc's real servers and svc up's examples\n",
				"still missing after the install, so no test runs"}},
		{name: "sudo", uid: "1000", sudo: true, args: []string{"test"}, code: 2,
			calls: []string{"sudo -n true", "sudo -n apt-get update -qq", "apt-get update -qq",
				"sudo -n apt-get install -y -qq python3 nodejs", "apt-get install -y -qq python3 nodejs"},
			says: []string{"with sudo -n apt-get:"}},
		{name: "apt-get fails", uid: "0", apt: "100", args: []string{"test"}, code: 2,
			calls: []string{"apt-get update -qq"},
			says:  []string{"setup: apt-get failed (above), so no test runs; once it works: sudo apt-get install -y python3 nodejs"}},
		{name: "SETUP=no", uid: "1000", args: []string{"setup", "SETUP=no"}, code: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools, work := t.TempDir(), t.TempDir()
			for _, name := range []string{"make", "bash", "sh", "env", "cut", "grep", "awk", "tr", "sed", "uname", "ls", "cat", "dirname", "true"} {
				p, err := exec.LookPath(name)
				if err != nil {
					t.Skipf("no %s: %v", name, err)
				}
				if err := os.Symlink(p, filepath.Join(tools, name)); err != nil {
					t.Fatal(err)
				}
			}
			log := filepath.Join(work, "calls")
			fake := func(name, body string) {
				if err := os.WriteFile(filepath.Join(tools, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			fake("go", "echo \"go $*\" >> '"+log+"'\nexec '"+realGo+"' \"$@\"")
			fake("id", "echo "+tc.uid)
			fake("apt-get", "echo \"apt-get $*\" >> '"+log+"'\nexit "+cmp.Or(tc.apt, "0"))
			if tc.sudo {
				fake("sudo", "echo \"sudo $*\" >> '"+log+"'\n[ \"$1\" = -n ] && shift\nexec \"$@\"")
			}
			cmd := exec.Command("make", tc.args...)
			cmd.Dir = ".."
			cmd.Env = []string{"PATH=" + tools, "HOME=" + work, "TMPDIR=" + work}
			out, err := cmd.CombinedOutput()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code {
				t.Errorf("make %s: exit %d, want %d; output:\n%s", strings.Join(tc.args, " "), code, tc.code, out)
			}
			for _, want := range tc.says {
				if !strings.Contains(string(out), want) {
					t.Errorf("make %s does not say %q; output:\n%s", strings.Join(tc.args, " "), want, out)
				}
			}
			if tc.says == nil && len(out) != 0 {
				t.Errorf("make %s says %q, want nothing", strings.Join(tc.args, " "), out)
			}
			calls, _ := os.ReadFile(log)
			var asked []string
			for _, l := range strings.Split(strings.TrimSpace(string(calls)), "\n") {
				if strings.HasPrefix(l, "go ") {
					t.Errorf("make %s ran %q with the tests' needs missing", strings.Join(tc.args, " "), l)
				} else if l != "" {
					asked = append(asked, l)
				}
			}
			if len(asked) != len(tc.calls) {
				t.Fatalf("apt-get and sudo were asked %q, want %q", asked, tc.calls)
			}
			for i, want := range tc.calls {
				if !strings.HasPrefix(asked[i], want) {
					t.Errorf("call %d: %q, want %q…", i+1, asked[i], want)
				}
			}
		})
	}
}
