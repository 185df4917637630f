package ndjsoncmd

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/ndjsontool"
)

// TestWording: what lib/ndjsontool's typed errors become on the command
// line, word for word and exit code for exit code, as ndjson said them
// when the library worded them itself.
func TestWording(t *testing.T) {
	for _, c := range []struct {
		in   string
		args []string
		code int
		want string
	}{
		{`{"a":1}`, []string{"set", "a"}, 2, `ndjson: error: argument "a" has no '=' or ':='
ndjson: hint: write PATH=STRING or PATH:=JSON; dots nest: a.b=c`},
		{`{"a":1}`, []string{"set", "a..b=1"}, 2, `ndjson: error: argument "a..b=1": the path must be keys separated by dots
ndjson: hint: write PATH=STRING or PATH:=JSON; dots nest: a.b=c`},
		{`{"a":1}`, []string{"set", "a:=nope"}, 2, `ndjson: error: argument "a:=nope": the value after := is not JSON (malformed_json)
ndjson: hint: write PATH=STRING or PATH:=JSON; dots nest: a.b=c`},
		{`{"a":1}`, []string{"del", "a..b"}, 2, `ndjson: error: path "a..b": keys separated by dots`},
		{``, []string{"make", "x"}, 2, `ndjson: error: argument "x" has no '=' or ':='
ndjson: hint: write KEY=STRING or KEY:=JSON; dots nest: a.b=c`},
		{``, []string{"make", "a=1", "a=2"}, 2, `ndjson: error: argument "a=2": "a" is given twice
ndjson: hint: write KEY=STRING or KEY:=JSON; dots nest: a.b=c`},
		{`{"a":1}`, []string{"pick", "a.#"}, 2, `ndjson: error: pick "a.#": a path with gjson syntax needs a name
ndjson: hint: write NAME=a.#`},
		{`{"a":1}`, []string{"pick", "a.b", "c.b"}, 2, `ndjson: error: pick: two fields named "b"
ndjson: hint: name one of them: NAME=PATH`},
		{`{"a":1}`, []string{"pick", "x="}, 2, `ndjson: error: pick "x=": the path is empty`},
		{`{"a":1}`, []string{"csv", "a.#"}, 2, `ndjson: error: csv "a.#": a path with gjson syntax needs a name
ndjson: hint: write NAME=a.#`},
		{`{"a":1}`, []string{"tsv", "a", "a"}, 2, `ndjson: error: tsv: two fields named "a"
ndjson: hint: name one of them: NAME=PATH`},
		{`{"a":1}`, []string{"get", "--missing", "x", "p"}, 2, `ndjson: error: --missing "x" is not JSON, and output without -r is JSON
ndjson: hint: quote a string as JSON: --missing '"none"', or use -r`},
		{"{\"a\":1}\nbad\n", []string{"count", "--strict"}, 1, `ndjson: error: skipped 1 malformed line (first at line 2)
ndjson: hint: run 'ndjson check' to list every bad line`},
		{"{\"t\":\"soon\"}\nbad\n", []string{"where", "--strict", "--time", "t", "--since", "1h"}, 1, `ndjson: error: skipped 1 malformed line (first at line 2)
ndjson: error: skipped 1 line whose time at t could not be read (first at line 1)
ndjson: hint: run 'ndjson check' to list every bad line`},
		{"{\"a\":1}\nbad\n", []string{"check"}, 1, `ndjson: line 2: not valid JSON: "bad"
ndjson: error: 1 of 2 lines failed the check`},
	} {
		var out, errb bytes.Buffer
		env := &cli.Env{Stdin: strings.NewReader(c.in), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
		code := cli.Run(context.Background(), App(nil), env, c.args)
		if got := strings.TrimSuffix(errb.String(), "\n"); code != c.code || got != c.want {
			t.Errorf("ndjson %q: exit %d, said\n%s\nwant exit %d,\n%s", c.args, code, got, c.code, c.want)
		}
	}
}

// TestOptionWording: the options the command line's own checks (kong's
// required flags and enums, Run's) keep from a verb are worded as ndjson
// said them, should one get through.
func TestOptionWording(t *testing.T) {
	for _, c := range []struct {
		verb string
		err  error
		want string
	}{
		{"get", &ndjsontool.OptionError{Option: "Paths"}, "get needs at least one path"},
		{"pick", &ndjsontool.OptionError{Option: "Fields"}, "pick needs at least one path"},
		{"stats", &ndjsontool.OptionError{Option: "Fields"}, "stats needs at least one path"},
		{"sort", &ndjsontool.OptionError{Option: "Keys"}, "sort needs at least one -k PATH"},
		{"sort", &ndjsontool.OptionError{Option: "Top"}, "--top cannot be negative"},
		{"stats", &ndjsontool.OptionError{Option: "Every"}, "stats --every needs --time PATH"},
		{"uniq", &ndjsontool.OptionError{Option: "By"}, "uniq needs --by PATH"},
		{"check", &ndjsontool.OptionError{Option: "Protocol", Value: "x"}, `unknown protocol "x" (the one known is agent-host)`},
	} {
		err := worded(c.verb, c.err)
		if err.Error() != c.want || cli.ExitCode(err) != cli.ExitUsage {
			t.Errorf("%s %v: %q, exit %d; want %q, exit 2", c.verb, c.err, err, cli.ExitCode(err), c.want)
		}
	}
	if err := worded("count", errors.New("x")); cli.ExitCode(err) != cli.ExitFailure || err.Error() != "x" {
		t.Errorf("an error of no type of the verbs': %v", err)
	}
}
