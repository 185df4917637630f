package ndjsontool

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/agentry/agentry/lib/ndjson"
)

// GetOptions are the options of get.
type GetOptions struct {
	Paths []string
	// Raw prints strings as their text; with several paths the output is
	// tab-separated.
	Raw bool
	// Missing is printed for a path a line lacks; nil means "null" (JSON
	// output) or nothing (raw output).
	Missing *string
	// SkipMissing drops lines that lack any of the paths.
	SkipMissing bool
}

// Get prints the values at the paths of every valid line.
func Get(ctx context.Context, st *Stream, o GetOptions) error {
	if len(o.Paths) == 0 {
		return &OptionError{Option: "Paths", Reason: "must hold at least one path"}
	}
	missing := ""
	if !o.Raw {
		missing = "null"
	}
	if o.Missing != nil {
		missing = *o.Missing
		if !o.Raw && ndjson.Check([]byte(missing)) != ndjson.Valid {
			return &OptionError{Option: "Missing", Value: missing, Reason: "is not JSON, and output without Raw is JSON"}
		}
	}
	multi := len(o.Paths) > 1
	ps := newPaths(o.Paths)
	find := finding{paths: ps.fps} // several: the check finds them all on its one walk
	if !multi {
		find = finding{path: ps.fps[0]} // one: the check finds it on its way
	}
	sk, err := st.eachLine(ctx, find, func(out, line []byte, lv lineView) []byte {
		var buf [8]value
		vals := ps.vals(&buf)
		if multi {
			ps.getAll(line, lv, vals)
		} else {
			vals[0] = lv.found(line, o.Paths[0], ps.fps[0])
		}
		if o.SkipMissing {
			for _, v := range vals {
				if !v.ok {
					return out
				}
			}
		}
		switch {
		case !multi:
			out = appendValue(out, vals[0], o.Raw, missing, false)
		case o.Raw:
			for i, v := range vals {
				if i > 0 {
					out = append(out, '\t')
				}
				out = appendValue(out, v, true, missing, true)
			}
		default:
			out = append(out, '[')
			for i, v := range vals {
				if i > 0 {
					out = append(out, ',')
				}
				out = appendValue(out, v, false, missing, false)
			}
			out = append(out, ']')
		}
		return append(out, '\n')
	})
	if err != nil {
		return err
	}
	return sk.report(st)
}

// appendValue appends one value: its JSON text, or with raw a string's
// text; tsv escapes tabs, newlines and backslashes so a row stays a row.
func appendValue(out []byte, v value, raw bool, missing string, tsv bool) []byte {
	switch {
	case !v.ok:
		return append(out, missing...)
	case raw && v.isString() && tsv:
		return ndjson.AppendTSV(out, v.raw)
	case raw && v.isString():
		return ndjson.AppendUnescaped(out, v.raw, false)
	case tsv:
		return tsvEscape(out, str(v.raw))
	}
	return append(out, v.raw...)
}

// stringCell is a string value as a cell of count's and stats' text
// tables: its text, escaped as get's TSV is, unless that text would read
// as another value there — a number, true, false, null, JSON's own text
// of a string, object or array, (missing), what stats prints for a sum no
// number holds (NaN, Infinity), or a cell that looks empty or is padded
// (spaces at either end) — when it is its JSON, quotes and all: the
// string "1" is "1", the number 1 is 1.
func stringCell(s string) string {
	switch {
	case s == "", s == "(missing)", s == "NaN", s == "Infinity", s == "-Infinity",
		strings.TrimSpace(s) != s, json.Valid([]byte(s)):
		return string(quote(s))
	}
	return string(tsvEscape(nil, s))
}

func tsvEscape(out []byte, s string) []byte {
	if !strings.ContainsAny(s, "\t\n\r\\") {
		return append(out, s...)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\t':
			out = append(out, '\\', 't')
		case '\n':
			out = append(out, '\\', 'n')
		case '\r':
			out = append(out, '\\', 'r')
		case '\\':
			out = append(out, '\\', '\\')
		default:
			out = append(out, c)
		}
	}
	return out
}
