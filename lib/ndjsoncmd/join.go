package ndjsoncmd

import (
	"context"
	"io"
	"os"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/ndjsontool"
	"github.com/agentry/agentry/lib/operands"
)

type joinCmd struct {
	input
	Key    string   `short:"k" required:"" help:"The path of the key, the same in both; LEFT=RIGHT when they differ (LEFT in the stream's lines, RIGHT in FILE's)." placeholder:"PATH"`
	Left   bool     `help:"Keep, as they are, the stream's lines that match no line of FILE."`
	As     string   `help:"Set FILE's matching line at this key, instead of merging its members." placeholder:"KEY"`
	Memory cli.Size `help:"Hold at most this much in memory (the side hashed, and the output held to be put in the stream's order); past it, both sides are sorted on disk (in $TMPDIR) and merged." default:"256MiB" placeholder:"SIZE"`
	File   string   `arg:"" name:"file" help:"The other side: NDJSON, gzip or zstd; the smaller of the two is hashed by the key when both are files, FILE when the stream is a pipe."`
}

func (c *joinCmd) Run(ctx context.Context, env *cli.Env) error {
	if c.Memory < 1<<20 {
		return cli.Usagef("--memory must be at least 1MiB")
	}
	left, right := splitJoinKey(c.Key)
	if left == "" || right == "" {
		return cli.Usagef("-k needs a PATH, or LEFT=RIGHT")
	}
	st, err := c.stream(env)
	if err != nil {
		return err
	}
	if c.File == operands.Stdin && len(c.files) == 0 {
		return cli.Usagef("join cannot read stdin on both sides: name the stream's files after --")
	}
	r := operands.New([]string{c.File}, env.Stdin, func(name string) (io.ReadCloser, error) { return os.Open(name) })
	o := ndjsontool.JoinOptions{Left: left, Right: right, File: r, FileName: c.File, KeepLeft: c.Left, As: c.As,
		Memory: int64(c.Memory), TempDir: env.Getenv("TMPDIR")}
	o.StreamSize, o.FileSize = c.sizes(env)
	err = worded("join", ndjsontool.Join(ctx, st, o))
	if errs := r.Errors(); len(errs) > 0 && err == nil {
		return cli.Failf("%s", fileError(errs[0])) // exit 1, as for any file that cannot be read
	}
	return err
}

// sizes are the stream's and FILE's sizes on disk, -1 when one is not
// known before it is read (a pipe): join hashes the stream instead of
// FILE when both are known and the stream's is the smaller.
func (c *joinCmd) sizes(env *cli.Env) (stream, file int64) {
	size := func(names []string) int64 {
		if n, ok := operands.Size(names, env.Stdin, os.Stat); ok {
			return n
		}
		return -1
	}
	names := []string(c.files)
	if len(names) == 0 {
		names = []string{operands.Stdin}
	}
	return size(names), size([]string{c.File})
}

// splitJoinKey splits -k at its first unescaped '='.
func splitJoinKey(k string) (string, string) {
	for i := 0; i < len(k); i++ {
		switch k[i] {
		case '\\':
			i++
		case '=':
			return k[:i], k[i+1:]
		}
	}
	return k, k
}
