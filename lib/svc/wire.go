package svc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/agentry/agentry/lib/proc"
	"golang.org/x/sys/unix"
)

// The contract between svc start and the monitor it starts, and between
// every other svc command and a running monitor, in one place.
//
// Start runs "svc-monitor HOME NAME" (the program MonitorProgram, found
// beside the one that starts it, else on PATH) in a new session, with
// stdin at /dev/null, stdout and stderr appended to NAME/monitor.err, and
// these inherited descriptors — the argv carries no spec, so nothing in
// Spec.Env is readable by other users through /proc/PID/cmdline:
//
//	fd 3  reports: the monitor writes Reports, one JSON line each
//	fd 4  spec:    svc start writes the Spec as JSON, then closes it
//	fd 5  until:   a pidfd of the Spec.UntilExit process (only with it)
//
// A running monitor answers on an abstract unix socket (State.Socket):
// one Request line in, one Reply line out. Abstract, so that no path
// length limit applies however deep the state home is; an abstract socket
// has no file mode, so both ends check the other by the kernel's record of
// its credentials (SO_PEERCRED): the monitor answers only its own
// effective uid, and a client talks only to a listener of its own uid
// whose pid is the monitor's recorded one (dialMonitor). The name has 128
// random bits, drawn by the monitor at its start and written to
// state.json (0600, in the 0700 service directory) before anything could
// dial it: another user cannot know it in time to bind it first.

// socketPrefix starts the name of every monitor's socket.
const socketPrefix = "@agentry-svc-"

// NewSocketName is a fresh name for a monitor's socket: the prefix, then
// 128 random bits in hex.
func NewSocketName() (string, error) {
	var b [16]byte
	for n := 0; n < len(b); {
		m, err := unix.Getrandom(b[n:], 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return "", os.NewSyscallError("getrandom", err)
		}
		n += m
	}
	return fmt.Sprintf("%s%x", socketPrefix, b), nil
}

// MonitorProgram is the monitor's program: a binary of its own, so that
// the process there is one of per service links only what it uses
// (DESIGN.md, "Heavy dependencies", has the RSS measured).
const MonitorProgram = "svc-monitor"

// MonitorPackage is where go install finds the monitor's program.
const MonitorPackage = "github.com/agentry/agentry/cmd/svc-monitor"

// ErrNoMonitor is returned by Start when no monitor program is found.
var ErrNoMonitor = errors.New(MonitorProgram + " is neither beside this program nor on PATH")

// MonitorBinary is the monitor's program: beside the running one, else
// on PATH; ErrNoMonitor when neither has it.
func MonitorBinary() (string, error) {
	p, err := proc.Sibling(MonitorProgram)
	if err != nil {
		return "", ErrNoMonitor
	}
	return p, nil
}

// monitorArgs are the monitor's arguments after its program: HOME NAME.
// ParseMonitorArgs is their other end.
func monitorArgs(d Dir) []string { return []string{d.Home, d.Name} }

// ParseMonitorArgs reads the monitor's arguments (after its program's
// name) back into the service's directory.
func ParseMonitorArgs(args []string) (Dir, error) {
	if len(args) != 2 || args[0] == "" || args[1] == "" {
		return Dir{}, errors.New(MonitorProgram + " takes HOME NAME")
	}
	return Dir{Home: args[0], Name: args[1]}, nil
}

// isMonitorOf reports whether a /proc/PID/cmdline is that of d's monitor.
func isMonitorOf(cmdline []byte, d Dir) bool {
	prog, rest, ok := bytes.Cut(cmdline, []byte{0})
	if !ok || filepath.Base(string(prog)) != MonitorProgram {
		return false
	}
	return string(rest) == strings.Join(monitorArgs(d), "\x00")+"\x00"
}

// IsMonitor tells whether p is a running service's monitor: the program
// svc-monitor, run for HOME NAME, whose state records p as that service's
// monitor. It is the root of that service's tree and never part of
// another's: a service's command that runs svc start (an agent's svc mcp,
// a script) makes the new monitor its descendant, the kernel handing the
// orphan to the subreaper above, and that service's stop, readiness and
// ports leave it, and all it runs, out (proc.Spare). Each of these a
// process of the service could feign but one: so it must also run the
// monitor program this one runs with (MonitorBinary, the same file), for
// a state home that passes CheckHome. Where anything fails, p is the
// service's like any other process: a stop errs toward ending it.
func IsMonitor(p proc.Info) bool {
	if p.Comm != MonitorProgram || !runsMonitorBinary(p.PID) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/cmdline")
	if err != nil {
		return false
	}
	_, args, _ := bytes.Cut(b, []byte{0})
	d, err := ParseMonitorArgs(strings.Split(strings.TrimSuffix(string(args), "\x00"), "\x00"))
	if err != nil || !filepath.IsAbs(d.Home) || CheckHome(d.Home) != nil {
		return false
	}
	m, ok := monitorProc(d) // the state's monitor, its arguments confirmed
	return ok && m.PID == p.PID && m.Start == p.Start
}

// runsMonitorBinary tells whether pid's executable is the very file
// MonitorBinary finds: not a program that merely has its name.
func runsMonitorBinary(pid int) bool {
	bin, err := MonitorBinary()
	if err != nil {
		return false
	}
	want, err := os.Stat(bin)
	if err != nil {
		return false
	}
	got, err := os.Stat("/proc/" + strconv.Itoa(pid) + "/exe")
	return err == nil && os.SameFile(want, got)
}

const (
	fdReports = 3
	fdSpec    = 4
	fdUntil   = 5
)

// Event names a Report.
type Event string

// What a monitor reports to the svc start that started it, in order:
// taken or failed (and the monitor ends), or started, then at most one of
// ready, running and exited (a ready or running service may still exit).
const (
	EvTaken   Event = "taken"   // another monitor holds the name
	EvFailed  Event = "failed"  // the command could not be started
	EvStarted Event = "started" // the command runs, with its pid
	EvReady   Event = "ready"   // readiness detected
	EvRunning Event = "running" // alive, and no readiness within the ready timeout
	EvExited  Event = "exited"  // the command ended, with its exit and tail
)

// Report is one thing the monitor tells the starting svc.
type Report struct {
	Event Event  `json:"event"`
	Error string `json:"error,omitempty"`
	PID   int    `json:"pid,omitempty"`
	// Server (ready): the process holding the listening socket readiness
	// came from, when known.
	Server int `json:"server,omitempty"`
	Endpoint
	By      string  `json:"by,omitempty"`
	Warning string  `json:"warning,omitempty"`
	AfterMs float64 `json:"afterMs,omitempty"`
	proc.Ended
	Tail     []string  `json:"tail,omitempty"`
	Holder   string    `json:"holder,omitempty"`
	Restarts int       `json:"restarts,omitempty"`
	Followed *Followed `json:"followed,omitempty"`
}

// OpStop is the control request that stops the service (the terminal's
// are OpSend and OpAttach, in term.go).
const OpStop = "stop"

// Request is a control request to a running monitor.
type Request struct {
	Op      string `json:"op"`
	GraceMs int64  `json:"graceMs,omitempty"`
	Keys    string `json:"keys,omitempty"` // OpSend's
	// Size is the terminal size an attach sees its screen at (OpAttach,
	// OpResize); nil or zero: left as it is.
	Size *TermSize `json:"size,omitempty"`
}

// Reply is a monitor's answer: the stop report, or an error. The report's
// fields are at the top level, so the reply of a stop is a StopReport.
type Reply struct {
	*StopReport
	Error string `json:"error,omitempty"`
	Sent  int    `json:"sent,omitempty"`  // OpSend: the bytes the terminal took
	NoPTY bool   `json:"noPty,omitempty"` // the Error is that there is no terminal
}

// StopReport is what a stop did.
type StopReport struct {
	Name string `json:"name"`
	proc.LadderReport
	Status Status `json:"status"`
	// Ended is how the service's process ended, when the stop saw it end.
	proc.Ended
	// NotRunning: there was nothing to stop.
	NotRunning bool   `json:"-"`
	Note       string `json:"note,omitempty"`
	// StopKeys is what the spec's stop keys did, when it has them:
	// StopKeysEnded or StopKeysIgnored.
	StopKeys string `json:"stopKeys,omitempty"`
}

// monitorLaunch is svc start's end of the handoff: the monitor's command,
// and the descriptors it inherits. Close releases the starter's copies
// once the monitor has started.
type monitorLaunch struct {
	cmd     *exec.Cmd
	reports *os.File // read end
	spec    *os.File // write end
	closers []*os.File
}

// launchMonitor prepares the monitor of d, with the spec on its own pipe.
func launchMonitor(exe string, d Dir, spec Spec, stderr *os.File) (*monitorLaunch, error) {
	l := &monitorLaunch{}
	repR, repW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	specR, specW, err := os.Pipe()
	if err != nil {
		repR.Close()
		repW.Close()
		return nil, err
	}
	l.reports, l.spec = repR, specW
	l.closers = []*os.File{repW, specR}
	files := []*os.File{repW, specR}
	if spec.UntilExit > 0 {
		// The process is pinned now, by a pidfd the monitor inherits, so a
		// recycled pid can never stand in for it.
		fd, err := unix.PidfdOpen(spec.UntilExit, 0)
		if err != nil {
			l.closeAll()
			return nil, &FieldError{Field: "untilExit", Value: strconv.Itoa(spec.UntilExit), Err: err}
		}
		pidfd := os.NewFile(uintptr(fd), "until-exit")
		l.closers = append(l.closers, pidfd)
		files = append(files, pidfd)
	}
	cmd := exec.Command(exe, monitorArgs(d)...)
	cmd.Stdin = nil // /dev/null
	cmd.Stdout, cmd.Stderr = stderr, stderr
	cmd.ExtraFiles = files
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	l.cmd = cmd
	return l, nil
}

// start starts the monitor and hands it the spec.
func (l *monitorLaunch) start(spec Spec) error {
	err := l.cmd.Start()
	for _, f := range l.closers {
		f.Close()
	}
	if err != nil {
		l.reports.Close()
		l.spec.Close()
		return fmt.Errorf("starting the monitor: %w", err)
	}
	// The pipe holds 64 KiB; a larger spec is read by the monitor as it
	// is written, so write it on the side.
	go func() {
		_ = json.NewEncoder(l.spec).Encode(spec)
		l.spec.Close()
	}()
	return nil
}

func (l *monitorLaunch) closeAll() {
	for _, f := range append(l.closers, l.reports, l.spec) {
		f.Close()
	}
}

// MonitorEnds is the monitor's end of the handoff.
type MonitorEnds struct {
	Spec    Spec
	Reports *json.Encoder
	// Until is the Spec.UntilExit pidfd, or nil.
	Until *os.File
}

// Inherit reads the monitor's end of the handoff: its spec from fd 4, the
// report pipe on fd 3 and, when the spec has UntilExit, the pidfd on fd 5.
func Inherit() (*MonitorEnds, error) {
	// Both are pipes when svc start made them. Run any other way, the
	// numbers may still be open — the Go runtime itself opens files at
	// start (a cgroup file, seen on fd 4) — so a descriptor merely being
	// open proves nothing.
	for _, fd := range []int{fdReports, fdSpec} {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
			return nil, fmt.Errorf("the monitor is started by svc start, which hands it a pipe on descriptor %d; it has none", fd)
		}
	}
	reports := os.NewFile(fdReports, "reports")
	specFile := os.NewFile(fdSpec, "spec")
	defer specFile.Close()
	var spec Spec
	if err := json.NewDecoder(specFile).Decode(&spec); err != nil {
		return nil, fmt.Errorf("reading the spec from svc start: %v", err)
	}
	ends := &MonitorEnds{Spec: spec, Reports: json.NewEncoder(reports)}
	if spec.UntilExit > 0 {
		ends.Until = os.NewFile(fdUntil, "until-exit")
	}
	return ends, nil
}
