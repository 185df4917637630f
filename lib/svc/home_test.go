package svc

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A home writable by others, or under a directory others may write to
// that is not sticky, is refused; a home of this user's under /tmp, or
// not made yet, is not.
func TestCheckHome(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok")
	must(t, os.Mkdir(ok, 0o700))
	open := filepath.Join(dir, "open")
	must(t, os.Mkdir(open, 0o700))
	must(t, os.Chmod(open, 0o777))
	shared := filepath.Join(dir, "shared")
	must(t, os.Mkdir(shared, 0o700))
	must(t, os.Chmod(shared, 0o777))
	sticky := filepath.Join(dir, "sticky")
	must(t, os.Mkdir(sticky, 0o700))
	must(t, os.Chmod(sticky, 0o777|os.ModeSticky))
	must(t, os.Mkdir(filepath.Join(sticky, "svc"), 0o700))
	link := filepath.Join(dir, "link")
	must(t, os.Symlink(open, link))
	for home, bad := range map[string]bool{
		ok: false, filepath.Join(ok, "not", "yet"): false, filepath.Join(sticky, "svc"): false,
		open: true, filepath.Join(shared, "svc"): true, filepath.Join(shared, "not", "yet"): true, link: true,
	} {
		err := CheckHome(home)
		var he *HomeError
		if got := errors.Is(err, ErrHomeNotYours) && errors.As(err, &he) && he.Home == home; got != bad {
			t.Errorf("%s: %v", home, err)
		}
	}
}
