package svc

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	for _, ok := range []string{"web", "api-2", "db_main", "v1.2"} {
		if err := ValidName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "..", "../x", "a/b", "a b", ".x", "-x", "tab\tname", "nul\x00", strings.Repeat("x", 65), "naïve"} {
		if ValidName(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	for argv, want := range map[string]string{"npm run dev": "dev", "python3 -m http.server": "python3", "/usr/bin/node server.js": "node", "./weird name!": "weird"} {
		if got := defaultName([]string{argv}); got != want {
			t.Errorf("defaultName(%q) = %q, want %q", argv, got, want)
		}
	}
}

func TestStateAtomicAndDamaged(t *testing.T) {
	d := Dir{Home: t.TempDir(), Name: "s"}
	os.Mkdir(d.Path(), 0o700)
	if err := WriteState(d, &State{Name: "s", Status: Ready, PID: 42}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(d.StatePath())
	if bytes.Count(b, []byte{'\n'}) != 1 || b[0] != '{' {
		t.Errorf("state.json is not one line: %q", b)
	}
	st, _ := os.Stat(d.StatePath())
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	os.WriteFile(d.StatePath(), []byte("{torn"), 0o600)
	if _, err := ReadState(d); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("damaged state: %v", err)
	}
}
