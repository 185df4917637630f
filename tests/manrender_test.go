package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestManPagesRender renders every page as a reader sees it — mandoc
// -Tutf8, and groff and man -l where they are installed — and fails on a
// quote that opens inside another, closes nothing, is doubled, or leaves
// out the bracket it was meant to hold (‘[services.name’]); on a quoted
// macro argument that runs into the text after it (.Ql "type":"summary",
// rendered ‘type :"summary"’); and on any warning of mandoc -Tlint
// -Wwarning, which sees none of these.
func TestManPagesRender(t *testing.T) {
	pages, _ := filepath.Glob(filepath.Join("..", "man", "*.[1-9]"))
	if len(pages) == 0 {
		t.Fatal("no man pages in ../man")
	}
	type renderer struct {
		name string
		argv func(page string) []string
	}
	var renderers []renderer
	if _, err := exec.LookPath("mandoc"); err == nil {
		renderers = append(renderers, renderer{"mandoc", func(p string) []string { return []string{"mandoc", "-Tutf8", p} }})
	} else {
		t.Log("no mandoc: the pages are checked with groff and man alone, where they are installed (apt-get install mandoc)")
	}
	if _, err := exec.LookPath("groff"); err == nil {
		renderers = append(renderers, renderer{"groff", func(p string) []string { return []string{"groff", "-mandoc", "-Tutf8", p} }})
	}
	if _, err := exec.LookPath("man"); err == nil {
		renderers = append(renderers, renderer{"man -l", func(p string) []string { return []string{"man", "-l", p} }})
	}
	for _, p := range pages {
		name := filepath.Base(p)
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, problem := range quotedArgsRunOn(name, string(src)) {
				t.Error(problem)
			}
			for _, r := range renderers {
				argv := r.argv(p)
				cmd := exec.Command(argv[0], argv[1:]...)
				cmd.Env = append(os.Environ(), "MANWIDTH=80", "MANPAGER=cat", "PAGER=cat", "LANG=C.UTF-8", "LC_ALL=C.UTF-8")
				out, err := cmd.Output()
				if err != nil {
					t.Errorf("%s: %v", strings.Join(argv, " "), err)
					continue
				}
				for _, problem := range quoteProblems(plainText(out)) {
					t.Errorf("%s renders %s", r.name, problem)
				}
			}
			if _, err := exec.LookPath("mandoc"); err == nil {
				out, err := exec.Command("mandoc", "-Tlint", "-Wwarning", p).CombinedOutput()
				if err != nil || len(out) != 0 {
					t.Errorf("mandoc -Tlint -Wwarning %s: %v\n%s", name, err, out)
				}
			}
		})
	}
}

// plainText drops the overstrikes (c\bc bold, _\bc underline) of a
// terminal rendering.
func plainText(b []byte) string {
	var out []rune
	for _, r := range string(b) {
		if r == '\b' {
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			continue
		}
		out = append(out, r)
	}
	return string(out)
}

var closerOf = map[rune]rune{'[': ']', '(': ')', '{': '}'}

// quoteProblems finds the ‘quotes’ of a rendered page that are not
// balanced: one opened inside another, one closing nothing or left open, a
// doubled one, and a bracket opened inside a quote and closed just after it.
func quoteProblems(text string) []string {
	var problems []string
	lines := strings.Split(text, "\n")
	openLine, inside := 0, []rune(nil)
	for i, l := range lines {
		where := func(what string) {
			problems = append(problems, fmt.Sprintf("%s at line %d: %s", what, i+1, strings.TrimSpace(l)))
		}
		if strings.Contains(l, "‘‘") || strings.Contains(l, "’’") {
			where("a doubled quote")
		}
		rs := []rune(l)
		for j, r := range rs {
			switch {
			case r == '‘':
				if openLine > 0 {
					where("a quote opened inside another")
				}
				openLine, inside = i+1, inside[:0]
			case r == '’':
				if openLine == 0 {
					if j > 0 && j+1 < len(rs) && isLetter(rs[j-1]) && isLetter(rs[j+1]) {
						continue // an apostrophe
					}
					where("a quote that closes nothing")
					continue
				}
				if j+1 < len(rs) {
					if want, ok := unclosed(inside); ok && rs[j+1] == want {
						where(fmt.Sprintf("a %q left out of the quote that opened it", want))
					}
				}
				openLine = 0
			case openLine > 0:
				inside = append(inside, r)
			}
		}
		if openLine > 0 {
			inside = append(inside, ' ')
		}
	}
	if openLine > 0 {
		problems = append(problems, fmt.Sprintf("a quote opened at line %d and never closed", openLine))
	}
	return problems
}

// unclosed: the closer the last unclosed bracket of s wants.
func unclosed(s []rune) (rune, bool) {
	var stack []rune
	for _, r := range s {
		if c, ok := closerOf[r]; ok {
			stack = append(stack, c)
		} else if len(stack) > 0 && r == stack[len(stack)-1] {
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) == 0 {
		return 0, false
	}
	return stack[len(stack)-1], true
}

func isLetter(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}

// quotedArgRE: a quoted macro argument ("" is a quote inside one) and
// what follows its closing quote.
var quotedArgRE = regexp.MustCompile(`(?:^|\s)"(?:[^"]|"")*"(\S?)`)

// quotedArgsRunOn finds macro lines whose quoted argument runs into the
// text after its closing quote: mdoc ends the argument there, and the rest
// is a word of its own.
func quotedArgsRunOn(name, page string) []string {
	var problems []string
	for i, l := range strings.Split(page, "\n") {
		if !strings.HasPrefix(l, ".") || strings.HasPrefix(l, `.\"`) {
			continue
		}
		for _, m := range quotedArgRE.FindAllStringSubmatch(l, -1) {
			if m[1] != "" {
				problems = append(problems, fmt.Sprintf("%s:%d: a quoted argument runs into %q, which mdoc makes a word of its own (write \\(dq for a literal quote): %s", name, i+1, m[1], l))
				break
			}
		}
	}
	return problems
}

// The checks find what they claim to.
func TestQuoteProblemsFound(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"(‘3, ‘true, ‘null’’’)", "a quote opened inside another"},
		{"(‘3, ‘true, ‘null’’’)", "a doubled quote"},
		{"one table for each, ‘[services.name’], and", `a ']' left out`},
		{"a ‘quote", "never closed"},
		{"a quote’ here", "closes nothing"},
	} {
		got := strings.Join(quoteProblems(tc.text), "\n")
		if !strings.Contains(got, tc.want) {
			t.Errorf("quoteProblems(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
	for _, ok := range []string{"the page’s ‘[’ and ‘{" + "’ (‘[@name](URI)’)", "‘[cut off at N\n  characters]’"} {
		if got := quoteProblems(ok); len(got) != 0 {
			t.Errorf("quoteProblems(%q) = %q, want none", ok, got)
		}
	}
	if got := quotedArgsRunOn("x.1", ".Ql \"type\":\"summary\"\n.Ql \"a \"\"b\"\"\" ,\n"); len(got) != 1 || !strings.Contains(got[0], "x.1:1:") {
		t.Errorf("quotedArgsRunOn = %q, want one problem, on line 1", got)
	}
}
