package acp

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentry/agentry/lib/confine"
)

func TestPolicy(t *testing.T) {
	root := t.TempDir()
	in, out := filepath.Join(root, "a.go"), "/etc/passwd"
	cases := []struct {
		pol             Policy
		kind            string
		paths           []string
		allows, forbids bool
	}{
		{Policy{Level: 1}, "read", []string{out}, true, false},
		{Policy{Level: 1}, "search", nil, true, false},
		{Policy{Level: 1}, "edit", []string{in}, false, true},
		{Policy{Level: 1}, "execute", nil, false, true},
		{Policy{Level: 1}, "other", nil, false, false},
		{Policy{Level: 2}, "edit", []string{in}, true, false},
		{Policy{Level: 2}, "edit", []string{out}, false, true},
		{Policy{Level: 2}, "move", []string{in, out}, false, true},
		{Policy{Level: 2}, "execute", nil, true, false},
		{Policy{Level: 2}, "other", nil, true, false},
		{Policy{Level: 2, Ask: true}, "execute", nil, false, true},
		{Policy{Level: 2, Ask: true}, "delete", []string{in}, true, false},
		{Policy{Level: 3}, "delete", []string{in}, true, false},
	}
	for _, c := range cases {
		c.pol.Root = root
		if got := c.pol.Allows(c.kind, c.paths); got != c.allows {
			t.Errorf("%+v allows %s %v: %v", c.pol, c.kind, c.paths, got)
		}
		if got := c.pol.Forbids(c.kind, c.paths); got != c.forbids {
			t.Errorf("%+v forbids %s %v: %v", c.pol, c.kind, c.paths, got)
		}
	}
}

func TestConfine(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	os.Mkdir(filepath.Join(root, "sub"), 0o700)
	os.Symlink(outside, filepath.Join(root, "out"))
	os.Symlink(filepath.Join(outside, "x"), filepath.Join(root, "dangling"))
	os.Symlink("sub", filepath.Join(root, "in"))
	os.Symlink("loop", filepath.Join(root, "loop"))
	for path, ok := range map[string]bool{
		filepath.Join(root, "a.txt"):           true,
		filepath.Join(root, "sub", "new.txt"):  true,
		filepath.Join(root, "in", "new.txt"):   true,
		"rel.txt":                              true,
		filepath.Join(root, "..", "x"):         false,
		filepath.Join(root, "out", "x"):        false,
		filepath.Join(root, "dangling"):        false,
		filepath.Join(root, "loop"):            false,
		filepath.Join(root, "nope", "new.txt"): true,
		"/etc/passwd":                          false,
	} {
		got, err := confine.Within(root, path)
		if (err == nil) != ok {
			t.Errorf("%s: %q %v", path, got, err)
		}
		if !ok && err != nil && !errors.Is(err, confine.ErrOutside) && filepath.Base(path) != "loop" {
			t.Errorf("%s: %v, not ErrOutside", path, err)
		}
	}
}

func TestPickMode(t *testing.T) {
	codex := []Mode{{ID: "read-only"}, {ID: "auto"}, {ID: "full-access"}}
	claude := []Mode{{ID: "default"}, {ID: "acceptEdits"}, {ID: "plan"}, {ID: "bypassPermissions"}}
	qwen := []Mode{{ID: "plan"}, {ID: "default"}, {ID: "auto-edit"}, {ID: "auto"}, {ID: "yolo"}}
	for _, c := range []struct {
		modes []Mode
		pol   Policy
		want  string
	}{
		{codex, Policy{Level: 1}, "read-only"},
		{codex, Policy{Level: 2}, "auto"},
		{codex, Policy{Level: 2, Ask: true}, "read-only"},
		{claude, Policy{Level: 1}, "default"},
		{claude, Policy{Level: 2}, "default"},
		{qwen, Policy{Level: 2}, "default"},
		{[]Mode{{ID: "yolo"}, {ID: "x"}}, Policy{Level: 2}, "x"},
	} {
		if got := PickMode(c.modes, "x", c.pol); got != c.want {
			t.Errorf("%v at %+v: %s, want %s", c.modes, c.pol, got, c.want)
		}
	}
}
