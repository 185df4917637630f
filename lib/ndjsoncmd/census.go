package ndjsoncmd

import (
	"context"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/ndjsontool"
)

type schemaCmd struct {
	input
	JSON       bool `name:"json" help:"Print the census as JSON lines, one object per path."`
	JSONSchema bool `name:"json-schema" help:"Print a draft 2020-12 JSON Schema that every line read conforms to (for check --schema)."`
}

func (c *schemaCmd) Run(ctx context.Context, env *cli.Env) error {
	if c.JSON && c.JSONSchema {
		return cli.Usagef("--json and --json-schema cannot be given together")
	}
	st, err := c.stream(env)
	if err != nil {
		return err
	}
	return worded("schema", ndjsontool.Census(ctx, st, ndjsontool.CensusOptions{JSON: c.JSON, JSONSchema: c.JSONSchema}))
}
