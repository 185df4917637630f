package cli

import (
	"errors"
	"io/fs"
	"syscall"
)

// FileFlagError is a usage error (exit 2) for the file path that flag
// names and that could not be read as a what file: "--policy p: no such
// file", "--policy p: is a directory, not a policy file", else the
// system's reason without Go's "open p:" (its path is said once).
func FileFlagError(flag, path, what string, err error) error {
	var why string
	switch {
	case errors.Is(err, fs.ErrNotExist):
		why = "no such file"
	case errors.Is(err, syscall.EISDIR):
		why = "is a directory, not a " + what + " file"
	case errors.Is(err, fs.ErrPermission):
		why = "permission denied"
	default:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		why = err.Error()
	}
	return Usagef("%s %s: %s", flag, path, why)
}
