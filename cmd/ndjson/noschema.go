//go:build !ndjson_schema

package main

import (
	"os"
	"syscall"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/ndjsontool"
	"github.com/agentry/agentry/lib/proc"
)

// schemaHelper is ndjson built with the JSON Schema validator (make builds
// it beside ndjson). The validator's start-up costs every process that
// links it about 10 ms, so this ndjson links none of it and hands check
// --schema, arguments and all, to that one.
const schemaHelper = "ndjson-schema"

// loadSchema replaces this process with ndjson-schema, run with the same
// arguments, standard streams and environment; it returns only when that
// cannot be done.
func loadSchema(string) (ndjsontool.Schema, error) {
	helper, err := proc.Sibling(schemaHelper)
	if err != nil {
		return nil, cli.WithHint(cli.Usagef("--schema needs %s, which is neither beside this ndjson nor on PATH", schemaHelper),
			"make install puts it beside ndjson")
	}
	err = syscall.Exec(helper, append([]string{helper}, os.Args[1:]...), os.Environ())
	return nil, cli.Usagef("--schema: could not run %s: %v", helper, err)
}
