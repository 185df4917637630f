package svc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/agentry/agentry/lib/cmdline"
)

// fakeMonitor is a monitor program that reports the name taken unless it
// ends in one of the suffixes given; then it reports the command started
// and exited.
func fakeMonitor(t *testing.T, free string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "monitor")
	script := "#!/bin/sh\ncase \"$2\" in\n" + free + ")\n" +
		"  echo '{\"event\":\"started\",\"pid\":1}' >&3\n  echo '{\"event\":\"exited\"}' >&3 ;;\n" +
		"*) echo '{\"event\":\"taken\"}' >&3; exit 2 ;;\nesac\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// A derived name that the monitor finds taken moves on to the next
// suffix, a bounded number of times; a name the user gave is refused.
func TestStartRetriesDerivedName(t *testing.T) {
	spec := Spec{Command: []string{"sleep", "600"}}
	home := t.TempDir()
	res, err := Start(context.Background(), StartOptions{Home: home, Spec: spec, Monitor: fakeMonitor(t, "*-3")})
	if err != nil || res.Name != "sleep-3" || res.Status != Exited {
		t.Fatalf("derived: %+v, %v; want sleep-3 exited", res, err)
	}

	home = t.TempDir()
	_, err = Start(context.Background(), StartOptions{Home: home, Name: "mine", Spec: spec, Monitor: fakeMonitor(t, "*-2")})
	if taken := (*TakenError)(nil); !errors.As(err, &taken) || taken.Name != "mine" {
		t.Fatalf("given: %v; want mine taken", err)
	}

	home = t.TempDir()
	_, err = Start(context.Background(), StartOptions{Home: home, Spec: spec, Monitor: fakeMonitor(t, "never")})
	if taken := (*TakenError)(nil); !errors.As(err, &taken) || taken.Name != "sleep-"+strconv.Itoa(maxNameTries) {
		t.Fatalf("always taken: %v; want sleep-%d taken", err, maxNameTries)
	}
}

// A name a live service holds is skipped when derived, refused when given.
func TestClaim(t *testing.T) {
	home := t.TempDir()
	d := Dir{Home: home, Name: "sleep"}
	if err := os.Mkdir(d.Path(), 0o700); err != nil {
		t.Fatal(err)
	}
	lock, ok, err := TryLock(d)
	if !ok || err != nil {
		t.Fatalf("lock: %v %v", ok, err)
	}
	defer lock.Close()
	if got, n, err := claim(home, "", "", Spec{Command: []string{"sleep 600"}}, 1); err != nil || got.Name != "sleep-2" || n != 2 {
		t.Errorf("derived: %v %d %v; want sleep-2", got.Name, n, err)
	}
	if got, n, err := claim(home, "", "", Spec{Command: []string{"sleep 600"}}, 5); err != nil || got.Name != "sleep-5" || n != 5 {
		t.Errorf("derived from 5: %v %d %v; want sleep-5", got.Name, n, err)
	}
	if _, _, err := claim(home, "", "sleep", Spec{Command: []string{"sleep 600"}}, 1); !errors.Is(err, ErrNameTaken) {
		t.Errorf("given: %v; want taken", err)
	}
}

// Whatever the line, the default name is a valid name, and reading the
// line never panics.
func FuzzDefaultName(f *testing.F) {
	for _, s := range []string{"npm run dev", `sh -c 'a "b' \`, "x && | ; &", "npx -p", "python -m", "\"", "bash -c", "a\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		for _, argv := range [][]string{{line}, {"sh", "-c", line}, {"npm", "run", line}} {
			if name := defaultName(argv, "/"); ValidPlainName(name) != nil {
				t.Errorf("defaultName(%q) = %q, not a valid name", argv, name)
			}
		}
		cmdline.ShellLine([]string{line, line})
	})
}
