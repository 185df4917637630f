package svc

import (
	"github.com/agentry/agentry/lib/svc/logfile"
)

// Row is one row of a service's log.
type Row = logfile.Row

// LastLines are the last n rows of the service's log, as text.
func LastLines(d Dir, n int) []string {
	last, err := logfile.LastRow(d.Path())
	if err != nil {
		return nil
	}
	var out []string
	logfile.ReadRows(d.Path(), max(last-int64(n), 0), func(r Row) error {
		out = append(out, string(r.Line))
		return nil
	})
	return out
}

// ReadRows calls fn for every row of the service's log after since, and
// returns the last row read.
func ReadRows(d Dir, since int64, fn func(Row) error) (int64, error) {
	return logfile.ReadRows(d.Path(), since, fn)
}
