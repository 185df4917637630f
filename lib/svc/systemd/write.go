package systemd

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"

	"github.com/agentry/agentry/lib/svc/registry"
	"github.com/agentry/agentry/lib/svc/sock"
)

// The ports svc start --port auto picks from (lib/svc's): above every
// worktree's block, below Linux's ephemeral range.
const (
	autoPortLow  = registry.BlockPortHigh
	autoPortHigh = 32000
)

// pickFree is the port svc would pick for the service name in cwd, when
// it is free: the first free one from the same place in the range.
func pickFree(name, cwd string) (int, error) {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s\x00%s", name, cwd)
	span := autoPortHigh - autoPortLow
	first := int(h.Sum32() % uint32(span))
	for i := range span {
		if p := autoPortLow + (first+i)%span; sock.CanListen(p) {
			return p, nil
		}
	}
	return 0, fmt.Errorf("no free port between %d and %d", autoPortLow, autoPortHigh)
}

// Write writes the files into dir (made if need be), each whole or not
// at all: written under a temporary name with its mode, then renamed.
// It returns the paths written.
func Write(dir string, files []File) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var out []string
	for _, f := range files {
		p := filepath.Join(dir, f.Name)
		if err := writeFile(p, f); err != nil {
			return out, err
		}
		out = append(out, p)
	}
	return out, nil
}

func writeFile(path string, f File) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+f.Name+".*") // 0600 from the start
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(f.Data)
	if err == nil {
		err = tmp.Chmod(f.Mode)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
