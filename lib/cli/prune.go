package cli

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/alecthomas/kong"
)

// A command line that names one command first, the common case, needs
// kong's model of that command and of the flags every command shares, and
// of no other command. Building the model of the whole grammar reflects
// over every flag of every command, and, page faults included, costs
// several milliseconds on a small VM each time a program starts (ndjson:
// twelve commands, about a hundred flags), which a command that itself
// runs for a few milliseconds pays in full. So Run builds, for such a
// line, a grammar of that one command, and for a line that names no
// command, one of the default command: the parse, its errors and the
// command that runs are the ones the whole grammar gives for that line.
// Help or a completion script asked for anywhere, a line that names a
// command after its first word, or no default to fall back on, get the
// whole grammar, as does every caller of NewParser.

// pruned returns a grammar for args holding only the command args names
// first — or, when args name no command anywhere, the grammar's default
// command — with every field of grammar that is not a command. name is
// that command's first word, "" for the default one. ok is false when the
// whole grammar is needed: args ask for help, start with no command and
// there is no default one to fall back on, or grammar is not a zero
// struct without methods that can be copied field by field.
func pruned(grammar any, args []string) (g any, name string, ok bool) {
	shared, cmd, name, ok := selectCommand(grammar, args)
	if !ok {
		return nil, "", false
	}
	return reflect.New(reflect.StructOf(append(shared, cmd))).Interface(), name, true
}

// selectCommand is pruned's choice: the fields of grammar that are not
// commands, the command field args run, and its name in args ("" for
// the default command).
func selectCommand(grammar any, args []string) (shared []reflect.StructField, cmd reflect.StructField, name string, ok bool) {
	if len(args) == 0 || asksHelp(args) {
		return nil, cmd, "", false
	}
	v := reflect.ValueOf(grammar)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct || v.Type().NumMethod() > 0 || !v.Elem().IsZero() {
		return nil, cmd, "", false
	}
	t := v.Elem().Type()
	var cmds []reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			return nil, cmd, "", false
		}
		if _, cmd := f.Tag.Lookup("cmd"); cmd {
			cmds = append(cmds, f)
		} else {
			shared = append(shared, f)
		}
	}
	keep, name := -1, args[0]
	for i, f := range cmds {
		if mayName(f, name) {
			keep = i
			break
		}
	}
	if keep < 0 {
		// No command first: the default one runs, unless a command is
		// named further on, which the whole grammar may read otherwise.
		name = ""
		for i, f := range cmds {
			if _, d := f.Tag.Lookup("default"); d && keep < 0 {
				keep = i
			} else if namesAny(f, args) {
				return nil, cmd, "", false
			}
		}
		if keep < 0 {
			return nil, cmd, "", false
		}
	}
	return shared, cmds[keep], name, true
}

// namesAny reports whether a word of args before a "--" may name the
// command field f.
func namesAny(f reflect.StructField, args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if mayName(f, a) {
			return true
		}
	}
	return false
}

// asksHelp reports whether args ask, before a "--", for help or for a
// completion script: both are made from the model of the whole grammar.
func asksHelp(args []string) bool {
	for _, a := range args {
		switch {
		case a == "--":
			return false
		case a == "-h" || a == "--help" || strings.HasPrefix(a, "--help=") ||
			a == "--completion" || strings.HasPrefix(a, "--completion="):
			return true
		}
	}
	return false
}

// mayName reports whether word may be the name, or an alias, of the
// command field f. kong names a command from its name tag or, by default,
// its field name in lower case with dashes between the words; the caller
// confirms the match against the model kong built (see prunedParser).
func mayName(f reflect.StructField, word string) bool {
	if word == "" {
		return false
	}
	if n := f.Tag.Get("name"); n != "" {
		if n == word {
			return true
		}
	} else if strings.EqualFold(strings.ReplaceAll(word, "-", ""), f.Name) {
		return true
	}
	return slices.Contains(strings.Split(f.Tag.Get("aliases"), ","), word)
}

// prunedParser builds the parser of the grammar pruned for args, if there
// is one and kong agrees that its one command is called args[0], or is
// the default one.
func prunedParser(app App, env *Env, args []string) *kong.Kong {
	g, name, ok := pruned(app.Grammar, args)
	if !ok {
		return nil
	}
	app.Grammar = g
	p, err := newParser(app, env)
	if err != nil {
		return nil
	}
	if name == "" {
		if p.Model.Node.DefaultCmd == nil {
			return nil
		}
		return p
	}
	for _, c := range p.Model.Node.Children {
		if c.Type == kong.CommandNode && (c.Name == name || slices.Contains(c.Aliases, name)) {
			return p
		}
	}
	return nil
}

// comparePruned parses args with the whole grammar of app and, when Run
// would prune it for args, with the pruned one, and tells how they differ:
// in the command chosen, the values its flags and arguments were given,
// or the error; pruned says whether Run prunes for args.
func comparePruned(app App, env *Env, args []string) (pruned bool, diff string) {
	full := app
	full.Grammar = reflect.New(reflect.TypeOf(app.Grammar).Elem()).Interface()
	p := prunedParser(app, env, args)
	if p == nil {
		return false, ""
	}
	f, err := newParser(full, env)
	if err != nil {
		return true, "the whole grammar does not build: " + err.Error()
	}
	pc, perr := p.Parse(args)
	fc, ferr := f.Parse(args)
	switch {
	case (perr == nil) != (ferr == nil) || perr != nil && perr.Error() != ferr.Error():
		return true, "errors differ: pruned " + errText(perr) + ", whole " + errText(ferr)
	case perr != nil:
		return true, ""
	case pc.Command() != fc.Command():
		return true, "commands differ: pruned " + pc.Command() + ", whole " + fc.Command()
	}
	pv, fv := selected(pc), selected(fc)
	if !reflect.DeepEqual(pv, fv) {
		return true, "the command's values differ"
	}
	return true, ""
}

func errText(err error) string {
	if err == nil {
		return "none"
	}
	return err.Error()
}

// selected is the value of the command a parse chose.
func selected(c *kong.Context) any {
	for _, p := range slices.Backward(c.Path) {
		if p.Command != nil {
			return p.Command.Target.Interface()
		}
	}
	return nil
}

// PrunedDiffs is for the grammar test of each binary: it parses, with the
// whole grammar and with the grammar Run prunes it to, samples and, for
// every command, the command alone, with a flag it does not have and
// with two words more; and returns every way the two parses differ, and
// every command Run never pruned for.
func PrunedDiffs(app App, env *Env, samples [][]string) []string {
	f, err := newParser(app, env)
	if err != nil {
		return []string{"the grammar does not build: " + err.Error()}
	}
	var diffs []string
	check := func(args []string) bool {
		pruned, diff := comparePruned(app, env, args)
		if diff != "" {
			diffs = append(diffs, fmt.Sprintf("%q: %s", args, diff))
		}
		return pruned
	}
	for _, args := range samples {
		check(args)
	}
	for _, c := range f.Model.Node.Children {
		if c.Type != kong.CommandNode {
			continue
		}
		if !check([]string{c.Name}) {
			diffs = append(diffs, fmt.Sprintf("%s: the grammar is not pruned for it", c.Name))
		}
		check([]string{c.Name, "--no-such-flag"})
		check([]string{c.Name, "one", "two"})
	}
	return diffs
}
