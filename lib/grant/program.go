package grant

import (
	"fmt"
	"os/exec"
)

// npmPackage is the npm package harness's CLI comes in.
func npmPackage(harness string) string {
	if harness == Codex {
		return "@openai/codex"
	}
	return "@anthropic-ai/claude-code"
}

// Program picks the CLI that runs harness: the configured program, else
// override (an environment variable's value), else the harness's own name.
// It must be found, on PATH or as a path; the error says how to install it.
func Program(harness, configured, override string) (string, error) {
	p := configured
	if p == "" {
		p = override
	}
	if p == "" {
		p = harness
	}
	if _, err := exec.LookPath(p); err != nil {
		return "", fmt.Errorf("%s is not installed on this machine (npm install -g %s)", harness, npmPackage(harness))
	}
	return p, nil
}
