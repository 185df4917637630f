package proxy

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc"
	"github.com/agentry/agentry/lib/svc/ready"
)

// homeHeader carries a proxy's state home on its own page (for a
// loopback Host only), so that another svc proxy that finds the port
// taken can say whose it is. It is no secret from the machine's users:
// the home is in the argv of its monitor, which /proc shows them all.
const homeHeader = "Svc-Proxy-Home"

// Holder is an svc proxy found listening on a port.
type Holder struct {
	UID  uint32 // whose it is
	Home string // its state home; "" when that cannot be told
}

// Probe says whether an svc proxy listens on port, and whose: nil when
// nothing listens there or what does is no svc proxy. A holder this user
// can see is known by its argv and its monitor's (svc-monitor HOME
// svc-proxy), and sent nothing. One it cannot see (another user's) is
// asked for its own page, once, with a short deadline — only when that
// user runs an svc proxy at all, so that no other server gets a stray
// request.
func Probe(port int) *Holder {
	ps, listening := ready.Holders(port)
	if !listening {
		return nil
	}
	if len(ps) > 0 {
		for _, p := range ps {
			if home, ok := proxyHome(p); ok {
				return &Holder{UID: uint32(owner(p.PID)), Home: home}
			}
		}
		return nil
	}
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
	if err != nil {
		return nil
	}
	defer c.Close()
	uid, err := peerUID(c)
	if err != nil {
		return nil
	}
	homes := proxyHomesOf(uid)
	if len(homes) == 0 {
		return nil
	}
	home, ok := askHome(c)
	if !ok {
		return nil
	}
	if home == "" && len(homes) == 1 {
		home = homes[0]
	}
	return &Holder{UID: uid, Home: home}
}

// proxyHome is the state home of p when p is an svc proxy: svc proxy
// --serve under svc-monitor HOME svc-proxy.
func proxyHome(p proc.Info) (string, bool) {
	argv := cmdline(p.PID)
	if len(argv) < 3 || argv[len(argv)-2] != "proxy" || argv[len(argv)-1] != "--serve" {
		return "", false
	}
	return monitorHome(p.PPID)
}

// monitorHome is the state home of pid when it is the monitor of an svc
// proxy.
func monitorHome(pid int) (string, bool) {
	argv := cmdline(pid)
	if len(argv) != 3 || filepath.Base(argv[0]) != svc.MonitorProgram || argv[2] != svc.ProxyName {
		return "", false
	}
	return argv[1], true
}

// proxyHomesOf are the state homes of uid's svc proxies, by their
// monitors.
func proxyHomesOf(uid uint32) []string {
	var homes []string
	for _, p := range proc.All() {
		if owner(p.PID) != int64(uid) {
			continue
		}
		if home, ok := monitorHome(p.PID); ok {
			homes = append(homes, home)
		}
	}
	return homes
}

func owner(pid int) int64 {
	fi, err := os.Stat("/proc/" + strconv.Itoa(pid))
	if err != nil {
		return -1
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Uid)
	}
	return -1
}

func cmdline(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(string(bytes.TrimSuffix(b, []byte{0})), "\x00")
}

// askHome asks the server at the far end of c for its own page: ok when
// it is an svc proxy's, with its home when it says it.
func askHome(c net.Conn) (home string, ok bool) {
	c.SetDeadline(time.Now().Add(2 * time.Second))
	req, _ := http.NewRequest("GET", "http://localhost/", nil)
	req.Header.Set("Connection", "close")
	if req.Write(c) != nil {
		return "", false
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), req)
	if err != nil {
		return "", false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if !strings.Contains(string(b), "<title>svc proxy</title>") {
		return "", false
	}
	return resp.Header.Get(homeHeader), true
}
