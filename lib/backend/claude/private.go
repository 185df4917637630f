package claude

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentry/agentry/lib/agenthome"
)

// Every local user can read a process's argv (/proc/PID/cmdline), so what
// may hold a secret goes to claude in a file of its own instead: the MCP
// configuration (a server's headers can carry a token) and a one-shot's
// system prompt. The files are 0600 in a private (0700) directory of the
// chat or the run, removed when it ends; one whose agent-host was killed
// outright is swept by the next that makes one.

// privatePrefix names those directories in the temporary directory.
const privatePrefix = "agent-host-claude"

// privateDir makes a private directory, sweeping first those whose
// agent-host is gone.
func privateDir() (string, error) {
	agenthome.Sweep(privatePrefix)
	return agenthome.RunDir(privatePrefix)
}

// writePrivate writes data to name in dir, readable by its owner only,
// and returns its path.
func writePrivate(dir, name, data string) (string, error) {
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return path, err
}

// mcpConfigFile moves the grant's --mcp-config JSON into mcp.json of the
// chat's private directory (made the first time), and returns argv with
// the file's path in its place. An argv with no server in it, or whose
// configuration is a path already, is returned as it is.
func (c *chat) mcpConfigFile(argv []string) ([]string, error) {
	i := slices.Index(argv, "--mcp-config")
	if len(c.servers) == 0 || i < 0 || i+1 >= len(argv) || !strings.HasPrefix(argv[i+1], "{") {
		return argv, nil
	}
	if c.private == "" {
		dir, err := privateDir()
		if err != nil {
			return nil, err
		}
		c.private = dir
	}
	path, err := writePrivate(c.private, "mcp.json", argv[i+1])
	if err != nil {
		return nil, err
	}
	argv = slices.Clone(argv)
	argv[i+1] = path
	return argv, nil
}

// removePrivate removes the chat's private directory, if it has one.
func (c *chat) removePrivate() {
	if c.private != "" {
		os.RemoveAll(c.private)
		c.private = ""
	}
}
