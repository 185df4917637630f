package ndjson

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// AppendUnescaped appends the text of raw, a JSON string literal with its
// quotes from a valid line, and returns the extended buffer. It allocates
// nothing but out's growth. A lone surrogate becomes U+FFFD, as in
// encoding/json. doubleQuotes doubles every quote in the text, as a CSV
// cell needs (a JSON string's quotes all come from escapes, \" or \u0022).
func AppendUnescaped(out, raw []byte, doubleQuotes bool) []byte {
	return appendText(out, raw, doubleQuotes, false)
}

// AppendTSV appends the text of raw, a JSON string literal with its quotes
// from a valid line, as a TSV cell: tab, newline, carriage return and
// backslash as \t, \n, \r and \\ (jq's @tsv), the rest as
// AppendUnescaped has it. The escapes JSON and TSV share are copied as
// they are, so a text full of newlines is not unescaped to be escaped
// again.
func AppendTSV(out, raw []byte) []byte {
	return appendText(out, raw, false, true)
}

func appendText(out, raw []byte, doubleQuotes, tsv bool) []byte {
	if len(raw) < 2 {
		return out
	}
	s := raw[1 : len(raw)-1]
	for {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			i = len(s)
		}
		out = append(out, s[:i]...)
		if i >= len(s)-1 {
			return out
		}
		c := s[i+1]
		s = s[i+2:]
		switch c {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n', 'r', 't':
			if tsv {
				out = append(out, '\\', c)
			} else {
				out = append(out, control(c))
			}
		case 'u':
			r := hexRune(s)
			s = s[min(4, len(s)):]
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
					r2 = hexRune(s[2:])
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					r = dec
					s = s[6:]
				} else {
					r = utf8.RuneError
				}
			}
			if r == '"' && doubleQuotes {
				out = append(out, '"')
			}
			if e := tsvEscapes(r); tsv && e != 0 {
				out = append(out, '\\', e)
				continue
			}
			out = utf8.AppendRune(out, r)
		case '"':
			if doubleQuotes {
				out = append(out, '"')
			}
			out = append(out, '"')
		case '\\':
			if tsv {
				out = append(out, '\\')
			}
			out = append(out, '\\')
		default: // '/'
			out = append(out, c)
		}
	}
}

// control is the character of JSON's escape \n, \r or \t.
func control(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	}
	return '\t'
}

// tsvEscapes is the letter TSV escapes r with, or 0.
func tsvEscapes(r rune) byte {
	switch r {
	case '\t':
		return 't'
	case '\n':
		return 'n'
	case '\r':
		return 'r'
	case '\\':
		return '\\'
	}
	return 0
}

// hexRune is the rune of the four hex digits s begins with.
func hexRune(s []byte) rune {
	if len(s) < 4 {
		return utf8.RuneError
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return utf8.RuneError
		}
		r = r<<4 | rune(c)
	}
	return r
}
