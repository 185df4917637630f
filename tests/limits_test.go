package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// zstdRLE is a zstd frame of 1<<windowLog bytes of window that decodes
// to blocks RLE blocks of 128 KiB of 'a' each: about 4 bytes a block, so
// a 32 KB file that fills any window.
func zstdRLE(windowLog, blocks int) []byte {
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, byte(windowLog-10) << 3}
	for i := range blocks {
		h := 128<<10<<3 | 1<<1
		if i == blocks-1 {
			h |= 1
		}
		b = append(b, byte(h), byte(h>>8), byte(h>>16), 'a')
	}
	return b
}

// A zstd file whose frame asks for a window over the cap is an error
// naming the file, said before anything is decoded: the 32 KB file that
// would fill a 512 MiB window costs ndjson no more than an empty input.
// One within the cap is read (its one long line skipped by --max-line).
func TestNdjsonZstdWindowCap(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.zst")
	ok := filepath.Join(dir, "ok.zst")
	if err := os.WriteFile(big, zstdRLE(29, 8000), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ok, zstdRLE(20, 16), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(files ...string) (int, string, int64) {
		cmd := exec.Command(filepath.Join(binDir, "ndjson"), append([]string{"count", "--max-line", "1MiB", "--"}, files...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cmd.Run()
		return cmd.ProcessState.ExitCode(), stderr.String(), cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
	}
	code, stderr, rss := run(big, ok)
	if code != 1 || !strings.Contains(stderr, "ndjson: error: "+big+": the zstd window is 512 MiB, over the 128 MiB read\n") {
		t.Errorf("big.zst: exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(stderr, "skipped 1 line over the 1MiB line cap (first at "+ok+":1") {
		t.Errorf("ok.zst was not read after big.zst: %q", stderr)
	}
	if rss > 64<<10 { // KiB
		t.Errorf("ndjson refusing a 512 MiB window used %d MiB", rss>>10)
	}
}
