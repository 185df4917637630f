// Package version is the suite's version, for every program: the one
// linked in by the Makefile, else the build info's.
package version

import "runtime/debug"

// version is set at link time by the Makefile
// (-ldflags "-X github.com/agentry/agentry/lib/version.version=v1.2.3").
var version string

// String is the suite's version: the linked-in one, else the main module's
// version from the build info, else "devel" with the VCS revision if known.
func String() string {
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
