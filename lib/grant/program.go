package grant

import (
	"os/exec"
	"path/filepath"
)

// npmPackage is the npm package harness's CLI comes in.
func npmPackage(harness string) string {
	if harness == Codex {
		return "@openai/codex"
	}
	return "@anthropic-ai/claude-code"
}

// Pinned is the version of harness's CLI the suite is tested against:
// the one tests/peers/install.sh installs for make test-peers (a test
// keeps the two the same).
func Pinned(harness string) string {
	if harness == Codex {
		return "0.171.0"
	}
	return "2.1.332"
}

// InstallCommand is the command that installs harness's CLI, pinned.
func InstallCommand(harness string) string {
	return "npm install -g " + npmPackage(harness) + "@" + Pinned(harness)
}

// NotInstalledError is a harness whose CLI is not on this machine:
// Program (the configured program, else the harness's own name) is
// neither on PATH nor a path to an executable.
type NotInstalledError struct {
	Harness string
	Program string
}

func (e *NotInstalledError) Error() string {
	if e.Program == "" || e.Program == e.Harness {
		return e.Harness + " is not installed on this machine (not on PATH)"
	}
	// The base name: a reason never holds an absolute path.
	return e.Harness + " is not installed on this machine (no program " + filepath.Base(e.Program) + ")"
}

// Installed returns a *NotInstalledError when program, which runs
// harness, is not found on PATH or as a path.
func Installed(harness, program string) error {
	if _, err := exec.LookPath(program); err != nil {
		return &NotInstalledError{Harness: harness, Program: program}
	}
	return nil
}

// Program picks the CLI that runs harness: the configured program, else
// override (an environment variable's value), else the harness's own name.
// It must be found, on PATH or as a path; else a *NotInstalledError.
func Program(harness, configured, override string) (string, error) {
	p := configured
	if p == "" {
		p = override
	}
	if p == "" {
		p = harness
	}
	if err := Installed(harness, p); err != nil {
		return "", err
	}
	return p, nil
}

// InstallAdvice says how to give a face the CLI of harness: install it,
// or point variable (the face's environment variable for the program)
// at it.
func InstallAdvice(harness, variable string) string {
	return InstallCommand(harness) + ", or set " + variable + " to the " + harness + " to run"
}
