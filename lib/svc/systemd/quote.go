package systemd

import (
	"fmt"
	"strings"
)

// UnitName is a unit's name of parts joined by '-', each part with the
// characters a unit name cannot hold (anything but ASCII letters,
// digits, ':', '_', '.' and '-'; a leading '.') escaped as \xNN, as
// systemd-escape escapes them, and '/' as '-'. A name that is already
// one stays as it is: shop-web, not shop\x2dweb.
func UnitName(suffix string, parts ...string) string {
	esc := make([]string, len(parts))
	for i, p := range parts {
		esc[i] = escapePart(p)
	}
	return strings.Join(esc, "-") + "." + suffix
}

func escapePart(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '/':
			b.WriteByte('-')
		case c == '.' && i == 0, !unitChar(c):
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func unitChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ':' || c == '_' || c == '.' || c == '-'
}

// ExecWords is argv as ExecStart= holds it: each word in double quotes,
// with C escapes for '"', '\\' and control characters, "$$" for '$' (not
// an environment variable) and "%%" for '%' (not a specifier). Quoted, a
// word ";" is an argument, not a command separator.
func ExecWords(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		words[i] = quoted(a, true)
	}
	return strings.Join(words, " ")
}

// quoted is s in double quotes for a unit file's value: dollars doubled
// where the setting expands variables (ExecStart=), not where it does not
// (Environment=).
func quoted(s string, dollars bool) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '%':
			b.WriteString("%%")
		case c == '$' && dollars:
			b.WriteString("$$")
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// pathValue is a path as a setting that takes the rest of its line
// (WorkingDirectory=, EnvironmentFile=) holds it: '%' doubled.
func pathValue(p string) string { return strings.ReplaceAll(p, "%", "%%") }

// envFileLine is K=V as an EnvironmentFile= line: the value in double
// quotes, in which systemd takes '"', '\\', '`' and '$' after a backslash
// as themselves and expands nothing.
func envFileLine(k, v string) string {
	var b strings.Builder
	b.WriteString(k)
	b.WriteString(`="`)
	for i := 0; i < len(v); i++ {
		if c := v[i]; c == '"' || c == '\\' || c == '`' || c == '$' {
			b.WriteByte('\\')
		}
		b.WriteByte(v[i])
	}
	b.WriteString("\"\n")
	return b.String()
}
