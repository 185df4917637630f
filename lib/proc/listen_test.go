package proc

import (
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
)

// sock_diag and /proc/net agree, for v4 and v6 listeners, and the inode
// found is one this process holds.
func TestListeningInodes(t *testing.T) {
	for _, network := range []string{"tcp4", "tcp6"} {
		addr := "127.0.0.1:0"
		if network == "tcp6" {
			addr = "[::1]:0"
		}
		ln, err := net.Listen(network, addr)
		if err != nil {
			t.Skipf("%s: %v", network, err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		got, want := ListeningInodes(port), procNetListeners(port)
		if len(got) != 1 || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s port %d: sock_diag %v, /proc/net %v", network, port, got, want)
		}
		f, _ := ln.(*net.TCPListener).File()
		link, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
		for ino := range got {
			if !strings.Contains(link, fmt.Sprint(ino)) {
				t.Errorf("inode %d, but the listener is %s", ino, link)
			}
		}
		f.Close()
		ln.Close()
	}
	if n := len(ListeningInodes(1)); n != 0 {
		t.Errorf("%d listeners on port 1", n)
	}
}
