package cli

import (
	"fmt"
	"io"
	"reflect"
	"strings"
)

// A line that is "--version" alone is what kong answers before it reads
// the environment or checks a thing (versionFlag's BeforeReset): the
// program's name and the version, status 0. Building kong's model of the
// grammar to get there is most of the time a start-up takes (runagent's
// default command: ~40 flags, ~3 ms on a small VM), so Run answers that
// line itself, for a grammar that has the Globals, with kong's words.

// asksVersion reports whether args are "--version" alone and app's
// grammar embeds Globals, so kong would print the version and nothing else.
func asksVersion(app App, args []string) bool {
	if len(args) != 1 || args[0] != "--version" {
		return false
	}
	t := reflect.TypeOf(app.Grammar)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return false
	}
	f, ok := t.Elem().FieldByName("Globals")
	return ok && f.Anonymous && len(f.Index) == 1 && f.Type == reflect.TypeFor[Globals]()
}

// printVersion is versionFlag's line.
func printVersion(w io.Writer, name string) {
	io.WriteString(w, name+" "+Version()+"\n")
}

// VersionDiff is for the grammar test of each binary: how what Run prints
// for "--version" alone, without kong, differs from what kong prints for
// it; "" when they are the same, or Run leaves the line to kong.
func VersionDiff(app App) string {
	if !asksVersion(app, []string{"--version"}) {
		return ""
	}
	var ours, theirs strings.Builder
	printVersion(&ours, app.Name)
	full := app
	full.Grammar = reflect.New(reflect.TypeOf(app.Grammar).Elem()).Interface()
	env := &Env{Stdout: &theirs, Stderr: &theirs, Getenv: func(string) string { return "" }}
	p, err := newParser(full, env)
	if err != nil {
		return "the grammar does not build: " + err.Error()
	}
	code := -1
	func() {
		defer recoverExit(&code)
		_, err = p.Parse([]string{"--version"})
	}()
	switch {
	case code != ExitOK:
		return fmt.Sprintf("kong did not exit 0 (exit %d, error %v)", code, err)
	case ours.String() != theirs.String():
		return fmt.Sprintf("without kong %q, kong %q", ours.String(), theirs.String())
	}
	return ""
}
