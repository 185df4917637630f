package ready

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A server is known by its comm, its executable or its argv[0]: here a
// sleep whose argv[0] says what it is, as a retitled server's does.
func TestServerOf(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	for argv0, want := range map[string]Server{
		"redis-server 127.0.0.1:6379": Redis, "postgres: checkpointer": Postgres, "/usr/sbin/nginx": WebServer,
		"memcached": Quiet, "node": Unknown,
	} {
		cmd := &exec.Cmd{Path: sleep, Args: []string{argv0, "10"}}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Start returns once the child has begun its exec (vfork), not
		// once its new argv are in place: wait for them, as a listener's
		// holder, long exec'd, always has them.
		cmdline := "/proc/" + strconv.Itoa(cmd.Process.Pid) + "/cmdline"
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if b, _ := os.ReadFile(cmdline); strings.HasPrefix(string(b), argv0+"\x00") {
				break
			}
		}
		got := ServerOf(cmd.Process.Pid)
		cmd.Process.Kill()
		cmd.Wait()
		if got != want {
			t.Errorf("argv[0] %q: %d, want %d", argv0, got, want)
		}
	}
	if got := ServerOf(os.Getpid()); got != Unknown {
		t.Errorf("the test itself: %d", got)
	}
}
