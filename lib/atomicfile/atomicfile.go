// Package atomicfile replaces a file whole: a reader sees the old bytes or
// the new, never part of them, and after a crash the file is one or the
// other. It is the one way the suite replaces a file.
package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces path with data, with mode perm: a new temporary file in
// the same directory (made with O_EXCL under a random name, so nothing
// planted there is followed or written through), synced, renamed over
// path (which replaces a symlink at path rather than writing where it
// points), then the directory synced so the rename itself survives a
// crash. On an error path is as it was and nothing is left behind.
func Write(path string, data []byte, perm fs.FileMode) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = fill(f, data, perm)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}

// fill writes data to a new file, sets its mode and syncs it.
func fill(f *os.File, data []byte, perm fs.FileMode) error {
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Sync()
}

// syncDir syncs a directory, so that a rename in it is on disk. A
// directory that cannot be opened or synced (some filesystems refuse) is
// not an error: the file itself is whole either way.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	d.Sync()
	return d.Close()
}
