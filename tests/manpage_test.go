package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every long flag a binary's --help shows, for the program and for each of
// its commands, appears in its man page as .Fl -name.
func TestManPagesDocumentEveryFlag(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("..", "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		t.Run(name, func(t *testing.T) {
			page, err := os.ReadFile(filepath.Join("..", "man", name+".1"))
			if err != nil {
				t.Fatalf("no man page: %v", err)
			}
			for _, flag := range helpFlags(t, name) {
				re := regexp.MustCompile(`(?m)Fl \\?-` + regexp.QuoteMeta(flag[2:]) + `\b`)
				if !re.Match(page) {
					t.Errorf("man/%s.1 does not document %s", name, flag)
				}
			}
		})
	}
}

var flagRE = regexp.MustCompile(`(?m)^\s+(?:-\w, )?(--[a-z][a-z0-9-]*)`)
var cmdRE = regexp.MustCompile(`(?m)^Commands:\n((?:  \S.*\n|\s{4,}.*\n)+)`)

// helpFlags collects the long flags of a program's help and its commands'.
func helpFlags(t *testing.T, prog string) []string {
	seen := map[string]bool{}
	var flags []string
	collect := func(args ...string) string {
		out, err := exec.Command(filepath.Join(binDir, prog), append(args, "--help")...).Output()
		if err != nil {
			t.Fatalf("%s %v --help: %v", prog, args, err)
		}
		for _, m := range flagRE.FindAllStringSubmatch(string(out), -1) {
			if !seen[m[1]] && m[1] != "--help" {
				seen[m[1]] = true
				flags = append(flags, m[1])
			}
		}
		return string(out)
	}
	top := collect()
	if m := cmdRE.FindStringSubmatch(top); m != nil {
		for _, line := range strings.Split(m[1], "\n") {
			if strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "    ") {
				collect(strings.Fields(line)[0])
			}
		}
	}
	if len(flags) == 0 {
		t.Fatalf("found no flags in %s --help", prog)
	}
	return flags
}
