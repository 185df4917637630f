package logfile

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Every row gets the time its write was received, across rotations and a
// reopened log; rows received within a millisecond share a record; RowAt
// finds where a time window starts; old generations take their times
// files with them.
func TestRowTimes(t *testing.T) {
	d := t.TempDir()
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	now := base
	w, err := Open(d, 40, 3)
	if err != nil {
		t.Fatal(err)
	}
	w.now = func() time.Time { return now }
	want := map[int64]time.Time{}
	row := int64(1)
	write := func(text string, rows int) {
		w.Write([]byte(text))
		for range rows {
			want[row] = now
			row++
		}
	}
	for i := range 30 {
		now = base.Add(time.Duration(i) * time.Second)
		write("a row\nand another\n", 2)
		now = now.Add(100 * time.Microsecond) // within the granule: shares the record
		write("half a ", 0)
		write("row\n", 1)
	}
	w.Close()
	now = base.Add(time.Hour)
	w, _ = Open(d, 40, 3)
	w.now = func() time.Time { return now }
	write("after reopening\n", 1)
	w.Close()

	seen := 0
	_, err = ReadRows(d, 0, func(r Row) error {
		seen++
		// A row may carry the time of the record just before it, up to a
		// granule earlier than its own.
		if w := want[r.N]; r.At.After(w) || r.At.Before(w.Add(-timeGranule)) {
			t.Errorf("row %d (%q): at %v, want %v", r.N, r.Line, r.At, want[r.N])
		}
		return nil
	})
	if err != nil || seen == 0 {
		t.Fatalf("read %d rows: %v", seen, err)
	}
	logs, _ := filepath.Glob(filepath.Join(d, "log.*"))
	times, _ := filepath.Glob(filepath.Join(d, "times.*"))
	if len(logs) != 3 || len(times) != 3 {
		t.Errorf("generations %v, times %v", logs, times)
	}
	// Rows from 10:00:29 on start after the last row before it (the
	// generations kept hold the last seconds).
	since, _ := RowAt(d, base.Add(29*time.Second))
	if got := want[since+1]; !got.Equal(base.Add(29 * time.Second)) {
		t.Errorf("RowAt 10:00:29 = %d, whose next row is at %v", since, got)
	}
	if got := want[since]; !got.Before(base.Add(29 * time.Second)) {
		t.Errorf("RowAt 10:00:29 = %d, received at %v", since, got)
	}
	if last, _ := RowAt(d, base.Add(2*time.Hour)); last != row-1 {
		t.Errorf("RowAt after the end = %d, want the last row %d", last, row-1)
	}
	// A log from before times were kept reads with zero times.
	for _, f := range times {
		os.Remove(f)
	}
	ReadRows(d, 0, func(r Row) error {
		if !r.At.IsZero() {
			t.Errorf("row %d has a time with no times file", r.N)
		}
		return nil
	})
}
