package acp

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/agentry/agentry/lib/policy"
)

// callOf is an ACP tool call in a policy's terms, from all the agent says
// of it: rawInput's command (a shell line, or an argv as codex-acp sends
// it), cmd, argv and cwd; the paths of its locations, its diffs and
// rawInput (read by a read or search, written by an edit, delete or move,
// both by a call of another kind); rawInput's url. Relative paths are
// taken from the call's cwd, else the working copy.
func callOf(tc toolCall) policy.Call {
	c := policy.Call{Tool: tc.name()}
	var in map[string]json.RawMessage
	_ = json.Unmarshal(tc.RawInput, &in)
	for _, key := range []string{"command", "cmd", "argv"} {
		line, argv := commandOf(in[key])
		if c.Command == "" && line != "" {
			c.Command = line
		}
		if len(c.Argv) == 0 && len(argv) > 0 {
			c.Argv = argv
		}
	}
	for _, key := range []string{"cwd", "workdir"} {
		if s := stringOf(in[key]); s != "" && c.Dir == "" {
			c.Dir = s
		}
	}
	for _, key := range []string{"url", "uri"} {
		if s := stringOf(in[key]); strings.Contains(s, "://") {
			c.Hosts = append(c.Hosts, s)
		}
	}
	paths := append(tc.paths(), pathsOf(in)...)
	for _, raw := range tc.Content {
		var d struct {
			Type string `json:"type"`
			Path string `json:"path"`
		}
		if json.Unmarshal(raw, &d) == nil && d.Type == "diff" && d.Path != "" {
			paths = append(paths, d.Path)
		}
	}
	switch tc.Kind {
	case "read", "search":
		c.Reads = paths
	case "edit", "delete", "move":
		c.Writes = paths
	case "execute", "fetch", "think":
		// A command's paths are its own to name; a fetch's are none.
	default:
		c.Reads, c.Writes = paths, paths
	}
	return c
}

// commandOf reads a command given as a shell line or as an argv.
func commandOf(raw json.RawMessage) (string, []string) {
	if len(raw) == 0 {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var argv []string
	if json.Unmarshal(raw, &argv) == nil {
		return "", argv
	}
	return "", nil
}

func stringOf(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// pathKeys are the rawInput fields agents name a file in (claude-agent-acp
// file_path and notebook_path, others path and abs_path), and a move's
// destination.
var pathKeys = []string{"file_path", "filePath", "notebook_path", "path", "abs_path", "new_path", "destination", "move_path"}

// pathsOf are the paths rawInput names: its path fields, a paths list,
// and the files of a set of changes (codex-acp's patch: a list of
// {path}, or an object keyed by path).
func pathsOf(in map[string]json.RawMessage) []string {
	var ps []string
	for _, k := range pathKeys {
		if s := stringOf(in[k]); s != "" {
			ps = append(ps, s)
		}
	}
	var list []string
	if json.Unmarshal(in["paths"], &list) == nil {
		ps = append(ps, list...)
	}
	var changes []struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(in["changes"], &changes) == nil {
		for _, ch := range changes {
			if ch.Path != "" {
				ps = append(ps, ch.Path)
			}
		}
	}
	var byPath map[string]json.RawMessage
	if json.Unmarshal(in["changes"], &byPath) == nil {
		for p := range byPath {
			ps = append(ps, p)
		}
	}
	return ps
}

// terminalCall is a terminal/create in a policy's terms: a command line
// when it is one (no args, shell syntax in it), else its argv. Variables
// the agent sets for it are read as a line's are (env NAME=VALUE …): a
// file a shell sources (BASH_ENV), a library loaded into the program
// (LD_PRELOAD), an editor git runs, a PATH that changes what a name runs.
func terminalCall(p createTerminal, dir string) policy.Call {
	c := policy.Call{Tool: "terminal/create", Dir: dir}
	shell := p.isLine()
	switch {
	case len(p.Env) > 0:
		argv := []string{"env"}
		for _, e := range p.Env {
			argv = append(argv, e.Name+"="+e.Value)
		}
		if shell {
			argv = append(argv, "/bin/sh", "-c", p.Command)
		} else {
			argv = append(append(argv, p.Command), p.Args...)
		}
		c.Argv = argv
	case shell:
		c.Command = p.Command
	default:
		c.Argv = append([]string{p.Command}, p.Args...)
	}
	return c
}

// clearedKeys are what a call allowed through the host (policy and level
// checked) lets through again unasked in the same turn: the files it
// writes, the command it runs. A terminal/create or fs/write_text_file
// that does what an allowed request_permission named is not asked twice.
func clearedKeys(c policy.Call, root string) []string {
	var keys []string
	for _, p := range c.Writes {
		keys = append(keys, "w\x00"+absIn(root, c.Dir, p))
	}
	// A command is cleared where it was asked to run: the same line in
	// another directory is another call.
	dir := absIn(root, c.Dir, ".")
	if c.Command != "" {
		keys = append(keys, "c\x00"+dir+"\x00"+c.Command)
	}
	switch {
	case len(c.Argv) == 3 && isShell(c.Argv[0]) && c.Argv[1] == "-c":
		// sh -c LINE runs what a call naming LINE asked for.
		keys = append(keys, "c\x00"+dir+"\x00"+c.Argv[2])
	case len(c.Argv) > 0:
		keys = append(keys, "a\x00"+dir+"\x00"+strings.Join(c.Argv, "\x00"))
	}
	return keys
}

// isShell tells the system's shells whose -c runs a command line as sh's
// does: by their name, or in /bin or /usr/bin (not a program of that name
// anywhere else).
func isShell(prog string) bool {
	switch filepath.Base(prog) {
	case "sh", "bash", "dash", "zsh":
		d := filepath.Dir(prog)
		return d == "." && !strings.Contains(prog, "/") || d == "/bin" || d == "/usr/bin"
	}
	return false
}

// absIn is p from dir (itself from root), or root.
func absIn(root, dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	if dir != "" && !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	if dir == "" {
		dir = root
	}
	return filepath.Join(dir, p)
}
