package project

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func load(t *testing.T, name, text string) (*File, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return Load(p)
}

func TestTOML(t *testing.T) {
	f, err := load(t, "svc.toml", `
[services.db]
command = ["redis-server", "--port", "{port}"]
port = "auto"
ready_timeout = "5s"

[services.migrate]
command = "./migrate {port:db}"
oneshot = true
depends_on = ["db"]

[services.api]
command = "api"
port = 8080
env = { B = "2", A = "{port:db}" }
env_file = ["one.env", "/abs/two.env"]
cwd = "api"
depends_on = { db = "started", migrate = "completed" }
`)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(f.Services); got != "db migrate api" {
		t.Fatalf("services in file order: %q", got)
	}
	db, mig, api := f.Services[0], f.Services[1], f.Services[2]
	if db.Port != "auto" || db.ReadyTimeout.String() != "5s" || len(db.Command) != 3 || db.Line != 2 {
		t.Errorf("db: %+v", db)
	}
	if mig.Needs[0] != (Need{Name: "db", Cond: Ready, Line: 10}) {
		t.Errorf("a one-shot's need of a service defaults to ready: %+v", mig.Needs)
	}
	if api.Port != "8080" || strings.Join(api.Env, " ") != "A={port:db} B=2" || api.Cwd != filepath.Join(f.Dir, "api") {
		t.Errorf("api: %+v", api)
	}
	if api.EnvFile[0] != filepath.Join(f.Dir, "one.env") || api.EnvFile[1] != "/abs/two.env" {
		t.Errorf("env files: %v", api.EnvFile)
	}
	if len(api.Needs) != 2 || api.Needs[0].Cond != Started || api.Needs[1].Cond != Completed {
		t.Errorf("api needs: %+v", api.Needs)
	}
}

func TestDefaultConditions(t *testing.T) {
	f, err := load(t, "svc.toml", "[services.m]\ncommand = \"m\"\noneshot = true\n[services.s]\ncommand = \"s\"\n[services.a]\ncommand = \"a\"\ndepends_on = [\"m\", \"s\"]\n")
	if err != nil {
		t.Fatal(err)
	}
	a := f.Lookup("a")
	if a.Needs[0].Cond != Succeeded || a.Needs[1].Cond != Ready {
		t.Fatalf("defaults: %+v", a.Needs)
	}
}

func TestErrorsNameTheLine(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"[services.a]\ncommand = \"x\"\ndepends_on = [\"b\"]\n[services.b]\ncommand = \"y\"\ndepends_on = [\"a\"]\n", ":3: dependency cycle: a -> b -> a"},
		{"[services.a]\ncommand = \"x\"\ndepends_on = [\"a\"]\n", ":3: dependency cycle: a -> a"},
		{"[services.a]\ncommand = \"x\"\ndepends_on = [\n \"b\",\n \"zz\"]\n[services.b]\ncommand = \"y\"\n", ":5: a depends on zz, which is not defined"},
		{"[services.a]\ncommand = \"x\"\ndepends_on = { b = \"ready\",\n c = \"sometime\" }\n", ":3: a: depends_on.c is \"sometime\""},
		{"[services.a]\ncommand = \"x\"\n\nprot = 1\n", ":4: unknown key services.a.prot: did you mean port?"},
		{"[services.a]\ncommand = \"x\"\nready_ulr = \"u\"\n", ":3: unknown key services.a.ready_ulr: did you mean ready_url?"},
		{"[services.a]\ncommand = \"x\"\nenvfile = \"a.env\"\n", ":3: unknown key services.a.envfile: did you mean env_file?"},
		{"[services.a]\ncommand = \"x\"\ndepends = [\"b\"]\n", ":3: unknown key services.a.depends: did you mean depends_on?"},
		{"[service.a]\ncommand = \"x\"\n", ":1: unknown key service.a: did you mean services?"},
		{"[services]\na.command = \"x\"\na.colour = 1\n", ":3: unknown key services.a.colour"},
		{"[services.a]\ncommand = 3\n", ":2: a needs a command"},
		{"[services.a]\ncmd = \"x\"\n", ":2: unknown key services.a.cmd"},
		{"[services.a]\n", ":1: a needs a command"},
		{"[services.a]\ncommand = \"x\"\nport = 70000\n", ":3: a: port is"},
		{"[services.a]\ncommand = \"x\"\nready_timeout = \"soon\"\n", ":3: a: ready_timeout:"},
		{"[services.a]\ncommand = \"x\"\nready_url = \"u\"\nready_port = 3\n", ":4: a: give at most one"},
		{"[services.a]\ncommand = \"x\"\nrestart = \"sometimes\"\n", ":3: a: restart is"},
		{"[services.a]\ncommand = \"x\"\nenv = { X = \"{port:b}\" }\n[services.b]\ncommand = \"y\"\n", ":3: a uses {port:b} but does not depend on b"},
		{"[services.a]\ncommand = \"x\"\noneshot = true\n[services.b]\ncommand = \"y\"\ndepends_on = { a = \"ready\" }\n", ":6: b waits for a to be ready, but a is a one-shot"},
		{"[services.\"a b\"]\ncommand = \"x\"\n", ":1: service name \"a b\" has ' '"},
		{"[services.a]\ncommand = \"x\n", ":2: "},
		{"title = \"x\"\n", ":1: unknown key title"},
	} {
		_, err := load(t, "svc.toml", c.text)
		if err == nil || !strings.Contains(err.Error(), "svc.toml"+c.want) {
			t.Errorf("%q: got %v, want …%s", c.text, err, c.want)
		}
	}
}

func TestProcfile(t *testing.T) {
	f, err := load(t, "Procfile", "# comment\n\nweb: npm run dev\nworker:  ./work --queue=a:b  \n")
	if err != nil {
		t.Fatal(err)
	}
	if names(f.Services) != "web worker" || f.Services[1].Command[0] != "./work --queue=a:b" || f.Services[1].Port != "auto" || f.Services[1].Line != 4 {
		t.Fatalf("%+v %+v", f.Services[0], f.Services[1])
	}
	for _, c := range []struct{ text, want string }{
		{"web npm run dev\n", ":1: not NAME: COMMAND"},
		{"web:\n", ":1: web has no command"},
		{"a: x\na: y\n", ":2: a is defined twice"},
		{"# nothing\n", "defines no service"},
	} {
		if _, err := load(t, "Procfile", c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %s", c.text, err, c.want)
		}
	}
}

func TestClosureAndLevels(t *testing.T) {
	f, err := load(t, "svc.toml", `
[services.web]
command = "w"
depends_on = ["api"]
[services.api]
command = "a"
depends_on = ["db", "migrate"]
[services.migrate]
command = "m"
oneshot = true
depends_on = ["db"]
[services.db]
command = "d"
[services.other]
command = "o"
`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range Levels(f.Services, NeedNames) {
		got = append(got, names(l))
	}
	if strings.Join(got, " | ") != "db other | migrate | api | web" {
		t.Errorf("levels: %q", got)
	}
	c, err := f.Closure([]string{"migrate"})
	if err != nil || names(c) != "migrate db" {
		t.Errorf("closure of migrate: %q %v", names(c), err)
	}
	if _, err := f.Closure([]string{"nope"}); err == nil {
		t.Error("closure of an unknown name")
	}
}

func names(ds []*Def) string {
	var s []string
	for _, d := range ds {
		s = append(s, d.Name)
	}
	return strings.Join(s, " ")
}

func TestProcfileRelease(t *testing.T) {
	f, err := load(t, "Procfile", "web: ./serve\nrelease: ./migrate\nworker: ./work\n")
	if err != nil {
		t.Fatal(err)
	}
	rel, web, worker := f.Lookup("release"), f.Lookup("web"), f.Lookup("worker")
	if !rel.Oneshot || !rel.Release || rel.Port != "" || len(rel.Needs) != 0 {
		t.Errorf("release is a one-shot without a port: %+v", rel)
	}
	for _, d := range []*Def{web, worker} {
		if len(d.Needs) != 1 || d.Needs[0] != (Need{Name: "release", Cond: Succeeded, Line: 2}) {
			t.Errorf("%s needs release to have succeeded: %+v", d.Name, d.Needs)
		}
	}
	if !web.Serves || worker.Serves {
		t.Errorf("web serves, worker does not: %v %v", web.Serves, worker.Serves)
	}
	if got := Levels(f.Services, NeedNames); len(got) != 2 || names(got[0]) != "release" {
		t.Errorf("release first: %v", got)
	}
}

// An env_file or cwd that is not there is reported at its key's line, not
// at its table's.
func TestPrepareNamesTheKeyLine(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"[services.a]\ncommand = \"x\"\n\nenv_file = \"nope.env\"\n", ":4: a: env_file "},
		{"[services.a]\ncommand = \"x\"\nenv_file = [\n  \"ok.env\",\n  \"nope.env\",\n]\n", ":5: a: env_file "},
		{"[services.a]\ncommand = \"x\"\n\ncwd = \"nowhere\"\n", ":4: a: cwd "},
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "ok.env"), []byte("A=1\n"), 0o600)
		p := filepath.Join(dir, "svc.toml")
		os.WriteFile(p, []byte(c.text), 0o600)
		f, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = (&Up{Home: t.TempDir(), Project: "p", File: f}).prepare(nil)
		if err == nil || !strings.Contains(err.Error(), "svc.toml"+c.want) {
			t.Errorf("%q: got %v, want …%s", c.text, err, c.want)
		}
	}
}

func TestClosest(t *testing.T) {
	known := knownKeys(3)
	for typed, want := range map[string]string{"ready_ulr": "ready_url", "readyurl": "ready_url", "comand": "command",
		"stop_signal_x": "stop_signal", "halt_after_ms": "", "restarts": "restart", "max_restart": "max_restarts", "colour": "", "ready": ""} {
		if got := closest(typed, known); got != want {
			t.Errorf("closest(%q) = %q, want %q", typed, got, want)
		}
	}
}

func TestAwaited(t *testing.T) {
	f, err := load(t, "svc.toml", `
[services.db]
command = "redis-server"
[services.api]
command = "./api"
port = "auto"
[services.probe]
command = "./probe"
ready_cmd = "true"
[services.loop]
command = "while :; do sleep 1; done"
[services.watched]
command = "./queue"
[services.needsit]
command = "./x"
depends_on = ["watched"]
[services.logs]
command = "tail -f app.log"
[services.after]
command = "./y"
depends_on = { loop = "started" }
`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"db": true, "api": true, "probe": true, "loop": false, "watched": true, "needsit": false, "logs": false, "after": false}
	for _, d := range f.Services {
		if got := awaited(d, f.Services); got != want[d.Name] {
			t.Errorf("%s: awaited %v, want %v", d.Name, got, want[d.Name])
		}
	}
}

// Locate looks above a directory for the project, no higher than its git
// checkout's top, and outside git not at all.
func TestLocate(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	for _, d := range []string{".git/objects", ".git/refs", "src/deep", "app/src"} {
		if err := os.MkdirAll(filepath.Join(repo, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"../svc.toml", ".git/HEAD", "svc.toml", "app/Procfile"} {
		if err := os.WriteFile(filepath.Join(repo, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for from, want := range map[string]string{"src/deep": repo, "app/src": filepath.Join(repo, "app"), ".": repo} {
		if got, err := Locate(filepath.Join(repo, from), nil); err != nil || got != want {
			t.Errorf("Locate(%s) = %q, %v; want %q", from, got, err, want)
		}
	}
	os.Remove(filepath.Join(repo, "svc.toml"))
	_, err := Locate(filepath.Join(repo, "src/deep"), nil)
	if nf := (*NotFoundError)(nil); !errors.As(err, &nf) || nf.Top != repo {
		t.Errorf("above the checkout's top: %v", err)
	}
	known := func(d string) bool { return d == filepath.Join(repo, "src") }
	if got, _ := Locate(filepath.Join(repo, "src/deep"), known); got != filepath.Join(repo, "src") {
		t.Errorf("a known project's directory: %q", got)
	}
	outside := filepath.Join(root, "plain", "sub")
	os.MkdirAll(outside, 0o755)
	if _, err := Locate(outside, nil); err == nil || !strings.HasSuffix(err.Error(), "in "+outside) {
		t.Errorf("outside git: %v", err)
	}
}
