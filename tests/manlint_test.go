package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestManPagesWellFormed is the part of mandoc -Tlint that needs no
// mandoc: make man-lint runs it alone where mandoc is not installed, and
// it runs with every other test everywhere. It checks what a page needs to
// render at all (the prologue, NAME with .Nm and .Nd, the sections in
// order, lists and displays closed) and what mandoc warns about most
// (blank lines, trailing space, unknown macros).
func TestManPagesWellFormed(t *testing.T) {
	pages, _ := filepath.Glob(filepath.Join("..", "man", "*.[1-9]"))
	if len(pages) == 0 {
		t.Fatal("no man pages in ../man")
	}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, problem := range lintMdoc(filepath.Base(p), string(b)) {
			t.Errorf("%s", problem)
		}
	}
}

// mdocMacros are the mdoc macros a page may use.
var mdocMacros = strings.Fields(`Dd Dt Os Sh Ss Pp Bl El It Bd Ed D1 Dl Nm Nd Op Oo Oc Fl Ar Cm Ic Ev Pa Xr Ql Qq Dq Sq Pq
	Po Pc Brq Bro Brc Bq Em Sy Li No Ns Sx Va Er Ex Rv Fn Fa Ft Fd In Lk Mt An Rs Re %A %T %D %U %O %B %J %N %P %V %R %Q %C %I
	Tn At Bx Ux St Lb Aq Ta Bf Ef Dv Ms Ad Cd Vt Xo Xc`)

// sectionOrder is the conventional order of a page's sections.
var sectionOrder = []string{"NAME", "LIBRARY", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "CONTEXT", "IMPLEMENTATION NOTES",
	"RETURN VALUES", "ENVIRONMENT", "FILES", "EXIT STATUS", "EXAMPLES", "DIAGNOSTICS", "ERRORS", "SEE ALSO", "STANDARDS",
	"HISTORY", "AUTHORS", "CAVEATS", "BUGS", "SECURITY CONSIDERATIONS"}

func lintMdoc(name, page string) []string {
	var problems []string
	bad := func(line int, format string, args ...any) {
		problems = append(problems, name+":"+strconv.Itoa(line)+": "+fmt.Sprintf(format, args...))
	}
	lines := strings.Split(strings.TrimSuffix(page, "\n"), "\n")
	want := []string{".Dd ", ".Dt ", ".Os"}
	for i, w := range want {
		if i >= len(lines) || !strings.HasPrefix(lines[i], w) {
			bad(i+1, "the prologue must open with .Dd, .Dt, .Os; line %d is not %s", i+1, strings.TrimSpace(w))
		}
	}
	if len(lines) > 1 {
		f := strings.Fields(lines[1])
		ext := name[strings.LastIndexByte(name, '.')+1:]
		if len(f) < 3 || f[1] != strings.ToUpper(f[1]) || f[2] != ext {
			bad(2, ".Dt wants an upper-case title and section %s: %q", ext, lines[1])
		}
	}
	var sections []string
	open := map[string]int{}
	for i, l := range lines {
		n := i + 1
		switch {
		case l == "":
			bad(n, "blank line (use .Pp)")
		case strings.TrimRight(l, " \t") != l:
			bad(n, "trailing whitespace")
		}
		if !strings.HasPrefix(l, ".") || strings.HasPrefix(l, `.\"`) {
			continue
		}
		f := strings.Fields(l[1:])
		if len(f) == 0 {
			continue
		}
		m := f[0]
		if !slices.Contains(mdocMacros, m) {
			bad(n, "unknown macro .%s", m)
		}
		switch m {
		case "Sh":
			sections = append(sections, strings.Join(f[1:], " "))
		case "Bl":
			open["Bl"]++
			if len(f) < 2 || !strings.HasPrefix(f[1], "-") {
				bad(n, ".Bl without a list type")
			}
		case "El":
			open["Bl"]--
		case "Bd":
			open["Bd"]++
		case "Ed":
			open["Bd"]--
		}
		for k, v := range open {
			if v < 0 {
				bad(n, "a .%s closes nothing", map[string]string{"Bl": "El", "Bd": "Ed"}[k])
				open[k] = 0
			}
		}
	}
	for k, v := range open {
		if v != 0 {
			bad(len(lines), "%d .%s left open", v, k)
		}
	}
	if len(sections) == 0 || sections[0] != "NAME" {
		bad(1, "the first section must be NAME")
	}
	if !strings.Contains(page, "\n.Nm ") || !strings.Contains(page, "\n.Nd ") {
		bad(1, "NAME needs .Nm and .Nd")
	}
	if !slices.Contains(sections, "DESCRIPTION") {
		bad(1, "no DESCRIPTION section")
	}
	last := -1
	for _, s := range sections {
		at := slices.Index(sectionOrder, s)
		if at < 0 {
			continue // a section of the page's own
		}
		if at < last {
			bad(1, "section %s is out of the conventional order", s)
		}
		last = at
	}
	return problems
}

// The checker itself finds what it claims to.
func TestLintMdocFindsFaults(t *testing.T) {
	page := ".Dd December 1, 2026\n.Dt demo 1\n.Os\n.Sh DESCRIPTION\ntext \n\n.Bl -tag\n.Zz\n.Sh NAME\n"
	got := strings.Join(lintMdoc("demo.1", page), "\n")
	for _, want := range []string{"upper-case title", "blank line", "trailing whitespace", "unknown macro .Zz",
		".Bl left open", "first section must be NAME", "needs .Nm and .Nd", "NAME is out of the conventional order"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
}
