package ndjsoncmd

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/cmdline"
	"github.com/alecthomas/kong"
)

// Files go after "--" (files.go): a verb's own arguments cannot be told
// from file names by their place. But a file given where jq takes one,
// after the verb's paths, would be read as a path or a predicate (a count
// by a path no line has, read from a stdin that may be the terminal), or
// refused as an argument too many. So an argument in a path or predicate
// place that looks like a file is refused, with the line that reads it.
// It costs a stat of each such argument, once per run.

// fileExts are the names' ends that say "a file" wherever they are.
var fileExts = []string{".json", ".jsonl", ".ndjson", ".gz", ".zst"}

// fileLike says whether arg, given where a path, a predicate or a field
// goes, is a file: a regular file of that name exists, or the name ends
// as a file's does. A predicate with an operator, a field KEY=PATH, a
// negated path and a path with a backslash (a.b\.json is the key
// "b.json": the way to say a path that looks like a file) are never files.
func fileLike(arg string, stat func(string) (fs.FileInfo, error)) bool {
	if arg == "" || strings.ContainsAny(arg, "=<>~\\") || arg[0] == '!' || arg[0] == '-' {
		return false
	}
	for _, ext := range fileExts {
		if strings.HasSuffix(arg, ext) {
			return true
		}
	}
	fi, err := stat(arg)
	return err == nil && fi.Mode().IsRegular()
}

// misplaced is a file given before "--": the error names the first and
// gives the line that reads them all.
type misplaced struct {
	file string
	line []string // the command line that reads it, without the program's name
}

func (e *misplaced) Error() string {
	return e.file + " is a file: files go after --, as in: " + Name + " " + cmdline.ShellLine(e.line)
}

// misplacedError is files, at those indexes of own (the command line
// before "--"), moved to the front of ops, as a usage error.
func misplacedError(own []string, at []int, ops []string) error {
	var keep, files []string
	for i, a := range own {
		if slices.Contains(at, i) {
			files = append(files, a)
		} else {
			keep = append(keep, a)
		}
	}
	line := append(append(append(keep, "--"), files...), ops...)
	return cli.Usagef("%w", &misplaced{file: files[0], line: line})
}

// checkPlaced refuses the files among the selected command's own
// positional arguments (paths, predicates, fields; not join's FILE).
func checkPlaced(kctx *kong.Context, ops cli.Operands) error {
	node := kctx.Selected()
	if node == nil {
		return nil
	}
	var files []string
	for _, p := range node.Positional {
		if p.Name == "file" || !p.Set {
			continue
		}
		switch t := p.Target; t.Kind() {
		case reflect.String:
			files = appendFileLike(files, t.String())
		case reflect.Slice:
			for i := range t.Len() {
				if s, ok := t.Index(i).Interface().(string); ok {
					files = appendFileLike(files, s)
				}
			}
		}
	}
	if len(files) == 0 {
		return nil
	}
	var at []int
	for _, f := range files {
		// the last of the line that says it: a flag's value comes before
		// the positional arguments it could equal
		for i := len(kctx.Args) - 1; i > 0; i-- {
			if kctx.Args[i] == f && !slices.Contains(at, i) {
				at = append(at, i)
				break
			}
		}
	}
	if len(at) == 0 {
		return nil
	}
	slices.Sort(at)
	return misplacedError(kctx.Args, at, ops)
}

func appendFileLike(files []string, arg string) []string {
	if fileLike(arg, os.Stat) {
		return append(files, arg)
	}
	return files
}

// habits are verbs of other tools (jq, mostly) and ndjson's for them.
var habits = map[string]string{
	"filter":   "where",
	"select":   "where",
	"grep":     "where",
	"pretty":   "fmt",
	"format":   "fmt",
	"validate": "check",
	"lint":     "check",
	"keys":     "schema",
}

// parseError words what kong could not parse in ndjson's terms: a verb of
// another tool, count --by, or a file given before "--" (which, once
// moved after it, is parsed again, for the files before it too).
func parseError(app cli.App) func(args []string, err error) error {
	return func(args []string, err error) error {
		own, ops := args, []string{}
		if i := slices.Index(args, "--"); i >= 0 {
			own, ops = args[:i], args[i+1:]
		}
		msg := err.Error()
		verb := ""
		if len(own) > 0 {
			verb = own[0]
		}
		if want, ok := habits[verb]; ok && strings.HasPrefix(msg, "unexpected argument "+verb) {
			return cli.WithHint(cli.Usagef("ndjson has no verb %s: did you mean %s?", verb, want),
				"run 'ndjson "+want+" --help' for its usage")
		}
		if verb == "count" && strings.HasPrefix(msg, "unknown flag --by") {
			return cli.WithHint(cli.Usagef("count has no --by: did you mean count PATH?"),
				"count by a path names it: ndjson count type")
		}
		arg, ok := strings.CutPrefix(msg, "unexpected argument ")
		if !ok {
			return nil
		}
		arg, _, _ = strings.Cut(arg, ", did you mean")
		first := slices.Index(own, arg)
		if next := slices.Index(own[first+1:], arg); first >= 0 && next >= 0 {
			// the same name twice: kong took the first (join's FILE, a
			// path) and not the second
			first += 1 + next
		}
		if first < 1 || !fileLike(arg, os.Stat) {
			return nil
		}
		var at []int
		var rest []string
		for i, a := range own {
			if i >= first && fileLike(a, os.Stat) {
				at = append(at, i)
			} else {
				rest = append(rest, a)
			}
		}
		moved := misplacedError(own, at, ops)
		var m *misplaced
		errors.As(moved, &m)
		// The line with these files after "--" may have more before it.
		again := app
		again.Options = append(slices.Clip(app.Options), kong.Bind(cli.Operands(m.line[len(rest)+1:])))
		env := &cli.Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: os.Getenv, Prog: Name}
		if p, perr := cli.NewParser(again, env); perr == nil {
			if _, perr := p.Parse(rest); perr != nil && errors.As(perr, &m) {
				return cli.Usagef("%w", m)
			}
		}
		return moved
	}
}
