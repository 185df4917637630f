// Package ndjsoncmd is ndjson's command line: the grammar of every verb,
// its flags and its usage errors, shared by the two binaries that run it.
// ndjson runs every verb and links no JSON Schema validator: it hands
// check --schema to ndjson-schema, which runs check alone, with the
// validator linked (lib/schema). What loads a schema is the binary's to
// give (LoadSchema), so this package links none of it.
package ndjsoncmd

import (
	"context"
	"time"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/linetime"
	"github.com/agentry/agentry/lib/ndjsontool"
	"github.com/agentry/agentry/lib/predicate"
	"github.com/alecthomas/kong"
)

// Name is ndjson's name, the one its errors and hints are said in.
const Name = "ndjson"

// LoadSchema gives check the schema of --schema FILE. Its error is
// reported as it is, so it is worded for the user (a usage error naming
// --schema).
type LoadSchema func(file string) (ndjsontool.Schema, error)

// App is ndjson's command line, every verb, with load serving check
// --schema.
func App(load LoadSchema) cli.App {
	app := cli.App{
		Name:        Name,
		Description: "Get, filter, build and check newline-delimited JSON, at the speed of the disk.",
		Grammar:     &grammar{},
		Options:     []kong.Option{kong.Bind(load)},
		Operands:    true,
	}
	app.ParseError = parseError(app)
	return app
}

// CheckApp is the command line of check alone, as the program name (its
// voice and its --version) with load serving --schema: ndjson-schema's.
func CheckApp(name string, load LoadSchema) cli.App {
	app := cli.App{
		Name:        name,
		Description: "Check newline-delimited JSON, each line against a JSON Schema too (ndjson check, with the validator linked).",
		Grammar:     &checkGrammar{},
		Options:     []kong.Option{kong.Bind(load)},
		Operands:    true,
	}
	app.ParseError = parseError(app)
	return app
}

// checkGrammar is CheckApp's: check, with the same flags as in ndjson's.
type checkGrammar struct {
	cli.Globals

	Check checkCmd `cmd:"" help:"Validate every line and report each problem with its line number."`
}

type grammar struct {
	cli.Globals

	Get   getCmd   `cmd:"" help:"Print the values at gjson PATHs of every line."`
	Pick  pickCmd  `cmd:"" help:"Build an object of the given fields from every line: PATH or KEY=PATH."`
	CSV   csvCmd   `cmd:"" name:"csv" help:"Print the given fields of every line as CSV, with a header row."`
	Uniq  uniqCmd  `cmd:"" help:"Print the first line for each distinct value at --by PATH."`
	Sort  sortCmd  `cmd:"" help:"Print the lines ordered by the values at -k PATHs: stable, missing last, larger than memory with --memory."`
	Stats statsCmd `cmd:"" help:"Count, sum, min, max and mean of the numbers at PATHs, per group of --by PATH."`
	TSV   tsvCmd   `cmd:"" name:"tsv" help:"Print the given fields of every line as TSV, with a header row."`
	Where whereCmd `cmd:"" help:"Pass through, unchanged, the lines that match every predicate."`
	Make  makeCmd  `cmd:"" help:"Build one JSON object from KEY=VALUE and KEY:=JSON arguments."`
	Check checkCmd `cmd:"" help:"Validate every line and report each problem with its line number."`
	Fmt   fmtCmd   `cmd:"" help:"Pretty-print (or compact) every line."`
	Count countCmd `cmd:"" help:"Count lines, or lines by the value at a PATH."`

	Schema schemaCmd `cmd:"" help:"A census of every path of every line: types and counts, missing, ranges, examples; or a JSON Schema of it."`
	Set    setCmd    `cmd:"" help:"Set PATH=STRING or PATH:=JSON in every line, the rest of it byte for byte."`
	Del    delCmd    `cmd:"" help:"Delete the value at each PATH from every line, the rest of it byte for byte."`
	Join   joinCmd   `cmd:"" help:"Join each line with FILE's lines of the same value at -k PATH, their members merged in."`
	Split  splitCmd  `cmd:"" help:"Write each line to DIR/VALUE.ndjson, VALUE being its value at -k PATH."`
}

// input holds the flags of every verb that reads a stream, and its files:
// the operands after "--" (see files.go).
type input struct {
	MaxLine cli.Size `help:"Skip lines longer than this (KiB, MiB, GiB suffixes)." default:"64MiB" placeholder:"SIZE"`
	Strict  bool     `help:"Exit 1 if any line was malformed or over the cap."`

	inputFiles
}

func (in *input) stream(env *cli.Env) (*ndjsontool.Stream, error) {
	if in.MaxLine < 1 || in.MaxLine > 1<<40 {
		return nil, cli.Usagef("--max-line must be between 1 byte and 1TiB")
	}
	st := &ndjsontool.Stream{In: env.Stdin, Out: env.Stdout, Voice: env.Voice(), MaxLine: int(in.MaxLine), Strict: in.Strict}
	in.open(st, env)
	return st, nil
}

type getCmd struct {
	input
	Raw         bool     `short:"r" help:"Print strings as their text, without quotes; several paths print tab-separated values."`
	Missing     *string  `help:"Print this for a missing path (default: null, or nothing with -r)." placeholder:"TEXT"`
	SkipMissing bool     `help:"Print nothing for a line that lacks any of the paths."`
	Paths       []string `arg:"" name:"path" help:"gjson paths, such as event.text or items.#.id."`
}

func (c *getCmd) Run(ctx context.Context, env *cli.Env) error {
	st, err := c.stream(env)
	if err != nil {
		return err
	}
	return worded("get", ndjsontool.Get(ctx, st, ndjsontool.GetOptions{Paths: c.Paths, Raw: c.Raw, Missing: c.Missing, SkipMissing: c.SkipMissing}))
}

type pickCmd struct {
	input
	Null   bool     `help:"Write null for a path a line lacks, instead of leaving the key out."`
	Fields []string `arg:"" name:"field" help:"PATH (named by its last key) or KEY=PATH, in the order wanted."`
}

func (c *pickCmd) Run(ctx context.Context, env *cli.Env) error {
	st, err := c.stream(env)
	if err != nil {
		return err
	}
	return worded("pick", ndjsontool.Pick(ctx, st, ndjsontool.PickOptions{Fields: c.Fields, Null: c.Null}))
}

type tableFlags struct {
	input
	NoHeader bool     `help:"Leave out the header row."`
	Fields   []string `arg:"" name:"field" help:"PATH (headed by its last key) or KEY=PATH, one column each."`
}

type csvCmd struct{ tableFlags }

func (c *csvCmd) Run(ctx context.Context, env *cli.Env) error {
	st, err := c.stream(env)
	if err != nil {
		return err
	}
	return worded("pick", ndjsontool.CSV(ctx, st, ndjsontool.TableOptions{Fields: c.Fields, NoHeader: c.NoHeader}))
}

type tsvCmd struct{ tableFlags }

func (c *tsvCmd) Run(ctx context.Context, env *cli.Env) error {
	st, err := c.stream(env)
	if err != nil {
		return err
	}
	return worded("pick", ndjsontool.TSV(ctx, st, ndjsontool.TableOptions{Fields: c.Fields, NoHeader: c.NoHeader}))
}

type sortCmd struct {
	input
	Key     []string `short:"k" required:"" sep:"none" help:"A path to order by; repeat for ties (most significant first)." placeholder:"PATH"`
	Reverse bool     `short:"r" help:"Largest first (a missing value still comes last)."`
	Memory  cli.Size `help:"Hold at most this much; past it, sorted runs go to temporary files (in $TMPDIR) that are merged, and removed however sort ends." default:"64MiB" placeholder:"SIZE"`
	Top     *int     `help:"Print only the first N lines of the order, kept in a heap." placeholder:"N"`
}

func (c *sortCmd) Run(ctx context.Context, env *cli.Env) error {
	st, err := c.stream(env)
	if err != nil {
		return err
	}
	if c.Memory < 1<<20 {
		return cli.Usagef("--memory must be at least 1MiB")
	}
	return worded("sort", ndjsontool.Sort(ctx, st, ndjsontool.SortOptions{Keys: c.Key, Reverse: c.Reverse, Memory: int64(c.Memory), Top: c.Top, TempDir: env.Getenv("TMPDIR")}))
}

type uniqCmd struct {
	input
	By string `required:"" help:"The gjson path whose value makes lines the same." placeholder:"PATH"`
}

func (c *uniqCmd) Run(ctx context.Context, env *cli.Env) error {
	st, err := c.stream(env)
	if err != nil {
		return err
	}
	return worded("uniq", ndjsontool.Uniq(ctx, st, c.By))
}

type statsCmd struct {
	input
	By        string   `help:"Group the lines by the value at this gjson path." placeholder:"PATH"`
	Quantiles bool     `help:"Add p50 and p95, within 1% of the value (bounded memory)."`
	JSON      bool     `name:"json" help:"One JSON object per group and path."`
	Paths     []string `arg:"" name:"path" help:"gjson paths of the numbers, such as usage.outputTokens."`
	Every     string   `help:"A row per bucket of this length of the line's --time, and group: 1h, 15m, 1d, 1w (days from midnight, weeks from Monday, in --tz)." placeholder:"DURATION"`
	timeFlags
}

func (c *statsCmd) Run(ctx context.Context, env *cli.Env) error {
	st, err := c.stream(env)
	if err != nil {
		return err
	}
	o := ndjsontool.StatsOptions{Fields: c.Paths, By: c.By, Quantiles: c.Quantiles, JSON: c.JSON}
	if o.Zone, err = c.window(st, time.Now()); err != nil {
		return err
	}
	if c.Every != "" {
		if o.Every, err = linetime.ParseDuration(c.Every); err != nil || o.Every < time.Second {
			return cli.Usagef("--every must be a duration of a second or more, such as 1h or 1d")
		}
		if c.Time == "" {
			return cli.Usagef("--every needs --time PATH, where each line's time is")
		}
		if day := 24 * time.Hour; o.Every%day != 0 && day%o.Every != 0 {
			env.Voice().Notef("--every %s does not divide a day: its buckets run on from 1970-01-01 in --tz, not from each midnight", c.Every)
		}
	}
	return worded("stats", ndjsontool.Stats(ctx, st, o))
}

type whereCmd struct {
	input
	Any   bool     `help:"Keep lines that match any predicate, not every one."`
	Exprs []string `arg:"" optional:"" name:"predicate" help:"PATH==VALUE, PATH!=VALUE, PATH<VALUE, PATH<=VALUE, PATH>VALUE, PATH>=VALUE, PATH~REGEX, PATH or !PATH."`
	timeFlags
}

func (c *whereCmd) Run(ctx context.Context, env *cli.Env) error {
	set, err := predicate.ParseSet(c.Exprs, c.Any)
	if err != nil {
		return cli.WithHint(cli.Usagef("%s", err), "see 'man ndjson' for the predicate syntax")
	}
	st, err := c.stream(env)
	if err != nil {
		return err
	}
	if _, err := c.window(st, time.Now()); err != nil {
		return err
	}
	if len(c.Exprs) == 0 && st.Time == nil {
		return cli.Usagef("where needs a predicate, or --time with --since or --until")
	}
	return worded("where", ndjsontool.Where(ctx, st, set))
}

type makeCmd struct {
	Fields []string `arg:"" optional:"" name:"field" help:"KEY=STRING or KEY:=JSON; dots in KEY nest objects, KEY[]= appends to an array."`
}

func (c *makeCmd) Run(env *cli.Env) error {
	return worded("make", ndjsontool.Make(env.Stdout, c.Fields))
}

type checkCmd struct {
	input
	Protocol string `help:"Classify each line against a protocol: agent-host." placeholder:"NAME" enum:",agent-host" default:""`
	Schema   string `help:"Check each line against the JSON Schema in FILE; a line that does not conform is a problem, with where and why." placeholder:"FILE" type:"path"`
	JSON     bool   `name:"json" help:"Print each problem, then the summary, as JSON lines on stdout."`
}

func (c *checkCmd) Run(ctx context.Context, env *cli.Env, load LoadSchema) error {
	o := ndjsontool.CheckOptions{Protocol: c.Protocol, JSON: c.JSON}
	if c.Schema != "" {
		// first: ndjson's load hands the whole run to ndjson-schema,
		// which opens the stream (and says a terminal is read) itself
		var err error
		if o.Schema, err = load(c.Schema); err != nil {
			return err
		}
	}
	st, err := c.stream(env)
	if err != nil {
		return err
	}
	return worded("check", ndjsontool.Check(ctx, st, o))
}

type fmtCmd struct {
	input
	Compact  bool   `short:"c" help:"Print each value on one line, without insignificant space."`
	Indent   int    `help:"Spaces per level of indentation." default:"2"`
	SortKeys bool   `help:"Sort object keys."`
	Color    string `help:"Colour output: auto (on a terminal, unless NO_COLOR is set), always or never." enum:"auto,always,never" default:"auto"`
}

func (c *fmtCmd) Run(ctx context.Context, env *cli.Env) error {
	if c.Indent < 0 || c.Indent > 16 {
		return cli.Usagef("--indent must be between 0 and 16")
	}
	st, err := c.stream(env)
	if err != nil {
		return err
	}
	return worded("fmt", ndjsontool.Fmt(ctx, st, ndjsontool.FmtOptions{
		// --indent 0 is compact, as in jq: no level to indent by.
		Compact: c.Compact || c.Indent == 0, Indent: c.Indent, SortKeys: c.SortKeys,
		Color: cli.UseColor(c.Color, env.Stdout, env.Getenv),
	}))
}

type countCmd struct {
	input
	JSON bool   `name:"json" help:"Print counts as JSON lines: {\"value\":…,\"count\":N}."`
	Path string `arg:"" optional:"" name:"path" help:"Count by the value at this gjson path."`
}

func (c *countCmd) Run(ctx context.Context, env *cli.Env) error {
	st, err := c.stream(env)
	if err != nil {
		return err
	}
	return worded("count", ndjsontool.Count(ctx, st, ndjsontool.CountOptions{Path: c.Path, JSON: c.JSON}))
}
