package acp

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentry/agentry/lib/atomicfile"
)

// record is what the face keeps of a session between connections, so that
// a later agent-host can list it and load it: the CLI's own session id and
// where it ran. The history itself is the CLI's record, never copied.
type record struct {
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd"`
	// Dirs are the session's additional directories.
	Dirs    []string `json:"additionalDirectories,omitempty"`
	Backend string   `json:"backend"`
	// CLISession is the backend's session id (claude's session, codex's
	// thread), as session_info reports it.
	CLISession string `json:"cliSession"`
	Title      string `json:"title,omitempty"`
	UpdatedAt  string `json:"updatedAt"`
	Mode       string `json:"mode,omitempty"`
}

// store keeps records as files in a directory (0700), one per session
// (0600), written atomically. A store with no directory keeps nothing.
type store struct{ dir string }

func validSessionID(id string) bool {
	return id != "" && !strings.ContainsAny(id, `/\.`) && len(id) <= 128
}

func (st store) path(id string) string { return filepath.Join(st.dir, id+".json") }

func (st store) save(r record) error {
	if st.dir == "" || !validSessionID(r.SessionID) {
		return nil
	}
	if err := os.MkdirAll(st.dir, 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return atomicfile.Write(st.path(r.SessionID), append(b, '\n'), 0o600)
}

// load reads a session's record; fs.ErrNotExist when there is none.
func (st store) load(id string) (record, error) {
	var r record
	if st.dir == "" || !validSessionID(id) {
		return r, fs.ErrNotExist
	}
	b, err := os.ReadFile(st.path(id))
	if err != nil {
		return r, err
	}
	err = json.Unmarshal(b, &r)
	return r, err
}

// all reads every record, of any backend.
func (st store) all() []record {
	if st.dir == "" {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(st.dir, "*.json"))
	var out []record
	for _, f := range files {
		var r record
		if b, err := os.ReadFile(f); err == nil && json.Unmarshal(b, &r) == nil && r.SessionID != "" {
			out = append(out, r)
		}
	}
	return out
}

// remove forgets a session's record; fs.ErrNotExist when there is none.
func (st store) remove(id string) error {
	if st.dir == "" || !validSessionID(id) {
		return fs.ErrNotExist
	}
	return os.Remove(st.path(id))
}
