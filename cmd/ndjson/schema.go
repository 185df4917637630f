//go:build ndjson_schema

package main

import (
	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/ndjsontool"
	"github.com/agentry/agentry/lib/schema"
)

// This is ndjson-schema: ndjson built with the JSON Schema validator, which
// check --schema runs in. The validator compiles its meta-schemas when a
// process starts (about 10 ms and 1.7 MB on a slow machine), so the ndjson
// every other verb runs in does without it.

// loadSchema compiles the schema file.
func loadSchema(path string) (ndjsontool.Schema, error) {
	s, err := schema.Load(path)
	if err != nil {
		return nil, cli.Usagef("--schema %v", err)
	}
	return s, nil
}
