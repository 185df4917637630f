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

// places is what tells a file among a verb's own arguments.
type places struct {
	// existing: a regular file of an argument's name makes it a file,
	// stdin bringing no lines (a terminal, /dev/null). Next to lines
	// piped or redirected in, such a name is a path more likely ("ndjson
	// get port < state.json" in a directory that has a file "port").
	existing bool
	// out is the file stdout writes to, never a file given: "ndjson get
	// port < s.json > port" has the shell make "port" first.
	out fs.FileInfo
}

func newPlaces(env *cli.Env) places {
	return places{existing: !givesLines(env.Stdin), out: statOf(env.Stdout)}
}

// givesLines says whether stdin brings lines: a pipe, a socket, a regular
// file; or a reader that is no file at all. A pipe whose writers are all
// gone with nothing left in it (true | ndjson get k data.txt) brings
// none.
func givesLines(r io.Reader) bool {
	if _, ok := r.(interface{ Stat() (fs.FileInfo, error) }); !ok {
		return true
	}
	fi := statOf(r)
	if p, ok := cli.LookPipe(r); ok && p.HungUp && !p.Readable {
		return false
	}
	return fi != nil && (fi.Mode().IsRegular() || fi.Mode()&(fs.ModeNamedPipe|fs.ModeSocket) != 0)
}

// statOf is what r or w is, when it is a file; nil otherwise.
func statOf(f any) fs.FileInfo {
	if f, ok := f.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := f.Stat(); err == nil {
			return fi
		}
	}
	return nil
}

// fileLike says whether arg, given where a path, a predicate or a field
// goes, is a file: its name ends as a file's does, or (see places) a
// regular file of that name exists. A predicate with an operator, a field
// KEY=PATH, a negated path and a path with a backslash (a.b\.json is the
// key "b.json", \type the key "type": the way to say a path that looks
// like a file) are never files.
func (pl places) fileLike(arg string) bool {
	if arg == "" || strings.ContainsAny(arg, "=<>~\\") || arg[0] == '!' || arg[0] == '-' {
		return false
	}
	for _, ext := range fileExts {
		if strings.HasSuffix(arg, ext) {
			return true
		}
	}
	if !pl.existing {
		return false
	}
	fi, err := os.Stat(arg)
	return err == nil && fi.Mode().IsRegular() && (pl.out == nil || !os.SameFile(fi, pl.out))
}

// misplaced is a file given before "--": the error names the first and
// gives the line that reads them all.
type misplaced struct {
	file string
	line []string // the command line that reads it, without the program's name
}

func (e *misplaced) Error() string {
	what := " is a file"
	if _, err := os.Stat(e.file); err != nil {
		what = " looks like a file's name (no such file is there)" // by its ending
	}
	return e.file + what + ": files go after --, as in: " + Name + " " + cmdline.ShellLine(e.line)
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
func checkPlaced(kctx *kong.Context, ops cli.Operands, env *cli.Env) error {
	node := kctx.Selected()
	if node == nil {
		return nil
	}
	var files []string
	pl := newPlaces(env)
	for _, p := range node.Positional {
		if p.Name == "file" || !p.Set {
			continue
		}
		for _, s := range targetStrings(p.Target) {
			files = pl.appendFileLike(files, s)
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

func (pl places) appendFileLike(files []string, arg string) []string {
	if pl.fileLike(arg) {
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
func parseError(app cli.App) func(env *cli.Env, args []string, err error) error {
	return func(env *cli.Env, args []string, err error) error {
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
		if jqStyle(verb) && strings.HasPrefix(msg, "unexpected argument "+verb) {
			return cli.WithHint(cli.Usagef("%q is a jq filter; ndjson's first word is a verb", verb),
				"print the value at a path with get: ndjson get "+ndjsonPath(verb))
		}
		if at := verbAt(app, own); at > 0 && strings.HasPrefix(msg, "unknown flag ") {
			moved := append(append([]string{own[at]}, own[:at]...), own[at+1:]...)
			// Said only when the verb takes the flags so moved: not for
			// a flag no verb has (--bogus get k).
			if quietParse(app, env, moved, ops) == nil {
				line := append([]string{Name}, moved...)
				if len(ops) > 0 {
					line = append(append(line, "--"), ops...)
				}
				flag, _, _ := strings.Cut(strings.TrimPrefix(msg, "unknown flag "), ", did you mean")
				return cli.WithHint(cli.Usagef("%s is given before the verb %s", flag, own[at]), "a verb's flags go after it: "+cmdline.ShellLine(line))
			}
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
		pl := newPlaces(env)
		first := slices.Index(own, arg)
		if next := slices.Index(own[first+1:], arg); first >= 0 && next >= 0 {
			// the same name twice: kong took the first (join's FILE, a
			// path) and not the second
			first += 1 + next
		}
		if first < 1 || !pl.fileLike(arg) {
			return nil
		}
		var at []int
		var rest []string
		for i, a := range own {
			if i >= first && pl.fileLike(a) {
				at = append(at, i)
			} else {
				rest = append(rest, a)
			}
		}
		moved := misplacedError(own, at, ops)
		var m *misplaced
		errors.As(moved, &m)
		// The line with these files after "--" may have more before it.
		if perr := quietParse(app, env, rest, m.line[len(rest)+1:]); perr != nil && errors.As(perr, &m) {
			return cli.Usagef("%w", m)
		}
		return moved
	}
}

// verbAt is the index in own of the first of app's verbs when a flag
// comes first (flags given before the verb, as jq takes them); -1
// otherwise.
func verbAt(app cli.App, own []string) int {
	t := reflect.TypeOf(app.Grammar)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if len(own) == 0 || !strings.HasPrefix(own[0], "-") {
		return -1
	}
	for i, a := range own {
		for k := range t.NumField() {
			f := t.Field(k)
			if _, ok := f.Tag.Lookup("cmd"); !ok {
				continue
			}
			name := f.Tag.Get("name")
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			if a == name {
				return i
			}
		}
	}
	return -1
}

// quietParse parses args, with ops the operands after "--", as app would,
// saying nothing: how a line ndjson suggests is checked first.
func quietParse(app cli.App, env *cli.Env, args, ops []string) error {
	again := app
	again.Options = append(slices.Clip(app.Options), kong.Bind(cli.Operands(ops)))
	quiet := &cli.Env{Stdin: env.Stdin, Stdout: env.Stdout, Stderr: io.Discard, Getenv: env.Getenv, Prog: Name}
	p, err := cli.NewParser(again, quiet)
	if err != nil {
		return err
	}
	_, err = p.Parse(args)
	return err
}
