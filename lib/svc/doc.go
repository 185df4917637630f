// Package svc is the service model and its operations: a service's spec
// (Spec, and its one check, Spec.Check), its name, its recorded state
// (state.json, written atomically), its lock, the contract with its
// monitor (wire.go: what svc start hands the monitor, what the monitor
// reports, the requests it answers), and the operations every face of
// svc shares — Start, Stop, Restart, Look, Follow, WaitReady, Port, Run
// (svc run: the foreground run that never hangs, or a start), GC — and
// the rules of the names of projects and scopes.
//
// Every service has a directory under the state home holding state.json,
// its log generations (lib/svc/logfile) and a lock file that its monitor
// (lib/svc/monitor, the program svc-monitor) holds for its whole life: a
// held lock is how every operation knows the service is supervised. The
// monitor also listens on an abstract unix socket, whose name it records
// in state.json, for stop requests. Readiness is lib/svc/ready's.
//
// What the home keeps of places rather than services — the worktrees
// svc has met (their slots, slugs and port blocks) and the names given
// to projects and scopes — is lib/svc/registry's, the one reader and
// writer of those files; Registry is the home's, written in only once the
// home is found safe.
//
// The package prints nothing and names no flag and no exit status: its
// errors are typed (errors.go), and each face words them for its reader —
// svc's command line (lib/svc/svccmd), the MCP server
// (lib/svc/mcpserver), runagent.
package svc
