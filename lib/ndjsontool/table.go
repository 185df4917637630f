package ndjsontool

import (
	"bytes"
	"context"
	"encoding/json"
	"io"

	"github.com/agentry/agentry/lib/ndjson"
)

// TableOptions are the options of csv and tsv.
type TableOptions struct {
	// Fields are PATH or KEY=PATH, as for pick: the header row holds the
	// keys.
	Fields   []string
	NoHeader bool
}

// CSV prints a header row, then one RFC 4180 row per valid line: strings
// quoted (as jq's @csv does), numbers and booleans bare, null and missing
// empty, arrays and objects as compact JSON in quotes.
func CSV(ctx context.Context, st *Stream, o TableOptions) error {
	return table(ctx, st, o, "csv", ',', appendCSV)
}

// TSV prints a header row, then one row per valid line: strings as their
// text with tab, newline, carriage return and backslash escaped as get -r
// does (and jq's @tsv), null and missing empty.
func TSV(ctx context.Context, st *Stream, o TableOptions) error {
	return table(ctx, st, o, "tsv", '\t', appendTSV)
}

func table(ctx context.Context, st *Stream, o TableOptions, verb string, sep byte, cell func([]byte, value) []byte) error {
	fields, err := parsePick(verb, o.Fields)
	if err != nil {
		return err
	}
	if !o.NoHeader {
		if err := writeHeader(st.Out, fields, sep, cell); err != nil {
			return err
		}
	}
	ps := newPaths(fieldPaths(fields))
	sk, err := st.eachLine(ctx, finding{paths: ps.fps}, func(out, line []byte, lv lineView) []byte {
		var buf [8]value
		vals := ps.vals(&buf)
		ps.getAll(line, lv, vals)
		for i, v := range vals {
			if i > 0 {
				out = append(out, sep)
			}
			out = cell(out, v)
		}
		return append(out, '\n')
	})
	if err != nil {
		return err
	}
	return sk.report(st)
}

// writeHeader writes the keys, each as a string cell.
func writeHeader(w io.Writer, fields []pickField, sep byte, cell func([]byte, value) []byte) error {
	var b []byte
	for i, f := range fields {
		if i > 0 {
			b = append(b, sep)
		}
		b = cell(b, value{raw: bytes.TrimSuffix(f.key, []byte(":")), ok: true})
	}
	_, err := w.Write(append(b, '\n'))
	return err
}

func appendCSV(out []byte, v value) []byte {
	switch {
	case !v.ok || string(v.raw) == "null":
		return out
	case v.isString():
		// A string without a backslash holds no quote: its JSON text,
		// quotes and all, is its CSV cell.
		if bytes.IndexByte(v.raw, '\\') < 0 {
			return append(out, v.raw...)
		}
		// Unescaped straight into the row, quotes doubled.
		out = append(out, '"')
		out = ndjson.AppendUnescaped(out, v.raw, true)
		return append(out, '"')
	case v.raw[0] == '{' || v.raw[0] == '[':
		return csvQuote(out, compact(v.raw))
	}
	return append(out, v.raw...) // a number, true or false, as written
}

// csvQuote appends s in double quotes, a quote doubled.
func csvQuote(out, s []byte) []byte {
	out = append(out, '"')
	for {
		i := bytes.IndexByte(s, '"')
		if i < 0 {
			break
		}
		out = append(append(out, s[:i+1]...), '"')
		s = s[i+1:]
	}
	return append(append(out, s...), '"')
}

func appendTSV(out []byte, v value) []byte {
	switch {
	case !v.ok || string(v.raw) == "null":
		return out
	case v.isString():
		return ndjson.AppendTSV(out, v.raw)
	case v.raw[0] == '{' || v.raw[0] == '[':
		return tsvEscape(out, string(compact(v.raw)))
	}
	return append(out, v.raw...)
}

// compact is a JSON text without its insignificant whitespace.
func compact(raw []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
