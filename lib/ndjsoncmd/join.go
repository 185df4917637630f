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
	Memory cli.Size `help:"Hold at most this much of FILE in memory; past it, both sides are sorted on disk (in $TMPDIR) and merged." default:"256MiB" placeholder:"SIZE"`
	File   string   `arg:"" name:"file" help:"The other side: NDJSON, gzip or zstd, hashed by the key (put the smaller side here)."`
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
	if c.File == operands.Stdin && st.In == env.Stdin {
		return cli.Usagef("join cannot read stdin on both sides: name the stream's files after --")
	}
	r := operands.New([]string{c.File}, env.Stdin, func(name string) (io.ReadCloser, error) { return os.Open(name) })
	o := ndjsontool.JoinOptions{Left: left, Right: right, File: r, FileName: c.File, KeepLeft: c.Left, As: c.As,
		Memory: int64(c.Memory), TempDir: env.Getenv("TMPDIR")}
	err = ndjsontool.Join(ctx, st, o)
	if errs := r.Errors(); len(errs) > 0 && err == nil {
		return cli.Usagef("%s", fileError(errs[0]))
	}
	return err
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
