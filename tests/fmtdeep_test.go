package tests

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// countingHash is where the output goes: its size and SHA-256, not itself.
type countingHash struct {
	n int64
	h io.Writer
}

func (c *countingHash) Write(b []byte) (int, error) {
	c.n += int64(len(b))
	return c.h.Write(b)
}

// ndjson fmt on a deeply nested line writes the whole of its output, the
// bytes it wrote before the printer streamed (recorded below from the
// binary before, which held them all: 1.04 GB of RSS for the 20 KB line,
// 0.58 GB for the 60 KB one, 2.9 GB with --indent 4 --color), between the
// lines around it, and holds a few MB whatever the line (issue 43, item 14).
// jq cannot be the reference: 1.6 refuses JSON nested over 256 deep.
func TestNdjsonFmtDeep(t *testing.T) {
	around := func(deep string) string { return "{\"x\": 1}\n" + deep + "\n[1, 2]\n" }
	arrays := around(strings.Repeat("[", 10000) + strings.Repeat("]", 10000))            // 20 KB
	objects := around(strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000)) // 60 KB
	for _, c := range []struct {
		name, in string
		args     []string
		size     int64
		sha256   string
	}{
		{"arrays", arrays, nil, 200000027, "088618de8f4cfa4e8d35dccc95a6a908001ef9275470063a6ee3d559331c6136"},
		{"arrays", arrays, []string{"--color", "always"}, 200160107, "a9561f746c7fa87683a9bd87c351a8a8d126dd24c08d0da890b2444a637c4169"},
		{"arrays", arrays, []string{"-c", "--sort-keys"}, 20015, "e26926a4fae8d1cd3c87444e1ad418553301dc74a8bf7b7b9797e5f141fc1517"},
		{"objects", objects, nil, 200090028, "d2fb1cbf7e5eaa03a72cd7bc45c0ba3293eec1221bb349a47ca601454f7a32ed"},
		{"objects", objects, []string{"-c", "--sort-keys"}, 60016, "126ca0ed92ffbff0d873d72b59c08d7c69f6a3f2ac1bbc8a7b369f647aee640f"},
		{"objects", objects, []string{"--sort-keys", "--indent", "4", "--color", "always"}, 400460123, "d848be02cd9c01bcbd4448105b7f83a27190b9456edc5d030c11a4d4c0955b24"},
	} {
		args := append([]string{"fmt"}, c.args...)
		cmd := exec.Command(filepath.Join(binDir, "ndjson"), args...)
		h := sha256.New()
		out := &countingHash{h: h}
		var stderr bytes.Buffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(c.in), out, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("ndjson %s on %s: %v: %s", strings.Join(args, " "), c.name, err, stderr.String())
		}
		if sum := hex.EncodeToString(h.Sum(nil)); out.n != c.size || sum != c.sha256 {
			t.Errorf("ndjson %s on %s: %d bytes, sha256 %s; want %d, %s", strings.Join(args, " "), c.name, out.n, sum, c.size, c.sha256)
		}
		if rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss; rss > 100<<10 { // KiB
			t.Errorf("ndjson %s on %s held %d MiB", strings.Join(args, " "), c.name, rss>>10)
		}
	}
}
