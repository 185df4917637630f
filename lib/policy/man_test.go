package policy

import (
	"os"
	"strings"
	"testing"
)

// manDisplays are the literal displays of agentry-policy(5), escapes
// undone, with the example marks before each, a line each (empty when
// none).
func manDisplays(t *testing.T) (marks, texts []string) {
	t.Helper()
	b, err := os.ReadFile("../../man/agentry-policy.5")
	if err != nil {
		t.Fatal(err)
	}
	var mark string
	var body []string
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case in && l == ".Ed":
			marks, texts = append(marks, mark), append(texts, strings.Join(body, "\n")+"\n")
			mark, body, in = "", nil, false
		case in:
			l = strings.ReplaceAll(strings.ReplaceAll(l, `\&`, ""), `\e`, `\`)
			body = append(body, l)
		case strings.HasPrefix(l, `.\" example: `):
			mark += strings.TrimPrefix(l, `.\" example: `) + "\n"
		case strings.HasPrefix(l, ".Bd -literal"):
			in = true
		}
	}
	return marks, texts
}

// The policies the page shows parse, and what it says of them holds.
func TestManPage(t *testing.T) {
	marks, texts := manDisplays(t)
	var ci *Policy
	byName := map[string]*Policy{}
	policies := 0
	for i, text := range texts {
		switch {
		case strings.HasPrefix(text, "["):
			name, _, _ := strings.Cut(marks[i], "\n")
			p, err := Parse(name, []byte(text))
			if err != nil {
				t.Errorf("the page's policy %q does not parse: %v", name, err)
				continue
			}
			policies++
			if strings.HasPrefix(marks[i], "file ci.toml\n") {
				ci = p
			}
			byName[strings.TrimPrefix(name, "file ")] = p
		case strings.HasPrefix(marks[i], "skip lines the policy above denies"):
			if ci == nil {
				t.Fatal("no ci.toml before the lines it denies")
			}
			for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
				if d := ci.Check(Call{Command: line}, t.TempDir()); d.Verdict != Deny {
					t.Errorf("the page says ci.toml denies %q: %+v", line, d)
				}
			}
		case strings.HasPrefix(text, "agent-host: error: --policy: "):
			_, err := Parse("policy.toml", []byte("[commands]\ndeny = [\"git push*\"]\nforbid = [\"x\"]\n"))
			if want := strings.TrimPrefix(strings.TrimSpace(text), "agent-host: error: --policy: "); err == nil || err.Error() != want {
				t.Errorf("the page's error is %q, Parse's %v", want, err)
			}
		}
	}
	// what the page says of its review and fetch examples
	if review := byName["review.toml"]; review == nil {
		t.Error("no review.toml on the page")
	} else {
		for line, v := range map[string]Verdict{"git diff HEAD": Allow, "ls": Allow, "rm -rf x": Deny, "git diff; touch x": Deny} {
			if d := review.Check(Call{Command: line}, t.TempDir()); d.Verdict != v {
				t.Errorf("review.toml: %q: got %+v, want %v", line, d, v)
			}
		}
	}
	if fetch := byName["fetch.toml"]; fetch == nil {
		t.Error("no fetch.toml on the page")
	} else {
		for h, v := range map[string]Verdict{"https://github.com/x": Allow, "api.github.com": Allow, "example.com": Ask, "http://169.254.169.254/": Deny} {
			if d := fetch.Check(Call{Hosts: []string{h}}, ""); d.Verdict != v {
				t.Errorf("fetch.toml: %q: got %+v, want %v", h, d, v)
			}
		}
	}
	if policies < 5 || ci == nil {
		t.Errorf("%d policies on the page, ci.toml %v", policies, ci != nil)
	}
}
