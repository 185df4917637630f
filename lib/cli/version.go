package cli

import (
	"github.com/agentry/agentry/lib/version"
	"github.com/alecthomas/kong"
)

// Version is the suite's version (lib/version).
func Version() string { return version.String() }

type versionFlag bool

// BeforeReset prints "prog VERSION" and ends the program with status 0.
func (versionFlag) BeforeReset(app *kong.Kong) error {
	printVersion(app.Stdout, app.Model.Name)
	app.Exit(ExitOK)
	return nil
}
