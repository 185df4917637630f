package ndjsoncmd

import (
	"context"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/ndjsontool"
)

type setCmd struct {
	input
	Fields []string `arg:"" name:"field" help:"PATH=STRING or PATH:=JSON; dots in PATH nest objects, a key of digits indexes an array."`
}

func (c *setCmd) Run(ctx context.Context, env *cli.Env) error {
	st, err := c.stream(env)
	if err != nil {
		return err
	}
	return worded("set", ndjsontool.Set(ctx, st, c.Fields))
}

type delCmd struct {
	input
	Paths []string `arg:"" name:"path" help:"Keys separated by dots; a key of digits indexes an array."`
}

func (c *delCmd) Run(ctx context.Context, env *cli.Env) error {
	st, err := c.stream(env)
	if err != nil {
		return err
	}
	return worded("del", ndjsontool.Del(ctx, st, c.Paths))
}
