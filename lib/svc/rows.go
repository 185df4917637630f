package svc

import (
	"fmt"

	"github.com/agentry/agentry/lib/svc/logfile"
)

// Row is one row of a service's log.
type Row = logfile.Row

// lastLineMost is how much of a row LastLines keeps: a tail shown in a
// message or a result, not a log.
const lastLineMost = 4 << 10

// LastLines are the last n rows of the service's log, as text, each cut at
// 4 KiB with a note of what more it had.
func LastLines(d Dir, n int) []string {
	last, err := logfile.LastRow(d.Path())
	if err != nil {
		return nil
	}
	var out []string
	logfile.ReadRowsUpTo(d.Path(), max(last-int64(n), 0), lastLineMost, func(r Row) error {
		line := string(r.Line)
		if more := r.Size - int64(len(r.Line)); more > 0 {
			line += fmt.Sprintf(" … [%d more bytes]", more)
		}
		out = append(out, line)
		return nil
	})
	return out
}

// ReadRowsUpTo is ReadRows holding at most most bytes of each row (see
// logfile.ReadRowsUpTo).
func ReadRowsUpTo(d Dir, since int64, most int, fn func(Row) error) (int64, error) {
	return logfile.ReadRowsUpTo(d.Path(), since, most, fn)
}

// ReadRows calls fn for every row of the service's log after since, and
// returns the last row read.
func ReadRows(d Dir, since int64, fn func(Row) error) (int64, error) {
	return logfile.ReadRows(d.Path(), since, fn)
}
