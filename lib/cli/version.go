package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/alecthomas/kong"
)

// version is set at link time by the Makefile
// (-ldflags "-X github.com/agentry/agentry/lib/cli.version=v1.2.3").
// When empty, Version falls back to the build info.
var version string

// Version is the suite's version: the linked-in one, else the main module's
// version from the build info, else "devel" with the VCS revision if known.
func Version() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	v := "devel"
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
	}
	return v
}

type versionFlag bool

// BeforeReset prints "prog VERSION" and ends the program with status 0.
func (versionFlag) BeforeReset(app *kong.Kong) error {
	fmt.Fprintf(app.Stdout, "%s %s\n", app.Model.Name, Version())
	app.Exit(ExitOK)
	return nil
}
