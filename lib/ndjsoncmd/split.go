package ndjsoncmd

import (
	"context"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/ndjsontool"
)

type splitCmd struct {
	input
	Key  string `short:"k" required:"" help:"The path whose value names each line's file." placeholder:"PATH"`
	Dir  string `required:"" help:"Write DIR/VALUE.ndjson (made if need be); see the man page for how a value is named." placeholder:"DIR" type:"path"`
	Open int    `help:"Keep at most N files open at once, the least recently written closed first." default:"128" placeholder:"N"`
	Gzip bool   `help:"Write VALUE.ndjson.gz, gzip-compressed."`
}

func (c *splitCmd) Run(ctx context.Context, env *cli.Env) error {
	if c.Open < 1 || c.Open > 1<<16 {
		return cli.Usagef("--open must be between 1 and 65536")
	}
	st, err := c.stream(env)
	if err != nil {
		return err
	}
	return worded("split", ndjsontool.Split(ctx, st, ndjsontool.SplitOptions{Key: c.Key, Dir: c.Dir, Open: c.Open, Gzip: c.Gzip}))
}
