package systemd

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/svc/project"
)

// units exports the project file name (with body) written in a scratch
// directory, and returns the files by name.
func units(t *testing.T, name, body string) (map[string]string, *Export) {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := project.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(t.TempDir(), "home")
	x, err := Units(f, Options{Home: home, Project: "shop", Dir: filepath.Join(dir, "units")})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, file := range x.Files {
		out[file.Name] = string(file.Data)
	}
	return out, x
}

func has(t *testing.T, unit, text, re string) {
	t.Helper()
	if !regexp.MustCompile("(?m)" + re).MatchString(text) {
		t.Errorf("%s: no line matching %s in:\n%s", unit, re, text)
	}
}

// A Procfile's release is a one-shot every other entry requires; each
// entry has a port, as foreman gives one.
func TestProcfile(t *testing.T) {
	u, x := units(t, "Procfile", "release: ./migrate\nweb: bundle exec puma -p $PORT\nworker: bundle exec sidekiq\n")
	if x.Target != "shop.target" {
		t.Errorf("target %s", x.Target)
	}
	rel := u["shop-release.service"]
	has(t, "release", rel, `^Type=oneshot$`)
	has(t, "release", rel, `^RemainAfterExit=yes$`)
	has(t, "release", rel, `^ExecStart="/bin/sh" "-c" "./migrate"$`)
	for _, name := range []string{"web", "worker"} {
		s := u["shop-"+name+".service"]
		has(t, name, s, `^After=shop-release\.service$`)
		has(t, name, s, `^Requires=shop-release\.service$`)
		has(t, name, s, `^Environment=.*"PORT=[0-9]+"$`)
		has(t, name, s, `^Type=exec$`)
	}
	has(t, "web", u["shop-web.service"], `^ExecStart="/bin/sh" "-c" "bundle exec puma -p \$\$PORT"$`)
	has(t, "target", u["shop.target"], `^Wants=shop-release\.service shop-web\.service shop-worker\.service$`)
}

// port_block's ports are fixed as svc up gives them: {port+K} and the
// "auto" ports from the block.
func TestPortBlock(t *testing.T) {
	u, x := units(t, "svc.toml", `port_block = 3
[services.api]
command = ["/bin/echo", "{port}", "{port+0}"]
port = "auto"
`)
	api := u["shop-api.service"]
	m := regexp.MustCompile(`(?m)^ExecStart="/bin/echo" "([0-9]+)" "([0-9]+)"$`).FindStringSubmatch(api)
	if m == nil {
		t.Fatalf("no ExecStart of two ports in:\n%s", api)
	}
	// {port+0} is the block's first, so "auto" gets the next.
	port, first := atoi(t, m[1]), atoi(t, m[2])
	if port != first+1 {
		t.Errorf("port %d, {port+0} %d: want the block's second port for auto", port, first)
	}
	has(t, "api", api, `"PORT=`+m[1]+`"`)
	if len(x.Notes) == 0 || !strings.Contains(x.Notes[0].Text, "port_block") {
		t.Errorf("notes %v, want the port fixed from the port_block", x.Notes)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
