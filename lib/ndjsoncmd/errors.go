package ndjsoncmd

import (
	"errors"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/ndjsontool"
)

// worded is a verb's error as ndjson's command line says it: the typed
// errors of lib/ndjsontool worded with ndjson's flags, and given their
// exit codes (2 for what the command line asked wrongly, 1 for a check or
// a strict stream that failed). verb is the command's name as the error
// says it (csv and tsv read their fields as pick does, and say "pick").
func worded(verb string, err error) error {
	var (
		skipped *ndjsontool.SkippedError
		failed  *ndjsontool.CheckError
		opt     *ndjsontool.OptionError
		arg     *ndjsontool.ArgError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &skipped):
		return cli.WithHint(cli.Failf("%s", skipped), "run 'ndjson check' to list every bad line")
	case errors.As(err, &failed):
		return cli.Failf("%s", failed)
	case errors.As(err, &opt):
		return optionError(verb, opt)
	case errors.As(err, &arg):
		return cli.WithHint(cli.Usagef("%s", arg), argHint(verb, arg))
	}
	return err
}

// optionError words an option a verb could not run with by the flag or
// the argument that gave it.
func optionError(verb string, e *ndjsontool.OptionError) error {
	switch e.Option {
	case "Paths", "Fields":
		return cli.Usagef("%s needs at least one path", verb)
	case "Missing":
		return cli.WithHint(cli.Usagef("--missing %q is not JSON, and output without -r is JSON", e.Value),
			`quote a string as JSON: --missing '"none"', or use -r`)
	case "Keys":
		return cli.Usagef("sort needs at least one -k PATH")
	case "Top":
		return cli.Usagef("--top cannot be negative")
	case "Every":
		return cli.Usagef("stats --every needs --time PATH")
	case "By":
		return cli.Usagef("uniq needs --by PATH")
	case "Protocol":
		return cli.Usagef("unknown protocol %q (the one known is agent-host)", e.Value)
	}
	return cli.Usagef("%s", e)
}

// argHint is what to write instead of an argument verb could not read:
// "" for none.
func argHint(verb string, e *ndjsontool.ArgError) string {
	switch {
	case verb == "set":
		return "write PATH=STRING or PATH:=JSON; dots nest: a.b=c"
	case verb == "make":
		return "write KEY=STRING or KEY:=JSON; dots nest: a.b=c"
	case errors.Is(e, ndjsontool.ErrNeedsName):
		return "write NAME=" + e.Arg
	case errors.Is(e, ndjsontool.ErrSameName):
		return "name one of them: NAME=PATH"
	}
	return ""
}
