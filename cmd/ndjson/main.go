// Command ndjson reads, filters, builds and checks newline-delimited JSON.
// See ndjson(1). Its command line is lib/ndjsoncmd; check --schema runs in
// ndjson-schema (schema.go).
package main

import (
	"os"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/ndjsoncmd"
)

func main() {
	code := cli.Main(ndjsoncmd.App(execSchema))
	stopProfile()
	os.Exit(code)
}
