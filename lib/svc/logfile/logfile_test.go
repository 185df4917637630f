package logfile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// The log rotates at line boundaries, keeps its generations, and numbers
// rows across rotation and reopening without a gap or a repeat.
func TestLogRowsSurviveRotation(t *testing.T) {
	d := t.TempDir()
	os.Mkdir(d, 0o700)
	w, err := Open(d, 100, 1000)
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
	w, err = Open(d, 100, 1000)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("after restart\n"))
	w.Close()

	var got []string
	last, err := ReadRows(d, 0, func(r Row) error {
		row, line := r.N, r.Line
		_, _ = row, line

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
	ReadRows(d, 495, func(r Row) error { after = append(after, r.N); return nil })
	if fmt.Sprint(after) != "[496 497 498 499 500 501 502]" {
		t.Errorf("since 495: %v", after)
	}
	if lr, _ := LastRow(d); lr != 502 {
		t.Errorf("LastRow %d", lr)
	}
}

func TestLogKeepsGenerations(t *testing.T) {
	d := t.TempDir()
	os.Mkdir(d, 0o700)
	w, _ := Open(d, 50, 3)
	for i := 0; i < 100; i++ {
		fmt.Fprintf(w, "row %03d\n", i)
	}
	w.Close()
	gens, _ := generations(d)
	if len(gens) != 3 {
		t.Fatalf("%d generations kept, want 3", len(gens))
	}
	var rows []int64
	ReadRows(d, 0, func(r Row) error {
		row, line := r.N, r.Line
		_, _ = row, line

		if string(line) != fmt.Sprintf("row %03d", row-1) {
			t.Errorf("row %d holds %q", row, line)
		}
		rows = append(rows, row)
		return nil
	})
	if rows[len(rows)-1] != 100 {
		t.Errorf("last row %d", rows[len(rows)-1])
	}
	if target, _ := os.Readlink(filepath.Join(d, "log")); target != genName(gens[2].first) {
		t.Errorf("log links to %s", target)
	}
}

// A line longer than the log's cap keeps the cap's worth of it and a note
// of the rest, however it arrives: the disk holds at most about twice the
// cap a generation, and the rows around it are whole.
func TestLongLineKeptUpToTheCap(t *testing.T) {
	d := t.TempDir()
	const max = 1000
	w, err := Open(d, max, 100)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("before\n"))
	long := bytes.Repeat([]byte("x"), 50*max)
	for b := long; len(b) > 0; b = b[min(len(b), 333):] {
		w.Write(b[:min(len(b), 333)])
	}
	w.Write([]byte("\nafter\nhuge in one write: " + string(long) + "\nlast\n"))
	w.Write(long) // a cut line that Close ends
	w.Close()
	var rows []string
	ReadRows(d, 0, func(r Row) error { rows = append(rows, string(r.Line)); return nil })
	note := " … [%d more bytes of this line not kept: a line is kept up to the log's size cap]"
	want := []string{"before", string(long[:max]) + fmt.Sprintf(note, 49*max), "after",
		("huge in one write: " + string(long))[:max] + fmt.Sprintf(note, 19+50*max-max), "last", string(long[:max]) + fmt.Sprintf(note, 49*max)}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("row %d: %.60q… (%d bytes), want %.60q… (%d)", i+1, rows[i], len(rows[i]), want[i], len(want[i]))
		}
	}
	gens, _ := generations(d)
	for _, g := range gens {
		if fi, _ := os.Stat(g.path); fi.Size() > 2*max+200 {
			t.Errorf("%s holds %d bytes", g.path, fi.Size())
		}
	}
}

// A reader asked for at most N bytes of a row holds no more, and is told
// the row's whole size.
func TestReadRowsUpTo(t *testing.T) {
	d := t.TempDir()
	w, _ := Open(d, 1<<30, 2)
	long := bytes.Repeat([]byte("y"), 300<<10)
	w.Write([]byte("a\n"))
	w.Write(append(long, '\n'))
	w.Write([]byte("b\n"))
	w.Close()
	type got struct {
		line string
		size int64
	}
	var rows []got
	ReadRowsUpTo(d, 0, 100, func(r Row) error { rows = append(rows, got{string(r.Line), r.Size}); return nil })
	want := []got{{"a", 1}, {string(long[:100]), int64(len(long))}, {"b", 1}}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("%.200v", rows)
	}
	rows = nil
	ReadRows(d, 0, func(r Row) error { rows = append(rows, got{string(r.Line), r.Size}); return nil })
	if len(rows) != 3 || rows[1].line != string(long) || rows[1].size != int64(len(long)) {
		t.Errorf("whole rows: %d", len(rows))
	}
}

// What follows the last newline is read back as unfinished, at most its
// last bytes, across blocks, and is nothing once the line ends.
func TestUnfinished(t *testing.T) {
	d := t.TempDir()
	w, err := Open(d, 1<<20, 10)
	if err != nil {
		t.Fatal(err)
	}
	check := func(most int, want string, wantCut bool) {
		t.Helper()
		got, cut, err := Unfinished(d, most)
		if err != nil || string(got) != want || cut != wantCut {
			t.Errorf("Unfinished(%d) = %q, %v, %v; want %q, %v", most, got, cut, err, want, wantCut)
		}
	}
	check(100, "", false)
	w.Write([]byte("row 1\n>>> "))
	check(100, ">>> ", false)
	check(2, "> ", true)
	long := bytes.Repeat([]byte("x"), 10000)
	w.Write(long)
	check(20000, ">>> "+string(long), false)
	check(5000, string(long[:5000]), true)
	w.Write([]byte("\n"))
	check(100, "", false)
	last, _ := LastRow(d)
	if last != 2 {
		t.Errorf("last row %d, want 2", last)
	}
	w.Close()
}

// Unfinished never shows a character broken: not one cut at the front by
// most, nor one whose last bytes have not been written.
func TestUnfinishedWholeCharacters(t *testing.T) {
	d := t.TempDir()
	w, err := Open(d, 1<<20, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Write([]byte("x\nééé"))
	if got, cut, _ := Unfinished(d, 5); string(got) != "éé" || !cut {
		t.Errorf("cut in a character: %q, %v", got, cut)
	}
	w.Write([]byte("caf\xc3"))
	if got, _, _ := Unfinished(d, 100); string(got) != "ééécaf" {
		t.Errorf("a character half written: %q", got)
	}
	w.Write([]byte("\xa9"))
	if got, _, _ := Unfinished(d, 100); string(got) != "ééécafé" {
		t.Errorf("written whole: %q", got)
	}
}
