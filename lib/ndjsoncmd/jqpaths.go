package ndjsoncmd

import (
	"reflect"
	"regexp"
	"strings"

	"github.com/agentry/agentry/lib/cli"
	"github.com/alecthomas/kong"
)

// A path written as jq writes one — .package, .labels[0].name — is no
// path of ndjson's: its leading dot is an empty key, so every line has
// nothing there, and get printed null for each, where found nothing, exit
// 0. And a jq filter given to where (select(.a=="b")) was a path no line
// has. So a path, a field's path, a predicate's path or a flag's PATH
// written so is refused, with the path ndjson means. A key that does
// begin with a dot is written with it escaped: \.env.

// jqStyle tells whether path is begun as jq begins one: a dot before a
// name, an index or a quoted key (after a negation's "!"); or jq's
// identity, the dot alone. (A test, not a regexp: it runs on every
// command line, and compiling one at start-up costs more.)
func jqStyle(path string) bool {
	path = strings.TrimPrefix(path, "!")
	if !strings.HasPrefix(path, ".") {
		return false
	}
	if len(path) == 1 {
		return true
	}
	c := path[1]
	return c == '_' || c == '"' || c == '[' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// jqIndex is a jq index or quoted key, [0] or ["a b"]: compiled only to
// word a refusal.
const jqIndex = `\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]|(\[\])`

// checkJQPaths refuses, for the selected verb, the first path written as
// jq would write it.
func checkJQPaths(kctx *kong.Context) error {
	node := kctx.Selected()
	if node == nil {
		return nil
	}
	for _, p := range node.Positional {
		if !p.Set {
			continue
		}
		for _, arg := range targetStrings(p.Target) {
			if err := jqArgError(node.Name, p.Name, arg); err != nil {
				return err
			}
		}
	}
	for _, f := range node.Flags {
		if f.PlaceHolder != "PATH" || !f.Set {
			continue
		}
		name := "--" + f.Name
		if f.Short != 0 {
			name = "-" + string(f.Short)
		}
		for _, arg := range targetStrings(f.Target) {
			// join's -k is LEFT=RIGHT when the two differ.
			for _, path := range strings.SplitN(arg, "=", 2) {
				if jqStyle(path) {
					return jqPathError(path, name+" "+strings.Replace(arg, path, ndjsonPath(path), 1))
				}
			}
		}
	}
	return nil
}

// targetStrings is the string or strings a parsed argument holds.
func targetStrings(t reflect.Value) []string {
	switch t.Kind() {
	case reflect.String:
		return []string{t.String()}
	case reflect.Slice:
		var out []string
		for i := range t.Len() {
			if s, ok := t.Index(i).Interface().(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// jqArgError is the error for one positional argument of verb, of the
// kind its name says, or nil when it is no jq path or filter.
func jqArgError(verb, kind, arg string) error {
	switch kind {
	case "path":
		if jqStyle(arg) {
			return jqPathError(arg, ndjsonPath(arg))
		}
	case "field":
		// PATH, or KEY=PATH (pick, csv, tsv), or PATH=VALUE (set): the
		// path is the part a jq path can begin.
		path := arg
		if k, p, ok := strings.Cut(arg, "="); ok && verb != "set" {
			path = p
			if jqStyle(path) {
				return jqPathError(path, k+"="+ndjsonPath(path))
			}
			return nil
		}
		if jqStyle(path) {
			return jqPathError(arg, ndjsonPath(arg))
		}
	case "predicate":
		if strings.HasPrefix(arg, "select(") {
			return cli.WithHint(cli.Usagef("%q is a jq filter; where takes tests of a path, not a filter", arg),
				"write the test alone, path without its dot: ndjson where 'type==run_done' 'usage.outputTokens>100'")
		}
		// The predicate's own parse reads past spaces around its path.
		neg, rest := "", strings.TrimLeft(arg, " \t")
		if strings.HasPrefix(rest, "!") {
			neg, rest = "!", strings.TrimLeft(rest[1:], " \t")
		}
		if jqStyle(rest) {
			// Only the path is rewritten, not the value after it.
			path := rest
			if i := strings.IndexAny(rest, "=!<>~"); i > 0 {
				path = rest[:i]
			}
			return jqPathError(arg, "'"+neg+ndjsonPath(path)+rest[len(path):]+"'")
		}
	}
	return nil
}

// jqPathError refuses arg, written as jq writes a path, suggesting want.
func jqPathError(arg, want string) error {
	if arg == "." {
		return cli.WithHint(cli.Usagef(`"." is jq's whole value; ndjson's paths name a value in a line, and have no leading dot`),
			"a whole line is printed as it is by ndjson fmt -c")
	}
	return cli.WithHint(cli.Usagef("%q is written as jq writes a path; ndjson's paths have no leading dot", arg),
		"write "+want+" (a key that begins with a dot is escaped: \\.env)")
}

// ndjsonPath is the ndjson path a jq path (or a predicate begun with one)
// means: its leading dot dropped, [N] and ["key"] made keys.
func ndjsonPath(jq string) string {
	re := regexp.MustCompile(jqIndex)
	p := re.ReplaceAllStringFunc(jq, func(m string) string {
		sm := re.FindStringSubmatch(m)
		if sm[1] != "" {
			return "." + sm[1]
		}
		if sm[3] != "" {
			return ".#" // every element, as gjson says it
		}
		return "." + strings.ReplaceAll(sm[2], ".", `\.`)
	})
	return strings.TrimPrefix(p, ".")
}
