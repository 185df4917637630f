package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentry/agentry/lib/proc"
	"github.com/agentry/agentry/lib/svc"
	"github.com/agentry/agentry/lib/svc/logfile"
	"github.com/agentry/agentry/lib/svc/ready"
	"github.com/agentry/agentry/lib/svc/svctext"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RunIn is the run tool's input.
type RunIn struct {
	Command        string  `json:"command" jsonschema:"the shell command, run by /bin/sh -c"`
	Cwd            string  `json:"cwd,omitempty" jsonschema:"the directory to run it in (default: svc mcp's)"`
	TimeoutSeconds float64 `json:"timeout_seconds,omitempty" jsonschema:"stop it after this many seconds (default 60, at most 600)"`
	Name           string  `json:"name,omitempty" jsonschema:"the service's name, should it go to the background"`
}

// RunOut is what run found.
type RunOut struct {
	ExitCode  int     `json:"exit_code" jsonschema:"the exit status; 124 when stopped by the timeout, 128+N when killed by signal N"`
	Signal    string  `json:"signal,omitempty"`
	TimedOut  bool    `json:"timed_out,omitempty"`
	ElapsedMs float64 `json:"elapsed_ms"`
	Output    string  `json:"output" jsonschema:"the last 8 KiB of stdout and stderr, combined"`
	Truncated bool    `json:"truncated,omitempty" jsonschema:"output holds only the last of it"`
	Note      string  `json:"note,omitempty"`
	// Background is set instead when the command was started as a service.
	Background *StartOut `json:"background,omitempty"`
}

func (s *Server) run(ctx context.Context, _ *mcp.CallToolRequest, in RunIn) (*mcp.CallToolResult, RunOut, error) {
	if strings.TrimSpace(in.Command) == "" {
		return nil, RunOut{}, errors.New("command is empty")
	}
	if err := notNegative("timeout_seconds", in.TimeoutSeconds); err != nil {
		return nil, RunOut{}, err
	}
	timeout := time.Duration(in.TimeoutSeconds * float64(time.Second))
	if timeout <= 0 {
		timeout = time.Minute
	}
	timeout = min(timeout, maxRunTime)
	if in.Cwd != "" {
		if st, err := os.Stat(in.Cwd); err != nil || !st.IsDir() {
			return nil, RunOut{}, fmt.Errorf("cwd %s is not a directory", in.Cwd)
		}
	}
	res, err := svc.Run(ctx, svc.RunRequest{RunOptions: proc.RunOptions{Argv: []string{in.Command}, Cwd: in.Cwd, Timeout: timeout, Keep: runTail},
		Background: "auto", Home: s.Home, Name: in.Name, Scope: s.Scope, UntilExit: s.UntilExit})
	if err != nil && (res == nil || res.Background == nil) {
		return nil, RunOut{}, s.word(err)
	}
	if bg := res.Background; bg != nil {
		out := s.startOut(bg)
		return nil, RunOut{Background: &out, Note: "it looked long-running, so it was started as a background service: read it with output, stop it with stop"}, nil
	}
	f := res.Foreground
	out := RunOut{ExitCode: f.ExitCode, Signal: f.Signal, TimedOut: f.TimedOut, ElapsedMs: f.ElapsedMs, Output: f.Output, Truncated: f.Truncated}
	out.Note = svctext.Ran(f, timeout, words)
	if f.ExitCode == 126 || f.ExitCode == 127 {
		// The shell could not run it at all: that is not the command's answer.
		return nil, RunOut{}, fmt.Errorf("the command could not be run (exit %d): %s", f.ExitCode, strings.TrimSpace(lastLine(f.Output)))
	}
	return nil, out, nil
}

// StartIn is the start tool's input.
type StartIn struct {
	Command             string            `json:"command" jsonschema:"the shell command that runs the service, e.g. npm run dev"`
	Name                string            `json:"name,omitempty" jsonschema:"a name for it (default: from the command)"`
	Cwd                 string            `json:"cwd,omitempty" jsonschema:"the directory to run it in"`
	Port                any               `json:"port,omitempty" jsonschema:"auto, or a port number (a number or a string): given to the command in $PORT and in place of {port}"`
	Env                 map[string]string `json:"env,omitempty" jsonschema:"more environment variables"`
	ReadyTimeoutSeconds float64           `json:"ready_timeout_seconds,omitempty" jsonschema:"how long to wait for a server to be ready (default 30; 2 with pty and no port); a watcher is answered as soon as it is known not to listen"`
	StopSignal          string            `json:"stop_signal,omitempty" jsonschema:"the signal a stop sends first, e.g. INT or QUIT (default TERM; INT for go run)"`
	Pty                 bool              `json:"pty,omitempty" jsonschema:"run it on a pseudo-terminal, which the send tool types into (a REPL, a debugger)"`
}

// StartOut is what a start found, or how a service stands.
type StartOut struct {
	Name     string   `json:"name"`
	Status   string   `json:"status" jsonschema:"starting, ready, running, unhealthy (ready, then its health probes failed), exited, failed or stopped"`
	PID      int      `json:"pid,omitempty"`
	URL      string   `json:"url,omitempty"`
	Port     int      `json:"port,omitempty"`
	Ports    []int    `json:"ports,omitempty"`
	ExitCode *int     `json:"exit_code,omitempty"`
	Signal   string   `json:"signal,omitempty"`
	Error    string   `json:"error,omitempty"`
	Tail     []string `json:"tail,omitempty" jsonschema:"the last lines of its output, when it ended"`
	Rows     int64    `json:"rows" jsonschema:"how many output rows it has: output with cursor=rows reads only what comes next"`
	// StartCursor is where this start's output begins in the log.
	StartCursor int64  `json:"start_cursor" jsonschema:"the rows before this start of the service, which the log keeps from an earlier start of the name: output reads from here when given no cursor"`
	Summary     string `json:"summary"`
	// ProxyURL is its stable URL through svc proxy, when the proxy runs.
	ProxyURL string `json:"proxy_url,omitempty" jsonschema:"its stable URL through svc proxy (NAME.localhost, NAME.WORKTREE.localhost, or NAME.PROJECT.localhost when another project has a NAME), when the proxy runs"`
	Worktree string `json:"worktree,omitempty" jsonschema:"the slug of the git worktree it runs in"`
	Slot     *int   `json:"slot,omitempty" jsonschema:"its worktree's slot: unique among the live worktrees of the repository"`
	// Restarted, Unhealthy and Change: see watched.go.
	Restarted *svc.Restarted `json:"restarted,omitempty" jsonschema:"its restarts by cause (crash, unhealthy, change), when it has had one not from a crash"`
	Unhealthy string         `json:"unhealthy,omitempty" jsonschema:"why its health probes find it unhealthy"`
	Change    *ChangeOut     `json:"last_change,omitempty" jsonschema:"what caused its last restart on a change of files"`
}

func (s *Server) start(ctx context.Context, _ *mcp.CallToolRequest, in StartIn) (*mcp.CallToolResult, StartOut, error) {
	cwd := in.Cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	var env []string
	for k, v := range in.Env {
		if k == "" || strings.Contains(k, "=") {
			return nil, StartOut{}, fmt.Errorf("%q is not an environment variable's name", k)
		}
		env = append(env, k+"="+v)
	}
	if err := notNegative("ready_timeout_seconds", in.ReadyTimeoutSeconds); err != nil {
		return nil, StartOut{}, err
	}
	port, err := portArg(in.Port)
	if err != nil {
		return nil, StartOut{}, err
	}
	readyTimeout := time.Duration(in.ReadyTimeoutSeconds * float64(time.Second))
	switch {
	case readyTimeout > 0:
	case in.Pty && port == "":
		// A REPL or a debugger, to type into: nothing to wait for.
		readyTimeout = ptySettle
	default:
		readyTimeout = 30 * time.Second
	}
	res, err := svc.Start(ctx, svc.StartOptions{Home: s.Home, Scope: s.Scope, Name: in.Name, Port: port,
		Settle: readyTimeout + 2*time.Second,
		Spec: svc.Spec{Command: []string{in.Command}, Cwd: cwd, Env: env, ReadyTimeout: readyTimeout, UntilExit: s.UntilExit,
			StopSignal: in.StopSignal, PTY: ptySize(in.Pty)}})
	if err != nil && res == nil {
		return nil, StartOut{}, s.word(err)
	}
	out := s.startOut(res)
	if res.Status == svc.Exited || res.Status == svc.Failed {
		// The service is not there to use: say so as a tool error, with
		// what it printed.
		return nil, StartOut{}, errors.New(out.Summary)
	}
	return nil, out, nil
}

func (s *Server) startOut(r *svc.StartResult) StartOut {
	r.Name = s.short(r.Name)
	out := StartOut{Name: r.Name, Status: string(r.Status), PID: r.PID, URL: r.URL, Port: r.Port, Ports: r.Ports, ExitCode: r.ExitCode,
		Signal: r.Signal, Error: r.Error, Tail: r.Tail, Summary: startSummary(r)}
	d := svc.Dir{Home: s.Home, Name: s.full(r.Name)}
	out.Rows, _ = logfile.LastRow(d.Path())
	if l, err := svc.Look(d); err == nil {
		out.StartCursor = l.LogFrom
		if l.Status == svc.Ready {
			out.ProxyURL = svc.LookProxied(s.Home).URL(l)
		}
		if wt := l.Spec.Worktree; wt != nil {
			out.Worktree, out.Slot = wt.Slug, &wt.Slot
		}
	}
	return out
}

// word is an operation's error as the tools say it: in their own terms,
// with names as they show them.
func (s *Server) word(err error) error {
	var (
		taken      *svc.TakenError
		field      *svc.FieldError
		notMonitor *svc.NotMonitorError
	)
	switch {
	case errors.As(err, &taken) && taken.PID != 0:
		return fmt.Errorf("%s lost its monitor but its process %d still runs", s.short(taken.Name), taken.PID)
	case errors.As(err, &taken):
		return fmt.Errorf("a service called %s is running", s.short(taken.Name))
	case errors.As(err, &field) && field.Field == "command":
		return errors.New("command is empty")
	case errors.As(err, &field) && field.Field == "cwd":
		return fmt.Errorf("cwd %s is not a directory", field.Value)
	case errors.As(err, &field) && field.Field == "port":
		return fmt.Errorf("port is auto or a port number, not %q", field.Value)
	case errors.As(err, &field) && field.Field == "stopSignal":
		return fmt.Errorf("stop_signal %q is not a signal that stops a process (TERM, INT, QUIT, HUP, USR1, USR2, KILL, or a number)", field.Value)
	case errors.As(err, &field) && field.Field == "untilExit":
		return fmt.Errorf("the process these services are tied to (pid %s): %v", field.Value, field.Err)
	case errors.As(err, &notMonitor):
		return fmt.Errorf("cannot reach the monitor of %s: process %d of uid %d holds its socket and is not the monitor, so nothing was sent; the service may still be running",
			s.short(notMonitor.Name), notMonitor.PID, notMonitor.UID)
	}
	return errors.New(s.unscoped(err.Error()))
}

// unscoped is a message with the scope's prefix taken off the names in it.
func (s *Server) unscoped(msg string) string {
	if s.Scope == "" {
		return msg
	}
	return strings.ReplaceAll(msg, s.Scope+"/", "")
}

func (s *Server) full(short string) string {
	if s.Scope != "" {
		return s.Scope + "/" + short
	}
	return short
}

// OutputIn is the output tool's input.
type OutputIn struct {
	Name     string `json:"name"`
	Cursor   *int64 `json:"cursor,omitempty" jsonschema:"the rows already seen: the next_cursor of the last call; none: from the beginning of this start's output (start_cursor); 0: from the first row the log keeps, an earlier start's of the same name included"`
	MaxRows  int    `json:"max_rows,omitempty" jsonschema:"at most this many rows (default 100, at most 1000)"`
	MaxBytes int    `json:"max_bytes,omitempty" jsonschema:"at most this many bytes of rows (default 8192, at most 65536)"`
}

// Row is one row of output.
type Row struct {
	Row  int64  `json:"row"`
	Line string `json:"line"`
}

// OutputOut is a page of a service's output.
type OutputOut struct {
	Rows       []Row  `json:"rows" jsonschema:"the rows, as plain text: terminal escape sequences (colours, cursor moves) are left out here, not in the log"`
	NextCursor int64  `json:"next_cursor" jsonschema:"pass this as cursor to read what comes after"`
	More       bool   `json:"more" jsonschema:"rows after next_cursor are already there"`
	Skipped    int64  `json:"skipped,omitempty" jsonschema:"rows after cursor that log rotation removed before they were read"`
	Ended      bool   `json:"ended" jsonschema:"the service has ended: no more rows will come"`
	Status     string `json:"status"`
	// StartCursor: see StartOut.
	StartCursor int64 `json:"start_cursor" jsonschema:"rows up to this one are from an earlier start of the service's name"`
	// Unfinished is output after the last row whose newline has not come.
	Unfinished string `json:"unfinished,omitempty" jsonschema:"what it printed after its last row with no newline yet (a prompt such as >>> , a progress line): not a row; once its line ends it comes whole as the next row"`
}

// errPageFull stops reading rows once a page is full.
var errPageFull = errors.New("page full")

func (s *Server) output(_ context.Context, _ *mcp.CallToolRequest, in OutputIn) (*mcp.CallToolResult, OutputOut, error) {
	d, err := s.dir(in.Name)
	if err != nil {
		return nil, OutputOut{}, err
	}
	for _, a := range []struct {
		name string
		n    int
	}{{"max_rows", in.MaxRows}, {"max_bytes", in.MaxBytes}} {
		if err := notNegative(a.name, float64(a.n)); err != nil {
			return nil, OutputOut{}, err
		}
	}
	l, err := svc.Look(d)
	if err != nil {
		return nil, OutputOut{}, err
	}
	last, _ := logfile.LastRow(d.Path())
	cursor := min(l.LogFrom, last)
	if in.Cursor != nil {
		cursor = *in.Cursor
	}
	switch {
	case cursor < 0:
		return nil, OutputOut{}, errors.New("cursor cannot be negative")
	case cursor > last:
		return nil, OutputOut{}, fmt.Errorf("cursor %d is past the last row, %d: pass the next_cursor an output call returned", cursor, last)
	}
	rows := bound(in.MaxRows, defaultRows, maxRows)
	budget := bound(in.MaxBytes, defaultBytes, maxBytes)
	out := OutputOut{Rows: []Row{}, NextCursor: cursor, Status: string(l.Status), Ended: !l.Status.Live(), StartCursor: l.LogFrom}
	// A row is read no further than a tool shows it: a 300 MB line costs
	// the answer its first bytes, not 300 MB.
	_, err = svc.ReadRowsUpTo(d, cursor, maxLine+utf8.UTFMax, func(r svc.Row) error {
		line := clip(r.Line, r.Size)
		if len(out.Rows) == rows || len(out.Rows) > 0 && budget-len(line) < 0 {
			out.More = true
			return errPageFull
		}
		if len(out.Rows) == 0 && r.N > cursor+1 {
			out.Skipped = r.N - cursor - 1
		}
		budget -= len(line)
		out.Rows = append(out.Rows, Row{Row: r.N, Line: line})
		out.NextCursor = r.N
		return nil
	})
	if err != nil && !errors.Is(err, errPageFull) {
		return nil, OutputOut{}, err
	}
	if !out.More {
		if text, cut, err := logfile.Unfinished(d.Path(), maxLine); err == nil && len(text) > 0 {
			out.Unfinished = plain(text)
			if cut {
				out.Unfinished = "… " + out.Unfinished
			}
		}
	}
	return nil, out, nil
}

// clip is a row as a tool shows it: plain text (plain), at most maxLine
// bytes of its size (of which b is the first bytes, or all).
func clip(b []byte, size int64) string {
	if size <= maxLine {
		return plain(b)
	}
	cut := min(maxLine, len(b))
	for cut > 0 && cut < len(b) && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return plain(b[:cut]) + fmt.Sprintf(" … [%d more bytes]", size-int64(cut))
}

// plain is output as a model reads it: valid UTF-8, without terminal
// escape sequences (colours, a REPL's cursor moves under a pty) or a
// terminal's carriage return at the end of a line. The log keeps them.
func plain(b []byte) string {
	return strings.TrimSuffix(ready.StripANSI(strings.ToValidUTF8(string(b), "\uFFFD")), "\r")
}

// portArg is start's port as svc.Start takes it: "auto", a port number
// given as a string or as a JSON number, or "" for none. What it is, is
// svc.Start's to check (a *svc.PortError names it).
func portArg(v any) (string, error) {
	switch p := v.(type) {
	case nil:
		return "", nil
	case string:
		return p, nil
	case float64:
		if p == math.Trunc(p) && math.Abs(p) < 1<<31 {
			return strconv.Itoa(int(p)), nil
		}
	}
	return "", fmt.Errorf("port is auto or a port number, not %v", v)
}

// ptySettle is how long start waits for a service with a terminal and no
// port (a REPL) before it answers: it is there to be typed into.
const ptySettle = 2 * time.Second

// notNegative refuses a negative number for an argument whose 0 (or
// absence) means its default: -1 is a mistake, not a wish for the default.
func notNegative(arg string, n float64) error {
	if n < 0 {
		return fmt.Errorf("%s cannot be negative (%g); leave it out for the default", arg, n)
	}
	return nil
}

func bound(n, def, most int) int {
	if n <= 0 {
		return def
	}
	return min(n, most)
}

// NameIn names one service.
type NameIn struct {
	Name string `json:"name"`
}

// StopOut is what a stop did.
type StopOut struct {
	Name      string  `json:"name"`
	Stopped   bool    `json:"stopped" jsonschema:"false when it was not running"`
	Processes int     `json:"processes,omitempty" jsonschema:"processes signalled"`
	SIGKILL   bool    `json:"sigkill,omitempty" jsonschema:"some ignored SIGTERM and were killed"`
	ElapsedMs float64 `json:"elapsed_ms"`
	Summary   string  `json:"summary"`
}

func (s *Server) stop(_ context.Context, _ *mcp.CallToolRequest, in NameIn) (*mcp.CallToolResult, StopOut, error) {
	d, err := s.dir(in.Name)
	if err != nil {
		return nil, StopOut{}, err
	}
	rep, err := svc.Stop(d, 0)
	if err != nil {
		return nil, StopOut{}, s.word(err)
	}
	rep.Name = s.short(rep.Name)
	out := StopOut{Name: rep.Name, Stopped: !rep.NotRunning, Processes: len(rep.Signalled), SIGKILL: rep.SIGKILL, ElapsedMs: rep.ElapsedMs,
		Summary: stopSummary(rep)}
	if len(rep.StillAlive) > 0 {
		return nil, StopOut{}, errors.New(out.Summary)
	}
	return nil, out, nil
}

func (s *Server) status(_ context.Context, _ *mcp.CallToolRequest, in NameIn) (*mcp.CallToolResult, StartOut, error) {
	d, err := s.dir(in.Name)
	if err != nil {
		return nil, StartOut{}, err
	}
	l, err := svc.Look(d)
	if err != nil {
		return nil, StartOut{}, err
	}
	return nil, s.standing(d, l, svc.LookProxied(s.Home)), nil
}

func (s *Server) standing(d svc.Dir, l *svc.Listing, proxy svc.Proxied) StartOut {
	out := StartOut{Name: s.short(l.Name), Status: string(l.Status), URL: l.URL, Port: l.Port, Ports: l.Ports, ExitCode: l.ExitCode,
		Signal: l.Signal, Error: l.Error}
	if l.Status.Live() {
		out.PID = l.PID
	}
	if out.Port == 0 {
		out.Port = l.Spec.Port
	}
	out.Rows, _ = logfile.LastRow(d.Path())
	out.StartCursor = l.LogFrom
	if l.Status == svc.Ready {
		out.ProxyURL = proxy.URL(l)
	}
	if wt := l.Spec.Worktree; wt != nil {
		out.Worktree, out.Slot = wt.Slug, &wt.Slot
	}
	l.Name = out.Name
	watched(&out, l)
	out.Summary = statusSummary(l, time.Now())
	if !l.Status.Live() && (l.Status == svc.Exited || l.Status == svc.Failed) {
		out.Tail = svc.EndTail(d, &l.State)
	}
	return out
}

// ListOut is every service the tools see.
type ListOut struct {
	Services []StartOut `json:"services"`
}

func (s *Server) list(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, ListOut, error) {
	names, err := s.names()
	if err != nil {
		return nil, ListOut{}, err
	}
	out := ListOut{Services: []StartOut{}}
	proxy := svc.LookProxied(s.Home)
	for _, n := range names {
		d := svc.Dir{Home: s.Home, Name: n}
		if l, err := svc.Look(d); err == nil {
			st := s.standing(d, l, proxy)
			st.Tail = nil
			out.Services = append(out.Services, st)
		}
	}
	return nil, out, nil
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// WhoIn is the who tool's input.
type WhoIn struct {
	Port int `json:"port" jsonschema:"the TCP port"`
}

// WhoOut is who holds a port.
type WhoOut struct {
	Port      int    `json:"port"`
	Listening bool   `json:"listening" jsonschema:"something listens on the port"`
	PID       int    `json:"pid,omitempty"`
	Comm      string `json:"comm,omitempty"`
	Service   string `json:"service,omitempty" jsonschema:"the service whose process tree holds it; empty when it belongs to no service"`
	Worktree  string `json:"worktree,omitempty"`
	Slot      *int   `json:"slot,omitempty"`
	Scope     string `json:"scope,omitempty"`
	Summary   string `json:"summary"`
}

func (s *Server) who(_ context.Context, _ *mcp.CallToolRequest, in WhoIn) (*mcp.CallToolResult, WhoOut, error) {
	if in.Port < 1 || in.Port > 65535 {
		return nil, WhoOut{}, fmt.Errorf("%d is not a port", in.Port)
	}
	u := svc.Who(s.Home, in.Port)
	outside := false
	if s.Scope != "" && u.Service != "" {
		// Outside the scope, a service is nobody's business here but that
		// it is one.
		if !strings.HasPrefix(u.Service, s.Scope+"/") {
			outside = true
			*u = svc.PortUse{Port: u.Port, Listening: u.Listening, PID: u.PID, Comm: u.Comm}
		} else {
			u.Service, u.Scope = s.short(u.Service), ""
		}
	}
	out := WhoOut{Port: u.Port, Listening: u.Listening, PID: u.PID, Comm: u.Comm, Service: u.Service, Scope: u.Scope}
	if u.Worktree != nil {
		out.Worktree, out.Slot = u.Worktree.Slug, &u.Worktree.Slot
	}
	switch {
	case u.Service != "" && !u.Given:
		out.Summary = fmt.Sprintf("port %d is held by pid %d (%s) of service %s", u.Port, u.PID, u.Comm, u.Service)
		if u.Worktree != nil {
			out.Summary += fmt.Sprintf(" in worktree %s (slot %d)", u.Worktree.Slug, u.Worktree.Slot)
		}
		out.Summary += ": stop it with stop, if it is yours to stop"
	case outside && u.PID != 0:
		out.Summary = fmt.Sprintf("port %d is held by pid %d (%s) of a service outside this scope: it is not yours to stop; pick another port (start with port auto)", u.Port, u.PID, u.Comm)
	case u.Given:
		out.Summary = fmt.Sprintf("nothing listens on port %d yet; it is given to %s, which is starting", u.Port, u.Service)
	case u.PID != 0:
		out.Summary = fmt.Sprintf("port %d is held by pid %d (%s), which is no service: it is not yours to kill; pick another port (start with port auto)", u.Port, u.PID, u.Comm)
	case u.Listening:
		out.Summary = fmt.Sprintf("port %d is held by a process this user cannot see: pick another port (start with port auto)", u.Port)
	default:
		out.Summary = fmt.Sprintf("nothing listens on port %d", u.Port)
	}
	return nil, out, nil
}
