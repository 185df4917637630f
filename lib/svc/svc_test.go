package svc

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestFindEndpoint(t *testing.T) {
	cases := []struct {
		line string
		url  string
		port int
	}{
		{"  ➜  Local:   http://localhost:5173/", "http://localhost:5173/", 5173},
		{"Listening on 127.0.0.1:8080", "http://localhost:8080", 8080},
		{"server started at [::]:3000", "http://localhost:3000", 3000},
		{"listening on port 4000", "http://localhost:4000", 4000},
		{"Serving HTTP on 0.0.0.0 port 8000 (http://0.0.0.0:8000/) ...", "http://0.0.0.0:8000/", 8000},
		{"ready - started server on 0.0.0.0:3001, url: http://localhost:3001", "http://localhost:3001", 3001},
		{"Port: 9229", "http://localhost:9229", 9229},
		{"https://example.dev:8443/path.", "https://example.dev:8443/path", 8443},
	}
	for _, c := range cases {
		ep, ok := FindEndpoint(c.line)
		if !ok || ep.Port != c.port || ep.URL != c.url {
			t.Errorf("FindEndpoint(%q) = %+v, %v; want %s %d", c.line, ep, ok, c.url, c.port)
		}
	}
	for _, line := range []string{"compiled 12 files in 3.2s", "time: 12:30:45", "port", "error: 99999 things"} {
		if ep, ok := FindEndpoint(line); ok {
			t.Errorf("FindEndpoint(%q) found %+v", line, ep)
		}
	}
}

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
		if got := DefaultName([]string{argv}); got != want {
			t.Errorf("DefaultName(%q) = %q, want %q", argv, got, want)
		}
	}
}

// The log rotates at line boundaries, keeps its generations, and numbers
// rows across rotation and reopening without a gap or a repeat.
func TestLogRowsSurviveRotation(t *testing.T) {
	d := Dir{Home: t.TempDir(), Name: "s"}
	os.Mkdir(d.Path(), 0o700)
	w, err := OpenLog(d, 100, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var all bytes.Buffer
	for i := 1; i <= 500; i++ {
		fmt.Fprintf(&all, "line %d\n", i)
	}
	// Write in awkward pieces, splitting lines.
	for b := all.Bytes(); len(b) > 0; {
		n := min(len(b), 7)
		w.Write(b[:n])
		b = b[n:]
	}
	w.Write([]byte("no newline"))
	w.Close()
	// Reopen, as a restarted monitor would, and go on.
	w, err = OpenLog(d, 100, 1000)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("after restart\n"))
	w.Close()

	var got []string
	last, err := ReadRows(d, 0, func(row int64, line []byte) error {
		got = append(got, fmt.Sprintf("%d:%s", row, line))
		return nil
	})
	if err != nil || last != 502 || len(got) != 502 {
		t.Fatalf("last %d, %d rows, %v", last, len(got), err)
	}
	for i := 1; i <= 500; i++ {
		if got[i-1] != fmt.Sprintf("%d:line %d", i, i) {
			t.Fatalf("row %d is %q", i, got[i-1])
		}
	}
	if got[500] != "501:no newline" || got[501] != "502:after restart" {
		t.Errorf("end %q", got[500:])
	}
	gens, _ := generations(d)
	if len(gens) < 20 {
		t.Errorf("only %d generations for 4 KiB at 100 bytes each", len(gens))
	}
	for _, g := range gens {
		b, _ := os.ReadFile(g.path)
		if len(b) > 0 && b[len(b)-1] != '\n' {
			t.Errorf("generation %s ends mid-line", g.path)
		}
	}
	// --since reads incrementally.
	var after []int64
	ReadRows(d, 495, func(row int64, line []byte) error { after = append(after, row); return nil })
	if fmt.Sprint(after) != "[496 497 498 499 500 501 502]" {
		t.Errorf("since 495: %v", after)
	}
	if lr, _ := LastRow(d); lr != 502 {
		t.Errorf("LastRow %d", lr)
	}
}

func TestLogKeepsGenerations(t *testing.T) {
	d := Dir{Home: t.TempDir(), Name: "s"}
	os.Mkdir(d.Path(), 0o700)
	w, _ := OpenLog(d, 50, 3)
	for i := 0; i < 100; i++ {
		fmt.Fprintf(w, "row %03d\n", i)
	}
	w.Close()
	gens, _ := generations(d)
	if len(gens) != 3 {
		t.Fatalf("%d generations kept, want 3", len(gens))
	}
	var rows []int64
	ReadRows(d, 0, func(row int64, line []byte) error {
		if string(line) != fmt.Sprintf("row %03d", row-1) {
			t.Errorf("row %d holds %q", row, line)
		}
		rows = append(rows, row)
		return nil
	})
	if rows[len(rows)-1] != 100 {
		t.Errorf("last row %d", rows[len(rows)-1])
	}
	if target, _ := os.Readlink(d.LogLink()); target != genName(gens[2].first) {
		t.Errorf("log links to %s", target)
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
