package cli

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestFileFlagError(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.toml")
	_, errMissing := os.ReadFile(missing)
	_, errDir := os.ReadFile(dir)
	for _, c := range []struct {
		path string
		err  error
		want string
	}{
		{missing, errMissing, "--policy " + missing + ": no such file"},
		{dir, errDir, "--policy " + dir + ": is a directory, not a policy file"},
		{"x", &os.PathError{Op: "open", Path: "x", Err: errors.New("too many links")}, "--policy x: too many links"},
	} {
		err := FileFlagError("--policy", c.path, "policy", c.err)
		var e *Error
		if !errors.As(err, &e) || e.Code != ExitUsage || err.Error() != c.want {
			t.Errorf("got %v, want %q (exit 2)", err, c.want)
		}
	}
}
