// Package svc is the service model and its operations: a service's spec
// (Spec, and its one check, Spec.Check), its name, its recorded state
// (state.json, written atomically), its lock, the contract with its
// monitor (wire.go: what svc start hands the monitor, what the monitor
// reports, the requests it answers), and the operations every face of
// svc shares — Start, Stop, Restart, Look, Follow, WaitReady, Port, Run
// (svc run: the foreground run that never hangs, or a start) — and the
// names of projects and scopes.
//
// Every service has a directory under the state home holding state.json,
// its log generations (lib/svc/logfile) and a lock file that its monitor
// (lib/svc/monitor, the program svc-monitor) holds for its whole life: a
// held lock is how every operation knows the service is supervised. The
// monitor also listens on an abstract unix socket named from the
// directory, for stop requests. Readiness is lib/svc/ready's.
//
// The package prints nothing and names no flag and no exit status: its
// errors are typed (errors.go), and each face words them for its reader —
// svc's command line (lib/svc/svccmd), the MCP server
// (lib/svc/mcpserver), runagent.
package svc
