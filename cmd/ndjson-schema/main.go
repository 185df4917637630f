// Command ndjson-schema is ndjson's check with the JSON Schema validator
// linked: ndjson check --schema runs in it (ndjson execs it, named
// ndjson, and it then speaks as ndjson), and so does runagent --schema. It
// is a binary of its own because the validator compiles every draft's
// meta-schema at package init, which only this binary pays. See
// ndjson-schema(1).
package main

import (
	"os"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/ndjsoncmd"
	"github.com/agentry/agentry/lib/ndjsontool"
	"github.com/agentry/agentry/lib/schema"
)

func main() {
	name := "ndjson-schema"
	if len(os.Args) > 0 && os.Args[0] == ndjsoncmd.Name {
		name = ndjsoncmd.Name // run by ndjson for its check --schema
	}
	os.Exit(cli.Main(ndjsoncmd.CheckApp(name, load)))
}

// load compiles the schema file.
func load(file string) (ndjsontool.Schema, error) {
	s, err := schema.Load(file)
	if err != nil {
		return nil, cli.Usagef("--schema %v", err)
	}
	return s, nil
}
