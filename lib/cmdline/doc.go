// Package cmdline reads a command line a person wrote, as svc is given
// one: its simple commands and their words with the shell's quoting, syntax
// and plumbing set aside (shellwords.go), the command it runs past wrappers
// such as env, nice or sh -c, what that command is — a server, a watcher or
// a one-shot (classify.go) — and the name a person would give it (name.go);
// and argv back as a shell line to show. It reads text only: it runs
// nothing and knows no service.
package cmdline
