package claude

import (
	"os"
	"path/filepath"

	"github.com/agentry/agentry/lib/agenthome"
	"github.com/agentry/agentry/lib/grant"
)

// Every local user can read a process's argv (/proc/PID/cmdline), so what
// may hold a secret goes to claude in a file of its own instead: the MCP
// configuration (a server's headers can carry a token; lib/grant puts it
// in Options.FilesDir, and the backend writes it) and a one-shot's system
// prompt. The files are 0600 in a private (0700) directory of the chat or
// the run, removed when it ends; one whose agent-host was killed outright
// is swept by the next that makes one.

// privatePrefix names those directories among the user's run directories
// (agenthome.Runs).
const privatePrefix = agenthome.HostClaudeFiles

// privateDir makes a private directory, sweeping first those whose
// agent-host is gone.
func privateDir() (string, error) {
	runs := agenthome.NewRuns()
	runs.Sweep(privatePrefix)
	return runs.Dir(privatePrefix)
}

// writePrivate writes data to path, readable by its owner only.
func writePrivate(path, data string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// filesDir is where the chat's grant puts its files (grant.Options.FilesDir):
// the chat's private directory, made the first time its CLI starts with
// MCP servers; "" while it has none (its argv then holds only an empty
// configuration, and the servers it had are removed).
func (c *chat) filesDir() (string, error) {
	if len(c.servers) == 0 {
		c.removePrivate()
		return "", nil
	}
	if c.private == "" {
		dir, err := privateDir()
		if err != nil {
			return "", err
		}
		c.private = dir
	}
	return c.private, nil
}

// writeSystemPrompt writes a one-shot's system prompt into the chat's
// private directory, made for it if need be, and returns its path.
func (c *chat) writeSystemPrompt(text string) (string, error) {
	if c.private == "" {
		dir, err := privateDir()
		if err != nil {
			return "", err
		}
		c.private = dir
	}
	path := filepath.Join(c.private, "system-prompt.md")
	return path, writePrivate(path, text)
}

// writeFiles writes the files the grant's argv names.
func writeFiles(g *grant.Grant) error {
	for _, f := range g.Files {
		if err := writePrivate(f.Path, f.Content); err != nil {
			return err
		}
	}
	return nil
}

// removePrivate removes the chat's private directory, if it has one.
func (c *chat) removePrivate() {
	if c.private != "" {
		os.RemoveAll(c.private)
		c.private = ""
	}
}
