package cli

import (
	"fmt"

	"github.com/agentry/agentry/lib/version"
	"github.com/alecthomas/kong"
)

// Version is the suite's version (lib/version).
func Version() string { return version.String() }

type versionFlag bool

// BeforeReset prints "prog VERSION" and ends the program with status 0.
func (versionFlag) BeforeReset(app *kong.Kong) error {
	fmt.Fprintf(app.Stdout, "%s %s\n", app.Model.Name, Version())
	app.Exit(ExitOK)
	return nil
}
