package proc

import (
	"os"
	"os/exec"
	"path/filepath"
)

// Sibling finds another program of the suite: beside this binary (where
// make install puts them all), else on PATH.
func Sibling(name string) (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return exec.LookPath(name)
}
