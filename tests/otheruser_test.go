package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// otherUser is a second local user for the cross-user tests: a uid that
// no account on the machine has, with a home of its own. A process is run
// as it by setting its credentials, the way setpriv does, so nothing is
// added to /etc/passwd and nothing is left to remove.
type otherUser struct {
	UID, GID int
	Home     string
}

// strangerUID is the uid the tests act as another user with: high, so no
// account of a real machine has it.
const strangerUID = 61917

// newOtherUser returns the second user, with a fresh home it owns, or
// skips the test where this process cannot take another uid (not root).
func newOtherUser(t *testing.T) *otherUser {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the cross-user tests act as a second user, which only root can become here")
	}
	home, err := os.MkdirTemp("", "agentry-other-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	u := &otherUser{UID: strangerUID, GID: strangerUID, Home: home}
	if err := os.Chown(home, u.UID, u.GID); err != nil {
		t.Fatal(err)
	}
	return u
}

// Command is name with args run as the other user, in its home, with
// HOME and SVC_HOME there and the suite's binaries on PATH.
func (u *otherUser) Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = u.Home
	cmd.Env = append(os.Environ(), "HOME="+u.Home, "SVC_HOME="+filepath.Join(u.Home, "svc"),
		"PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"), "USER=other"+strconv.Itoa(u.UID))
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: uint32(u.UID), Gid: uint32(u.GID)},
		Setpgid:    true,
	}
	return cmd
}

// reachable makes dir and every directory above it searchable by the
// other user (a test's temporary directory is 0700), so a binary or file
// under it can be run or read as that user; the modes are put back at the
// end of the test.
func reachable(t *testing.T, dir string) {
	t.Helper()
	for d := dir; d != "/" && d != "."; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o001 != 0 {
			continue
		}
		mode := fi.Mode().Perm()
		os.Chmod(d, mode|0o011)
		t.Cleanup(func() { os.Chmod(d, mode) })
	}
}

// Tool is one of the test binary's own commands (TestMain's, found on
// PATH) run as the other user, its directory made reachable for it.
func (u *otherUser) Tool(t *testing.T, name string, args ...string) *exec.Cmd {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatal(err)
	}
	reachable(t, filepath.Dir(path))
	return u.Command(path, args...)
}
