package ndjsontool

import (
	"context"
	"strings"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/ndjson"
	"github.com/tidwall/gjson"
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
		return cli.Usagef("get needs at least one path")
	}
	missing := ""
	if !o.Raw {
		missing = "null"
	}
	if o.Missing != nil {
		missing = *o.Missing
		if !o.Raw && ndjson.Check([]byte(missing)) != ndjson.Valid {
			return cli.WithHint(cli.Usagef("--missing %q is not JSON, and output without -r is JSON", missing),
				`quote a string as JSON: --missing '"none"', or use -r`)
		}
	}
	multi := len(o.Paths) > 1
	sk, err := st.eachLine(ctx, func(out, line []byte) ([]byte, bool) {
		if ndjson.Check(line) != ndjson.Valid {
			return out, false
		}
		s := str(line)
		var rs [8]gjson.Result
		res := rs[:0]
		for _, p := range o.Paths {
			r := gjson.Get(s, p)
			if o.SkipMissing && !r.Exists() {
				return out, true
			}
			res = append(res, r)
		}
		switch {
		case !multi:
			out = appendValue(out, res[0], o.Raw, missing, false)
		case o.Raw:
			for i, r := range res {
				if i > 0 {
					out = append(out, '\t')
				}
				out = appendValue(out, r, true, missing, true)
			}
		default:
			out = append(out, '[')
			for i, r := range res {
				if i > 0 {
					out = append(out, ',')
				}
				out = appendValue(out, r, false, missing, false)
			}
			out = append(out, ']')
		}
		return append(out, '\n'), true
	})
	if err != nil {
		return err
	}
	return sk.report(st)
}

// appendValue appends one value: its JSON text, or with raw a string's
// text; tsv escapes tabs, newlines and backslashes so a row stays a row.
func appendValue(out []byte, r gjson.Result, raw bool, missing string, tsv bool) []byte {
	switch {
	case !r.Exists():
		return append(out, missing...)
	case raw && r.Type == gjson.String:
		if !tsv {
			return append(out, r.Str...)
		}
		return tsvEscape(out, r.Str)
	case tsv:
		return tsvEscape(out, r.Raw)
	}
	return append(out, r.Raw...)
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
