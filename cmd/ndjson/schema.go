package main

import (
	"os"
	"syscall"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/ndjsoncmd"
	"github.com/agentry/agentry/lib/ndjsontool"
	"github.com/agentry/agentry/lib/proc"
)

// schemaHelper runs check --schema: the JSON Schema validator compiles
// every draft's meta-schema at package init, which every process that
// links it pays at start (DESIGN.md, "Heavy dependencies", has the
// figures), so ndjson links none of it and hands check --schema,
// arguments and all, to this binary.
const schemaHelper = "ndjson-schema"

// execSchema replaces this process with ndjson-schema, run with the same
// arguments, standard streams and environment, and named ndjson, so it
// speaks as ndjson; it returns only when that cannot be done.
func execSchema(string) (ndjsontool.Schema, error) {
	helper, err := proc.Sibling(schemaHelper)
	if err != nil {
		return nil, cli.WithHint(cli.Usagef("--schema needs %s, which is neither beside this ndjson nor on PATH", schemaHelper),
			"go install github.com/agentry/agentry/cmd/"+schemaHelper+"@latest (make install puts it beside ndjson)")
	}
	err = syscall.Exec(helper, append([]string{ndjsoncmd.Name}, os.Args[1:]...), os.Environ())
	return nil, cli.Usagef("--schema: could not run %s: %v", helper, err)
}
