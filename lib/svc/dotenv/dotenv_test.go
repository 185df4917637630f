package dotenv

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".env")
	text := "# a comment\n\nA=1\nexport B = two words \nC='it is $HOME # not a comment'\nD=\"line\\nnext \\\"q\\\" \\$x\" # note\nE=bare # comment\nF=\nG.H=x=y\r\n"
	os.WriteFile(path, []byte(text), 0o600)
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"A=1", "B=two words", "C=it is $HOME # not a comment", "D=line\nnext \"q\" $x", "E=bare", "F=", "G.H=x=y"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q", got)
	}
	for _, bad := range []struct{ text, msg string }{
		{"A=1\nnot a line\n", ":2: no '='"},
		{"1A=x\n", `:1: "1A" is not a variable name`},
		{"A='open\n", ":1: A: the single quote is not closed"},
		{"A=\"open\n", ":1: A: the double quote is not closed"},
		{"A='x' y\n", `:1: A: "y" after the closing quote`},
	} {
		os.WriteFile(path, []byte(bad.text), 0o600)
		if _, err := Read(path); err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("%q: %v, want %q", bad.text, err, bad.msg)
		}
	}
}
