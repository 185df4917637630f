package project

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func write(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A repository with svc.toml, .claude/launch.json and conductor.json is
// one project of all three.
func TestLoadAll(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "svc.toml", "[services.db]\ncommand = \"redis-server --port $PORT\"\nport = \"auto\"\n")
	write(t, dir, LaunchFile, `{
  // comments, and trailing commas, as launch files have them
  "configurations": [
    {"name": "Next dev", "runtimeExecutable": "npm", "runtimeArgs": ["run", "dev"], "port": 3000, "autoPort": true,
     "url": "http://localhost:3000/app", "env": {"B": "2", "A": "1"}, "cwd": "web",},
    {"name": "docs", "runtimeExecutable": "python3", "runtimeArgs": ["-m", "http.server", "8001"], "port": 8001},
    {"name": "tool", "runtimeExecutable": "./tool"}, /* no port */
  ],
}`)
	write(t, dir, ConductorFile, `{"scripts": {"setup": "npm ci", "run": "npm start", "archive": "rm -rf tmp"}}`)
	paths, err := FindAll("", dir)
	if err != nil || len(paths) != 3 {
		t.Fatalf("FindAll: %v %v", paths, err)
	}
	f, err := LoadAll(paths)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range f.Services {
		names = append(names, d.Name)
	}
	if !slices.Equal(names, []string{"db", "Next-dev", "docs", "tool", "setup", "run"}) {
		t.Fatalf("services %v", names)
	}
	next := f.Lookup("Next-dev")
	if strings.Join(next.Command, " ") != "npm run dev" || next.Port != "auto" || next.ReadyURL != "http://localhost:{port}/app" ||
		next.Cwd != filepath.Join(dir, "web") || strings.Join(next.Env, " ") != "A=1 B=2" || !next.Serves || next.From == "" {
		t.Errorf("Next dev: %+v", next)
	}
	if d := f.Lookup("docs"); d.Port != "8001" || !d.Serves {
		t.Errorf("docs: %+v", d)
	}
	if d := f.Lookup("tool"); d.Port != "" || d.Serves {
		t.Errorf("tool: %+v", d)
	}
	setup, run := f.Lookup("setup"), f.Lookup("run")
	if !setup.Oneshot || setup.Command[0] != "npm ci" || run.Port != "auto" || len(run.Needs) != 1 || run.Needs[0].Cond != Succeeded ||
		!slices.Contains(run.Env, "CONDUCTOR_PORT={port}") || !slices.Contains(run.Env, "CONDUCTOR_WORKSPACE_NAME={worktree}") {
		t.Errorf("conductor: %+v %+v", setup, run)
	}
	if f.Archive != "rm -rf tmp" || f.Dir != dir {
		t.Errorf("archive %q, dir %q", f.Archive, f.Dir)
	}
}

func TestLoadAllRefuses(t *testing.T) {
	for _, c := range []struct{ name, toml, launch, want string }{
		{"twice", "[services.web]\ncommand = \"x\"\n", `{"configurations": [{"name": "web", "runtimeExecutable": "x"}]}`, "defines web, which .*svc.toml defines too"},
		{"noexe", "", `{"configurations": [{"name": "web"}]}`, `configurations\[0\] \(web\) has no runtimeExecutable`},
		{"badjson", "", `{"configurations": [`, `launch.json: unexpected end`},
		{"block", "[services.web]\ncommand = \"x {port+3}\"\n", "", `web uses \{port\+3\} but the file reserves no ports`},
		{"blocksize", "port_block = 2\n[services.web]\ncommand = \"x {port+2}\"\n", "", `port_block is 2: \{port\+0\} to \{port\+1\}`},
	} {
		dir := t.TempDir()
		if c.toml != "" {
			write(t, dir, "svc.toml", c.toml)
		}
		if c.launch != "" {
			write(t, dir, LaunchFile, c.launch)
		}
		paths, _ := FindAll("", dir)
		_, err := LoadAll(paths)
		if err == nil || !regexp.MustCompile(c.want).MatchString(err.Error()) {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
	}
}

func TestJSONC(t *testing.T) {
	in := `{"a": "// not a comment", /* gone */ "b": [1, 2,], // gone
"c": "\"/*\"",}`
	want := "{\"a\": \"// not a comment\",  \"b\": [1, 2], \n\"c\": \"\\\"/*\\\"\"}"
	if got := string(jsonc([]byte(in))); got != want {
		t.Errorf("jsonc:\n%s\nwant\n%s", got, want)
	}
}
