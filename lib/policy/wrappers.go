package policy

import (
	"path/filepath"
	"slices"
	"strings"
)

// wrapper is a program that runs the command after its options (and a
// few operands): env A=1 CMD, nice -n 5 CMD, timeout 3 CMD, sudo -u x CMD.
type wrapper struct {
	short    string // its one-letter options without a value
	shortArg string // and with one (-n 5, -n5)
	long     string // its long options without a value, space-separated
	longArg  string // and with one (--user x, --user=x)
	operands int    // words between its options and the command (timeout's duration)
	assigns  bool   // NAME=VALUE words before the command (env)
	digits   bool   // -5 is an option (nice)
	// stop: a one-letter option with which it runs no command
	// (command -v, sudo -l): nothing past it is read as a command.
	stop string
	// unreadable: a one-letter option agentry cannot see through (env -S,
	// and env -i, which drops the guard agentry gives git); unreadableLong,
	// a long one.
	unreadable, unreadableLong string
	// unsets: its option (one letter and long) whose value is a variable
	// it unsets (env -u NAME): one of git's is a line agentry cannot read.
	unsets, unsetsLong string
	// rest: the command gets more words agentry cannot see (xargs's
	// from its input).
	rest bool
	// dflt: the command it runs when none is given (xargs: echo).
	dflt string
	// line: its command's words are joined and run as a shell line (watch).
	line bool
	// replace: the one-letter options whose value is a string it
	// replaces, in its command's words, with what it reads (xargs -I R);
	// replaceOpt a one-letter option whose value, attached or else {},
	// is one (xargs -i[R]); replaceLong a long one (--replace[=R]).
	replace, replaceOpt, replaceLong string
	// repl is the string an option set, "" when none; the string the
	// wrapper replaces without one (parallel: {, as in {} and {.}).
	repl string
	// inputs: its command ends at ::: (parallel's arguments), and with
	// none it runs what it reads as command lines.
	inputs bool
	// permute: its options may come after its operands too (ssh host -p
	// 22 CMD, flock FILE -c LINE).
	permute bool
	// lineOpt: one-letter options whose value is a shell line it runs
	// (flock -c LINE); lineLong, long ones (--command LINE).
	lineOpt, lineLong string
	// pkg: its command is a package, its version after an @ (npx
	// npm@10 publish runs npm publish).
	pkg bool
}

// wrapperOf is the wrapper a program's base name is, or nil.
func wrapperOf(name string) *wrapper {
	switch name {
	case "env":
		return &wrapper{short: "0v", shortArg: "uC", long: "null debug block-signal default-signal ignore-signal list-signal-handling",
			longArg: "unset chdir", assigns: true, unreadable: "Si", unreadableLong: "ignore-environment split-string", unsets: "u", unsetsLong: "unset"}
	case "nice":
		return &wrapper{shortArg: "n", longArg: "adjustment", digits: true}
	case "timeout":
		return &wrapper{short: "v", shortArg: "sk", long: "preserve-status foreground verbose", longArg: "signal kill-after", operands: 1}
	case "nohup":
		return &wrapper{}
	case "command":
		return &wrapper{short: "p", stop: "vV"}
	case "builtin":
		return &wrapper{}
	case "exec":
		return &wrapper{short: "cl", shortArg: "a"}
	case "sudo":
		return &wrapper{short: "AbEHiKknPSsBN", shortArg: "CDghpRrTtUu", stop: "elvKV",
			long:    "askpass background bell login non-interactive preserve-env preserve-groups reset-timestamp set-home shell stdin",
			longArg: "chdir chroot close-from command-timeout group host other-user prompt role type user"}
	case "doas":
		return &wrapper{short: "ns", shortArg: "uC"}
	case "stdbuf":
		return &wrapper{shortArg: "ioe", longArg: "input output error"}
	case "time":
		return &wrapper{short: "apqv", shortArg: "fo", long: "append portability quiet verbose", longArg: "format output"}
	case "setsid":
		return &wrapper{short: "cfw", long: "ctty fork wait"}
	case "ionice":
		return &wrapper{short: "t", shortArg: "cn", stop: "pPu", long: "ignore", longArg: "class classdata"}
	case "taskset":
		return &wrapper{short: "ac", stop: "p", long: "all-tasks cpu-list", operands: 1}
	case "chroot":
		return &wrapper{longArg: "groups userspec", long: "skip-chdir", operands: 1}
	case "ssh":
		// the command after the host runs there, as a shell line
		return &wrapper{short: "46AaCfGgKkMNnqsTtVvXxYy", shortArg: "BbcDEeFIiJLlmOoPpQRSWw", operands: 1, line: true, permute: true}
	case "docker exec", "podman exec":
		return &wrapper{short: "dit", shortArg: "euw", long: "detach interactive tty privileged",
			longArg: "detach-keys env env-file user workdir", operands: 1}
	case "cross-env":
		return &wrapper{assigns: true}
	case "uv run", "poetry run", "pipenv run", "bundle exec", "npm exec", "pnpm exec", "yarn exec", "direnv exec",
		"npx", "pnpx", "bunx", "pnpm dlx", "yarn dlx", "npm x", "bun x":
		// their options are many and change: an unknown one is read both ways
		w := &wrapper{}
		switch name {
		case "direnv exec":
			w.operands = 1
		case "npx", "pnpx", "bunx", "pnpm dlx", "yarn dlx", "npm exec", "pnpm exec", "yarn exec", "npm x", "bun x":
			w.pkg = true
			w.lineOpt, w.lineLong = "c", "call" // npm exec -c LINE runs LINE
		}
		return w
	case "unbuffer", "eatmydata", "torsocks", "proxychains", "proxychains4", "catchsegv", "valgrind", "firejail", "rlwrap":
		// their options are many: an unknown one is read both ways
		return &wrapper{}
	case "flock":
		return &wrapper{short: "sxeunoFv", shortArg: "wE", long: "shared exclusive unlock nonblock close no-fork verbose",
			longArg: "timeout wait conflict-exit-code", operands: 1, permute: true, lineOpt: "c", lineLong: "command"}
	case "strace":
		return &wrapper{short: "cCdDfFhikqrtTvVwxyYzZ", shortArg: "abeEIoOpPsSuUX", long: "follow-forks output-separately summary-only summary",
			longArg: "expr env output attach trace-path string-limit user columns"}
	case "ltrace":
		return &wrapper{short: "bcCfhiLrStTV", shortArg: "aADeFlnopsuwx", long: "demangle", longArg: "align indent library output"}
	case "chrt":
		return &wrapper{short: "abdfioRrv", shortArg: "TPD", stop: "pm", long: "all-tasks batch deadline fifo idle other rr reset-on-fork verbose",
			longArg: "sched-runtime sched-period sched-deadline", operands: 1}
	case "unshare":
		return &wrapper{short: "muinpUCTfrcl", shortArg: "RwSG", long: "mount uts ipc net pid user cgroup time fork map-root-user map-current-user mount-proc kill-child",
			longArg: "propagation setgroups root wd setuid setgid map-user map-group map-users map-groups"}
	case "nsenter":
		return &wrapper{short: "muinpUCTFZarwe", shortArg: "tSG", longArg: "target setuid setgid"}
	case "setpriv":
		return &wrapper{stop: "d", long: "clear-groups keep-groups init-groups no-new-privs reset-env",
			longArg: "ruid euid reuid rgid egid regid groups inh-caps ambient-caps bounding-set securebits pdeathsig selinux-label apparmor-profile landlock-access landlock-rule"}
	case "systemd-run":
		return &wrapper{short: "rqGdtP", shortArg: "pEuMH", stop: "S",
			long:    "user system scope quiet wait pty pipe collect same-dir remain-after-exit no-block no-ask-password send-sighup",
			longArg: "unit property description slice setenv uid gid nice working-directory on-active on-calendar machine host"}
	case "prlimit":
		return &wrapper{stop: "p", longArg: "pid output"}
	case "numactl":
		return &wrapper{short: "la", shortArg: "NmCipPw", stop: "sH", long: "localalloc all", longArg: "cpunodebind membind physcpubind interleave preferred"}
	case "fakeroot":
		return &wrapper{short: "uhv", shortArg: "lisb", longArg: "lib faked"}
	case "faketime":
		return &wrapper{short: "mf", shortArg: "p", operands: 1}
	case "xvfb-run":
		return &wrapper{short: "al", shortArg: "efnpsw", long: "auto-servernum listen-tcp", longArg: "error-file auth-file server-num xauth-protocol server-args wait"}
	case "gosu", "su-exec":
		return &wrapper{operands: 1}
	case "tini", "dumb-init":
		return &wrapper{short: "svglwcV", shortArg: "pre", long: "single-child verbose", longArg: "rewrite"}
	case "busybox":
		return &wrapper{}
	case "xargs":
		return &wrapper{short: "0prtx", shortArg: "adEILnPsJ", long: "null no-run-if-empty interactive verbose exit open-tty",
			longArg: "arg-file delimiter max-lines max-args max-procs max-chars process-slot-var", rest: true, dflt: "echo",
			replace: "IJ", replaceOpt: "i", replaceLong: "replace"}
	case "parallel":
		return &wrapper{short: "0kmquvX", shortArg: "aCdEIjNS", long: "null keep-order group ungroup verbose xargs pipe line-buffer dry-run halt-on-error",
			longArg: "arg-file colsep delimiter jobs max-args sshlogin", rest: true, replace: "I", repl: "{", inputs: true}
	case "watch":
		return &wrapper{short: "bcdegptwx", shortArg: "nq", long: "beep color no-color differences errexit chgexit precise no-title no-wrap no-linewrap exec",
			longArg: "interval equexit", line: true}
	}
	return nil
}

// inList tells whether name is one of a space-separated list.
func inList(list, name string) bool {
	for _, f := range strings.Fields(list) {
		if f == name {
			return true
		}
	}
	return false
}

// unwrap reads a wrapper's words after its name: its options, then the
// command it runs. An option it does not know may or may not take a
// value, so both readings are read.
func (w *wrapper) unwrap(r *reader, ws []word, stdin *word, group, depth int) {
	for i := 0; i < len(ws); i++ {
		if !r.step() {
			return
		}
		v := ws[i].v
		switch {
		case hasHole(v):
			r.call(ws[i:], stdin, group, depth) // an option or a command agentry cannot read
			return
		case v == "--":
			w.run(r, ws[i+1:], stdin, group, depth)
			return
		case w.assigns && isAssign(v):
			name, value, _ := strings.Cut(v, "=")
			r.assign(name, word{v: value, shown: value}, depth)
		case w.assigns && strings.Contains(v, "=") && !strings.HasPrefix(v, "-"):
			// env sets any NAME=VALUE, a name no shell would take (A.B,
			// BASH_FUNC_f%%, none at all) too: what a program makes of
			// it agentry cannot read, and the command is what follows
			r.unreadable(shownOf(ws[i:]), "a variable whose name agentry does not read")
			return
		case strings.HasPrefix(v, "--") && len(v) > 2:
			name, value, hasValue := strings.Cut(v[2:], "=")
			if !hasValue && inList(w.unsetsLong, name) && i+1 < len(ws) {
				value = ws[i+1].v
			}
			switch {
			case inList(w.unreadableLong, name):
				r.unreadable(shownOf(ws), "a wrapper's option agentry cannot see through")
				return
			case inList(w.unsetsLong, name) && gitVar(value):
				r.unreadable(shownOf(ws), unsetsGit)
				return
			case inList(w.lineLong, name):
				if hasValue {
					r.body(word{v: value, shown: value}, depth)
				} else if i+1 < len(ws) {
					r.body(ws[i+1], depth)
				}
				return
			case inList(w.replaceLong, name):
				w.repl = "{}"
				if hasValue {
					w.repl = value
				}
			case hasValue || inList(w.long, name):
			case inList(w.longArg, name):
				i++
			default:
				w.unknown(r, ws[i+1:], stdin, group, depth)
			}
		case len(v) > 1 && v[0] == '-':
			if w.digits && v[1] >= '0' && v[1] <= '9' {
				continue
			}
			for k := 1; k < len(v); k++ {
				c := v[k]
				switch {
				case strings.IndexByte(w.stop, c) >= 0:
					return
				case strings.IndexByte(w.unreadable, c) >= 0:
					r.unreadable(shownOf(ws), "a wrapper's option agentry cannot see through")
					return
				case strings.IndexByte(w.replaceOpt, c) >= 0:
					w.repl = "{}"
					if k < len(v)-1 {
						w.repl = v[k+1:]
					}
				case strings.IndexByte(w.lineOpt, c) >= 0:
					if k < len(v)-1 {
						r.body(word{v: v[k+1:], shown: v[k+1:]}, depth)
					} else if i+1 < len(ws) {
						r.body(ws[i+1], depth)
					}
					return
				case strings.IndexByte(w.shortArg, c) >= 0:
					value := v[k+1:]
					if k == len(v)-1 {
						i++
						if i < len(ws) {
							value = ws[i].v
						}
					}
					if strings.IndexByte(w.unsets, c) >= 0 && gitVar(value) {
						r.unreadable(shownOf(ws), unsetsGit)
						return
					}
					if strings.IndexByte(w.replace, c) >= 0 && value != "" {
						w.repl = value
					}
				case strings.IndexByte(w.short, c) >= 0:
					continue
				default:
					w.unknown(r, ws[i+1:], stdin, group, depth)
				}
				break
			}
		default:
			w.run(r, ws[i:], stdin, group, depth)
			return
		}
	}
	if w.dflt != "" || w.inputs {
		w.run(r, nil, stdin, group, depth)
	}
}

// unsetsGit is why a wrapper's line that unsets one of git's variables
// is one agentry cannot read.
const unsetsGit = "git's settings from the environment, unset, which agentry does not read"

// gitVar tells whether name is a variable git reads (GIT_CONFIG_COUNT,
// GIT_DIR, …): unsetting one may drop what agentry gives git.
func gitVar(name string) bool { return strings.HasPrefix(name, "GIT_") || hasHole(name) }

// unversioned is a package's word without its version: npm@10 is npm,
// @scope/cli@2 is @scope/cli.
func unversioned(w word) word {
	if i := strings.LastIndexByte(w.v, '@'); i > 0 {
		return word{v: w.v[:i], shown: w.shown}
	}
	return w
}

// unknown reads the words after an option agentry does not know as if it
// took the next word as its value (the caller goes on as if it did not).
func (w *wrapper) unknown(r *reader, after []word, stdin *word, group, depth int) {
	switch {
	case len(after) == 0:
	case depth < maxDepth:
		w.unwrap(r, after[1:], stdin, group, depth+1)
	default:
		r.unreadable(shownOf(after), "more options agentry does not know than it reads")
	}
}

// run reads the command a wrapper runs, past its operands.
func (w *wrapper) run(r *reader, ws []word, stdin *word, group, depth int) {
	if len(ws) < w.operands {
		return
	}
	ws = ws[w.operands:]
	if w.permute && w.operands > 0 && len(ws) > 0 && len(ws[0].v) > 1 && ws[0].v[0] == '-' {
		again := *w
		again.operands = 0
		again.unwrap(r, ws, stdin, group, depth+1)
		return
	}
	if w.inputs {
		if i := slices.IndexFunc(ws, func(w word) bool { return strings.HasPrefix(w.v, ":::") }); i >= 0 {
			ws = ws[:i]
		}
		if len(ws) == 0 {
			r.unreadable("parallel", "it runs the lines it reads as commands")
			return
		}
	}
	if len(ws) == 0 && w.dflt != "" {
		ws = []word{{v: w.dflt, shown: w.dflt}}
	}
	ws = replaced(ws, w.repl)
	if w.pkg && len(ws) > 0 {
		ws = append([]word{unversioned(ws[0])}, ws[1:]...)
	}
	if w.rest {
		ws = append(ws[:len(ws):len(ws)], word{v: string(hole), shown: "…"})
	}
	switch {
	case w.line && len(ws) > 0:
		r.body(joinWords(ws), depth)
	case depth < maxDepth:
		r.call(ws, stdin, group, depth+1)
	default:
		r.unreadable(shownOf(ws), "wrappers nested deeper than agentry reads")
	}
}

func isAssign(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return false
	}
	for i, c := range name {
		if c != '_' && (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// pkgManager reads npm (and pnpm, yarn, bun) past the options before its
// command: npm --prefix . publish is npm publish. An option may take the
// next word as its value (--prefix DIR, -w PKG) or not (--force): when
// the word after one could be either, the word after that is read as the
// command too, so that a rule for npm publish matches both ways.
func (r *reader) pkgManager(name word, ws []word, group, depth int) {
	maybeValue := false
	for i := 0; i < len(ws); i++ {
		v := ws[i].v
		switch {
		case hasHole(v):
			r.add(append([]word{name}, ws[i:]...), group, false)
			return
		case v == "--":
			// npm -- publish runs publish
			if i+1 < len(ws) && depth < maxDepth {
				r.call(append([]word{name}, ws[i+1:]...), nil, group, depth+1)
			}
			return
		case strings.HasPrefix(v, "-") && v != "-":
			maybeValue = !strings.Contains(v, "=")
			continue
		}
		if i > 0 {
			// read as a command of its own: npm -s exec CMD is npm exec CMD
			if depth >= maxDepth {
				r.unreadable(shownOf(ws), "commands nested deeper than agentry reads")
				return
			}
			r.call(append([]word{name}, ws[i:]...), nil, group, depth+1)
		}
		if !maybeValue {
			return // after no option, or one with its value: the command
		}
		maybeValue = false // this may have been the value: the next word may be the command
	}
}

// gitLongArg are git's long options before its subcommand that take a
// value as the next word; its others take none, or one after =.
const gitLongArg = "git-dir work-tree namespace super-prefix config-env list-cmds attr-source"

// git reads git past its global options (git -C DIR -c k=v push: git
// push), and what it runs of a command line of its own (rebase --exec,
// bisect run, submodule foreach). An alias set on the command line (-c
// alias.x=…) is a command agentry cannot read.
func (r *reader) git(name word, ws []word, group, depth int) {
	i := 0
	for ; i < len(ws); i++ {
		v := ws[i].v
		switch {
		case hasHole(v):
			r.add(append([]word{name}, ws[i:]...), group, false)
			return
		case v == "-c" || v == "--config-env":
			if i+1 < len(ws) && !r.gitConfig(name, ws, ws[i+1], v != "-c", depth) {
				return
			}
			i++
		case strings.HasPrefix(v, "-c") || strings.HasPrefix(v, "--config-env="):
			kv, env := strings.CutPrefix(v, "--config-env=")
			if !env {
				kv = v[2:]
			}
			if !r.gitConfig(name, ws, word{v: kv, shown: kv}, env, depth) {
				return
			}
		case v == "-C":
			i++
		case strings.HasPrefix(v, "--exec-path="):
			r.unreadable(shownOf(append([]word{name}, ws...)), "git programs from a directory of the line's own, which agentry does not read")
			return
		case v == "--bare" || (v == "--git-dir" || strings.HasPrefix(v, "--git-dir=")) && !gitDirNamed(v, ws[i+1:]):
			// a repository the line names (or the directory it runs in,
			// --bare), whose settings (core.fsmonitor, hooks) name programs
			// git runs: one an agent may have written (a .git it may not:
			// agentry refuses writes in one)
			r.unreadable(shownOf(append([]word{name}, ws...)), "a repository of the line's own, whose settings name programs git runs")
			return
		case strings.HasPrefix(v, "--"):
			n, _, hasValue := strings.Cut(v[2:], "=")
			if !hasValue && inList(gitLongArg, n) {
				i++
			}
		case len(v) > 1 && v[0] == '-':
		default:
			goto sub
		}
	}
	return
sub:
	if i > 0 && !r.add(append([]word{name}, ws[i:]...), group, false) {
		return
	}
	sub, args := ws[i].v, ws[i+1:]
	if slices.ContainsFunc(args, func(a word) bool { return a.v == "--ext-diff" || a.v == "--textconv" }) {
		// the diff program or the text conversion git's settings name,
		// which a repository can set: a command agentry cannot read
		r.unreadable(shownOf(append([]word{name}, ws[i:]...)), "a program of git's settings it runs (--ext-diff, --textconv), which agentry does not read")
		return
	}
	switch sub {
	case "rebase":
		for j, a := range args {
			if (a.v == "-x" || a.v == "--exec") && j+1 < len(args) {
				r.body(args[j+1], depth)
			} else if v, ok := strings.CutPrefix(a.v, "--exec="); ok {
				r.body(word{v: v, shown: v}, depth)
			}
		}
	case "bisect":
		if len(args) > 1 && args[0].v == "run" {
			r.nested(args[1:], depth)
		}
	case "submodule":
		for j, a := range args {
			if a.v == "foreach" {
				rest := args[j+1:]
				for len(rest) > 0 && strings.HasPrefix(rest[0].v, "-") {
					rest = rest[1:]
				}
				if len(rest) > 0 {
					r.body(joinWords(rest), depth)
				}
				break
			}
		}
	}
}

// gitDirNamed tells whether git's --git-dir option (v, the words after it
// in rest) names a directory called .git.
func gitDirNamed(v string, rest []word) bool {
	dir, ok := strings.CutPrefix(v, "--git-dir=")
	if !ok {
		if len(rest) == 0 {
			return true // no value: git says so
		}
		dir = rest[0].v
	}
	return !hasHole(dir) && filepath.Base(filepath.Clean(dir)) == ".git"
}

// gitConfig reads one -c name=value (or --config-env name=VAR, env) of
// git's command line: a value git runs as a shell line (core.editor,
// core.sshCommand, credential.helper's !…) is read as one; false when
// it is what agentry cannot read (an alias, a name the shell computes, a
// command from the environment), recorded as such.
func (r *reader) gitConfig(name word, ws []word, kv word, env bool, depth int) bool {
	key, value, _ := strings.Cut(kv.v, "=")
	key = strings.ToLower(key)
	why := ""
	switch {
	case hasHole(key):
		why = "a git setting agentry cannot read before it runs"
	case strings.HasPrefix(key, "alias."):
		why = "a git alias set on its command line"
	case strings.HasPrefix(key, "safe.") || key == "include.path" || strings.HasPrefix(key, "includeif."):
		why = "git settings of its safety or from another file, which agentry does not read"
	case !isGitCommandKey(key):
		return true
	case env || hasHole(value):
		why = "a command git runs that agentry cannot read before it runs"
	default:
		r.body(word{v: strings.TrimPrefix(value, "!"), shown: kv.shown}, depth)
		return true
	}
	r.unreadable(shownOf(append([]word{name}, ws...)), why)
	return false
}

// isGitCommandKey tells git's settings whose value is a command it runs
// through the shell.
func isGitCommandKey(key string) bool {
	switch key {
	case "core.editor", "sequence.editor", "core.pager", "core.sshcommand", "core.fsmonitor", "diff.external", "gpg.program":
		return true
	}
	parts := strings.Split(key, ".")
	last := parts[len(parts)-1]
	switch parts[0] {
	case "pager", "credential":
		return parts[0] == "pager" || last == "helper"
	case "diff":
		return last == "textconv" || last == "command"
	case "difftool", "mergetool":
		return last == "cmd"
	case "merge":
		return last == "driver"
	case "filter":
		return last == "clean" || last == "smudge" || last == "process"
	case "gpg":
		return last == "program"
	case "remote":
		return last == "receivepack" || last == "uploadpack"
	case "uploadpack":
		return last == "packobjectshook"
	}
	return false
}

func joinWords(ws []word) word {
	c := command{words: ws}
	return word{v: c.text(), shown: c.shown()}
}

// replaced are a command's words with repl, which its runner replaces
// with what it reads (xargs -I {}, find -exec's {}), a hole in each:
// git {} could be git push.
func replaced(ws []word, repl string) []word {
	if repl == "" || !slices.ContainsFunc(ws, func(w word) bool { return strings.Contains(w.v, repl) }) {
		return ws
	}
	out := make([]word, len(ws))
	for i, w := range ws {
		out[i] = w
		if strings.Contains(w.v, repl) {
			out[i].v = strings.ReplaceAll(w.v, repl, string(hole))
		}
	}
	return out
}
