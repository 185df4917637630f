package cmdline

import (
	"path/filepath"
	"slices"
	"strings"
)

// Name is the name a person would give what a command runs, as svc(1)'s
// table of examples shows: the script of a package manager's run (npm run
// dev: dev), the tool of npx (npx vite: vite), the module of python -m,
// the script an interpreter runs (node server.js: server), the package of
// go run (go run .: cwd's base name, the module's directory), the command
// inside sh -c, else the program's base name. Never an option or an
// option's value, never a word after "--", never the shell's own syntax
// (while, done) nor a wrapper (nice, timeout, sudo). A command of one word
// is a shell line, read as its last command; a longer one is the program
// and its arguments, read past the same wrappers (env FOO=1 prog: prog).
// A ':' or a space in it (build:watch, a file's name) becomes '-'; what
// else a name may hold is the caller's rule. "" when nothing names it.
func Name(argv []string, cwd string) string {
	return strings.NewReplacer(":", "-", " ", "-").Replace(commandName(Words(argv), cwd))
}

// Words is the command argv runs, past its wrappers: for one word, the
// last command of that shell line.
func Words(argv []string) []string {
	switch len(argv) {
	case 0:
		return nil
	case 1:
		return lastCommand(argv[0])
	}
	return skipWrappers(argv)
}

// commandName names the command of words (past wrappers), run in cwd.
func commandName(words []string, cwd string) string {
	if len(words) == 0 {
		return ""
	}
	if strings.HasPrefix(words[0], "-") {
		return ""
	}
	prog := toolName(words[0])
	// sub is the first word past the options a package manager takes
	// before its command, all what follows it, "--" included (npm exec
	// -- vite runs vite); args and rest stop at a "--", after which come
	// the program's own arguments, never its name.
	sub, all := firstArg(words[1:], "--prefix", "--cwd", "-C", "--dir", "--filter", "-F", "--workspace", "-w")
	args, rest := beforeDashes(words[1:]), beforeDashes(all)
	switch prog {
	case "sh", "bash", "dash", "zsh", "ksh", "ash":
		return scriptOr(prog, args) // sh start.sh (sh -c is read past as a wrapper)
	case "npm", "pnpm", "yarn", "bun":
		return packageManagerName(prog, sub, rest, all)
	case "deno":
		if sub == "task" {
			return orProg(prog, first(rest))
		}
		if sub == "run" || sub == "serve" {
			return scriptOr(prog, rest)
		}
		return prog
	case "go":
		if sub == "run" {
			pkg := first(skipOptions(rest, "-tags", "-ldflags", "-gcflags", "-C", "-o", "-exec"))
			if (pkg == "." || pkg == "./") && filepath.IsAbs(cwd) {
				return orProg(prog, filepath.Base(cwd)) // go run .: the module's directory
			}
			return orProg(prog, scriptBase(pkg))
		}
		return prog
	case "node", "nodejs", "ts-node", "tsx", "nodemon", "ruby", "perl":
		return scriptOr(prog, interpreterArgs(args, []string{"-e", "--eval", "-p", "--print", "-"}, "-r", "--require", "--import", "--loader", "--exec", "-I"))
	case "busybox":
		return orProg(prog, sub) // busybox httpd: httpd
	case "php":
		return scriptOr(prog, interpreterArgs(args, []string{"-r", "-R", "-B", "-E", "-"}, "-S", "-t", "-c", "-d"))
	}
	if isPython(prog) {
		return pythonName(prog, args)
	}
	return prog
}

// packageManagerName names what npm, pnpm, yarn or bun runs: the script
// of sub (its first word that is not an option), the tool of its exec or
// dlx (from all, sub's words with a "--"), else the package manager.
func packageManagerName(prog, sub string, rest, all []string) string {
	tool := func() string { return orProg(prog, toolName(first(skipOptions(all, "-p", "--package")))) }
	if prog == "npm" {
		switch sub {
		case "run", "run-script", "rum", "urn":
			return orProg(prog, first(rest))
		case "start", "test", "stop", "restart":
			return sub
		case "exec", "x":
			return tool()
		}
		return prog
	}
	switch {
	case sub == "run":
		return orProg(prog, scriptBase(first(rest)))
	case sub == "dlx" || sub == "exec" || sub == "x":
		return tool()
	case sub == "workspace" && prog == "yarn":
		return orProg(prog, first(rest)) // yarn workspace web dev: web
	case sub == "" || isPackageManagerCommand(sub):
		return prog
	}
	return orProg(prog, scriptBase(sub)) // pnpm dev, yarn dev, bun server.ts
}

// isPackageManagerCommand tells a package manager's own command from a
// script's name: pnpm install is not a script, pnpm dev is.
func isPackageManagerCommand(sub string) bool {
	switch sub {
	case "install", "i", "add", "remove", "rm", "uninstall", "update", "up", "upgrade", "ci",
		"link", "unlink", "publish", "pack", "why", "list", "ls", "outdated", "audit", "rebuild", "prune",
		"store", "init", "create", "config", "import", "patch", "pm", "info", "view", "cache", "help", "build":
		return true
	}
	return false
}

// interpreterArgs are an interpreter's arguments from its script on, or
// nil when one of its options evals says it runs code given inline or on
// stdin (node -e, php -r); options named in withValue take the next word.
func interpreterArgs(args, evals []string, withValue ...string) []string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case slices.Contains(evals, a):
			return nil
		case slices.Contains(withValue, a):
			i++
		case !strings.HasPrefix(a, "-"):
			return args[i:]
		}
	}
	return nil
}

// pythonName names python's command: the module of -m (python -m
// http.server: http.server), the script's base name, else python.
func pythonName(prog string, args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-m" && i+1 < len(args):
			return args[i+1]
		case strings.HasPrefix(a, "-m") && len(a) > 2 && !strings.HasPrefix(a, "--"):
			return a[2:]
		case a == "-c" || a == "-":
			return prog
		case a == "-W" || a == "-X" || a == "--check-hash-based-pycs":
			i++
		case !strings.HasPrefix(a, "-"):
			return scriptOr(prog, args[i:])
		}
	}
	return prog
}

func isPython(prog string) bool {
	if prog == "pypy" || prog == "pypy3" {
		return true
	}
	v, ok := strings.CutPrefix(prog, "python")
	return ok && strings.Trim(v, "0123456789.") == ""
}

// firstArg is the first word that is not an option, and the words after
// it; options named in withValue take the next word.
func firstArg(args []string, withValue ...string) (string, []string) {
	rest := skipOptions(args, withValue...)
	if len(rest) == 0 {
		return "", nil
	}
	return rest[0], rest[1:]
}

// beforeDashes is words up to a "--".
func beforeDashes(words []string) []string {
	if i := slices.Index(words, "--"); i >= 0 {
		return words[:i]
	}
	return words
}

// first is the first word that is not an option, or "".
func first(args []string) string {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// scriptOr is the base name of the script first in args, else prog.
func scriptOr(prog string, args []string) string {
	return orProg(prog, scriptBase(first(args)))
}

// orProg is name, or prog when name is no name: empty, a directory of
// dots, or a number (the value of an option not known to take one, as
// in bun --port 3000 server.ts).
func orProg(prog, name string) string {
	if name == "" || name == "." || name == ".." || name == "/" || strings.Trim(name, "0123456789") == "" {
		return prog
	}
	return name
}

// scriptBase is a script's or package's base name without the extension
// of a script (server.js, app.py, ./cmd/api: server, app, api); any
// other word is kept whole.
func scriptBase(w string) string {
	if w == "" {
		return ""
	}
	b := filepath.Base(strings.TrimRight(w, "/"))
	switch ext := filepath.Ext(b); ext {
	case ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx", ".py", ".rb", ".pl", ".php", ".sh", ".go":
		b = strings.TrimSuffix(b, ext)
	}
	return b
}

// toolName is a program's or package's base name without a version:
// /usr/bin/vite, create-vite@5, @angular/cli@17: vite, create-vite, cli.
func toolName(w string) string {
	w = filepath.Base(w)
	if i := strings.IndexByte(w, '@'); i > 0 {
		w = w[:i]
	}
	return w
}
