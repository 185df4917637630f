package agentrun

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc"
)

// ServicesPrompt is what the agent is told of its services, appended to
// its system prompt; keep says whether they outlive the run.
func ServicesPrompt(keep bool) string {
	end := "Every service still running when this run ends is stopped then, so stop what you no longer need and do not rely on a server outliving you."
	if keep {
		end = "Services still running when this run ends are left running for the user, who is told their URLs; stop the ones that are of no further use."
	}
	return "Background services: you have the svc tools (start, output, stop, status, list, run). " +
		"Start anything that keeps running — a dev server, a database, a watcher — with the start tool, never from your shell: " +
		"a server started in the shell blocks it, or runs on with nobody watching it. start returns once the server is ready, " +
		"with its URL or port. Read its new output with the output tool, passing back the next_cursor it gave you. " + end
}

// ServicesPending is the services' URL in a grant computed before svc mcp
// has one (it listens on a port of its own choosing): runagent
// --print-args shows it, and a run puts the real URL in its place.
const ServicesPending = "http://127.0.0.1:PORT/mcp"

// FilesPending is the run's files directory in a grant computed before
// the run has one (runagent --print-args shows it); a run makes the
// directory and puts its path in its place.
const FilesPending = "RUNDIR"

// ServicesOptions say how to start a run's services server.
type ServicesOptions struct {
	Getenv func(string) string
	// Stderr gets svc mcp's own errors, as they come.
	Stderr io.Writer
	// Keep leaves the services running after the run; else they are tied
	// to this process, so even a runagent killed with SIGKILL takes them.
	Keep bool
}

// services is a run's svc mcp, serving one scope over loopback HTTP.
type services struct {
	URL   string
	Scope string
	home  string
	keep  bool
	child *proc.Child
}

// ServiceEnd is how one of the run's services ended, or, kept, where it
// runs.
type ServiceEnd struct {
	Name      string   `json:"name"`
	Command   []string `json:"command"`
	Port      int      `json:"port,omitempty"`
	URL       string   `json:"url,omitempty"`
	Status    string   `json:"status"` // kept, stopped (by runagent), exited or failed
	StoppedBy string   `json:"stoppedBy,omitempty"`
	proc.Ended
	Tail []string `json:"tail,omitempty"`
}

// startServices starts svc mcp for the run, on a scope of its own, in
// env (the agent's environment) with the state home this process uses,
// and waits for its URL.
func startServices(o ServicesOptions, env []string, starts proc.Options) (*services, error) {
	home, err := svc.Home(o.Getenv)
	if err != nil {
		return nil, &StartError{Reason: err.Error()}
	}
	bin, err := svcBinary()
	if err != nil {
		return nil, err
	}
	s := &services{Scope: "runagent-" + strconv.Itoa(os.Getpid()), home: home, keep: o.Keep}
	args := []string{"mcp", "--http", "127.0.0.1:0", "--scope", s.Scope}
	if !o.Keep {
		args = append(args, "--until-exit", strconv.Itoa(os.Getpid()))
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(withoutKey(env, "SVC_HOME"), "SVC_HOME="+home)
	c, err := proc.StartPiped(cmd, proc.Pipes{Stderr: o.Stderr, Options: starts})
	if err != nil {
		return nil, &StartError{Reason: "could not start svc mcp: " + proc.ErrnoName(err)}
	}
	s.child = c.Child
	out := c.Stdout
	defer out.Close()
	url := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		url <- strings.TrimSpace(line)
	}()
	select {
	case s.URL = <-url:
	case <-time.After(10 * time.Second):
	}
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
		s.child.Stop(syscall.SIGTERM, time.Second)
		s.child.Wait()
		return nil, &StartError{Reason: "svc mcp did not start (see its error above)"}
	}
	return s, nil
}

// svcBinary is svc beside this binary, else on PATH.
func svcBinary() (string, error) {
	if p, err := proc.Sibling("svc"); err == nil {
		return p, nil
	}
	return "", &StartError{Reason: ErrNoSvc.Error(), Err: ErrNoSvc}
}

// ErrNoSvc is the services' start error when there is no svc to run.
var ErrNoSvc = errors.New("svc's tools need svc, which is neither beside this program nor on PATH")

// finish ends the services server, then stops every service of the
// run's scope with svc's ladder (unless they are kept) and says how each
// ended. A stopped service's directory goes with it: its end is in the
// result, tail included.
func (s *services) finish() []ServiceEnd {
	s.child.Stop(syscall.SIGTERM, 2*time.Second)
	s.child.End()
	names, _ := svc.Members(s.home, s.Scope)
	ends := make([]ServiceEnd, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ends[i] = s.finishOne(svc.Dir{Home: s.home, Name: name})
		}()
	}
	wg.Wait()
	if !s.keep {
		if rest, _ := svc.Members(s.home, s.Scope); len(rest) == 0 {
			svc.ReleaseScope(s.home, s.Scope)
		}
	}
	return ends
}

func (s *services) finishOne(d svc.Dir) ServiceEnd {
	e := ServiceEnd{Name: d.Name}
	l, err := svc.Look(d)
	if err != nil {
		e.Status = "unknown: " + err.Error()
		return e
	}
	e.Command, e.URL, e.Port = l.Spec.Command, l.URL, l.Port
	if e.Port == 0 {
		e.Port = l.Spec.Port
	}
	if l.Status.Live() && s.keep {
		e.Status = "kept"
		return e
	}
	if l.Status.Live() {
		rep, err := svc.Stop(d, 0)
		if err != nil {
			e.Status = "could not be stopped: " + err.Error()
			return e
		}
		e.Status = "stopped"
		e.StoppedBy = "runagent"
		if len(rep.StillAlive) > 0 {
			e.Status = fmt.Sprintf("still alive: %v", rep.StillAlive)
			return e
		}
		if l2, err := svc.Look(d); err == nil {
			l = l2
		}
	} else {
		e.Status = string(l.Status)
	}
	e.ExitCode, e.Signal = l.ExitCode, l.Signal
	e.Tail = svc.EndTail(d, &l.State)
	if err := svc.Remove(d); err != nil && !errors.Is(err, os.ErrNotExist) {
		e.Status += " (its record is kept: " + err.Error() + ")"
	}
	return e
}
