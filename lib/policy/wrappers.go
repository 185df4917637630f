package policy

import "strings"

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
	// unreadable: a one-letter option agentry cannot see through (env -S).
	unreadable string
	// rest: the command gets more words agentry cannot see (xargs's
	// from its input).
	rest bool
	// dflt: the command it runs when none is given (xargs: echo).
	dflt string
	// line: its command's words are joined and run as a shell line (watch).
	line bool
}

var wrappers = map[string]*wrapper{
	"env": {short: "i0v", shortArg: "uC", long: "ignore-environment null debug block-signal default-signal ignore-signal list-signal-handling",
		longArg: "unset chdir", assigns: true, unreadable: "S"},
	"nice":    {shortArg: "n", longArg: "adjustment", digits: true},
	"timeout": {short: "v", shortArg: "sk", long: "preserve-status foreground verbose", longArg: "signal kill-after", operands: 1},
	"nohup":   {},
	"command": {short: "p", stop: "vV"},
	"builtin": {},
	"exec":    {short: "cl", shortArg: "a"},
	"sudo": {short: "AbEHiKknPSsBN", shortArg: "CDghpRrTtUu", stop: "elvKV",
		long:    "askpass background bell login non-interactive preserve-env preserve-groups reset-timestamp set-home shell stdin",
		longArg: "chdir chroot close-from command-timeout group host other-user prompt role type user"},
	"doas":     {short: "ns", shortArg: "uC"},
	"stdbuf":   {shortArg: "ioe", longArg: "input output error"},
	"time":     {short: "apqv", shortArg: "fo", long: "append portability quiet verbose", longArg: "format output"},
	"setsid":   {short: "cfw", long: "ctty fork wait"},
	"ionice":   {short: "t", shortArg: "cn", stop: "pPu", long: "ignore", longArg: "class classdata"},
	"taskset":  {short: "ac", stop: "p", long: "all-tasks cpu-list", operands: 1},
	"chroot":   {longArg: "groups userspec", long: "skip-chdir", operands: 1},
	"unbuffer": {},
	"busybox":  {},
	"xargs": {short: "0prtx", shortArg: "adEILnPs", long: "null no-run-if-empty interactive verbose exit open-tty",
		longArg: "arg-file delimiter max-lines max-args max-procs max-chars process-slot-var", rest: true, dflt: "echo"},
	"watch": {short: "bcdegptwx", shortArg: "nq", long: "beep color no-color differences errexit chgexit precise no-title no-wrap no-linewrap exec",
		longArg: "interval equexit", line: true},
}

func fields(s string) map[string]bool {
	m := map[string]bool{}
	for _, f := range strings.Fields(s) {
		m[f] = true
	}
	return m
}

// unwrap reads a wrapper's words after its name: its options, then the
// command it runs. An option it does not know may or may not take a
// value, so both readings are read.
func (w *wrapper) unwrap(r *reader, ws []word, stdin *word, group, depth int) {
	long, longArg := fields(w.long), fields(w.longArg)
	for i := 0; i < len(ws); i++ {
		v := ws[i].v
		switch {
		case hasHole(v):
			r.call(ws[i:], stdin, group, depth) // an option or a command agentry cannot read
			return
		case v == "--":
			w.run(r, ws[i+1:], stdin, group, depth)
			return
		case w.assigns && isAssign(v):
		case strings.HasPrefix(v, "--") && len(v) > 2:
			name, _, hasValue := strings.Cut(v[2:], "=")
			switch {
			case hasValue || long[name]:
			case longArg[name]:
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
				case strings.IndexByte(w.shortArg, c) >= 0:
					if k == len(v)-1 {
						i++
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
	if w.dflt != "" {
		w.run(r, nil, stdin, group, depth)
	}
}

// unknown reads the words after an option agentry does not know as if it
// took the next word as its value (the caller goes on as if it did not).
func (w *wrapper) unknown(r *reader, after []word, stdin *word, group, depth int) {
	if len(after) > 0 && depth < maxDepth {
		w.unwrap(r, after[1:], stdin, group, depth+1)
	}
}

// run reads the command a wrapper runs, past its operands.
func (w *wrapper) run(r *reader, ws []word, stdin *word, group, depth int) {
	if len(ws) < w.operands {
		return
	}
	ws = ws[w.operands:]
	if len(ws) == 0 && w.dflt != "" {
		ws = []word{{v: w.dflt, shown: w.dflt}}
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

// git's options before its subcommand, which it reads as its own.
var gitLong = fields("paginate no-pager bare no-replace-objects literal-pathspecs glob-pathspecs noglob-pathspecs " +
	"icase-pathspecs no-optional-locks no-advice no-lazy-fetch exec-path html-path man-path info-path version help")
var gitLongArg = fields("git-dir work-tree namespace super-prefix config-env list-cmds attr-source")

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
			if i+1 < len(ws) && isAlias(ws[i+1].v) {
				r.unreadable(shownOf(append([]word{name}, ws...)), "a git alias set on its command line")
				return
			}
			i++
		case strings.HasPrefix(v, "-c") || strings.HasPrefix(v, "--config-env="):
			if isAlias(strings.TrimPrefix(strings.TrimPrefix(v, "--config-env="), "-c")) {
				r.unreadable(shownOf(append([]word{name}, ws...)), "a git alias set on its command line")
				return
			}
		case v == "-C":
			i++
		case strings.HasPrefix(v, "--"):
			n, _, hasValue := strings.Cut(v[2:], "=")
			if !hasValue && gitLongArg[n] {
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
		if len(args) > 1 && args[0].v == "run" && depth < maxDepth {
			r.groups++
			r.call(args[1:], nil, r.groups, depth+1)
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

func isAlias(kv string) bool { return strings.HasPrefix(strings.ToLower(kv), "alias.") }

func joinWords(ws []word) word {
	c := command{words: ws}
	return word{v: c.text(), shown: c.shown()}
}
