package policy

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// word is one word of a command: v as matched (its quotes removed, a
// hole where agentry cannot read it), shown as a Decision's Match shows it.
type word struct{ v, shown string }

// command is one command a line runs, as rules match it. The layers of
// one simple command (env A=1 nice git push: that line, then nice git
// push, then git push) share a group; a shell's -c body, eval's words and
// what find -exec runs are commands of their own.
type command struct {
	words []word
	group int
	// container: a shell (sh -c …) or eval whose line is read as
	// commands of its own; it is matched by ask and deny rules only.
	container bool
}

func (c command) text() string {
	vs := make([]string, len(c.words))
	for i, w := range c.words {
		vs[i] = w.v
	}
	return strings.Join(vs, " ")
}

func (c command) shown() string {
	vs := make([]string, len(c.words))
	for i, w := range c.words {
		vs[i] = w.shown
	}
	return strings.Join(vs, " ")
}

const (
	maxDepth    = 16     // shells within shells
	maxCommands = 4096   // the commands one call may be read as
	maxSteps    = 100000 // the words read, in every reading
)

// reader reads command lines into the commands they run.
type reader struct {
	cmds []command
	// writes and reads are the files the line's redirections name (>
	// .env, < in.txt), literal ones only (the rest: holeWrites, holeReads).
	writes, reads []string
	// holeWrites and holeReads are the redirections to a name the shell
	// computes (> $F), as written: they could be any file.
	holeWrites, holeReads []string
	groups                int
	steps                 int
	// cds are the directories the line's cd and pushd go to, in order.
	cds  []string
	over bool // more than maxCommands or maxSteps: what is past is unreadable
}

// step counts one word read, and tells whether reading may go on.
func (r *reader) step() bool {
	r.steps++
	if r.steps > maxSteps {
		r.over = true
	}
	return !r.over
}

func hasHole(s string) bool { return strings.IndexByte(s, hole) >= 0 }

// unreadable records what agentry cannot read as a command that could be
// anything: one hole, which every ask and deny rule could match.
func (r *reader) unreadable(src, why string) {
	r.groups++
	r.cmds = append(r.cmds, command{words: []word{{v: string(hole), shown: clip(strings.TrimSpace(src), maxMatch/2) + " (" + why + ", so it could be any command)"}}, group: r.groups})
}

// line reads a shell command line: every simple command in it, in
// pipelines, lists, compound commands, functions' bodies and
// substitutions.
func (r *reader) line(src string, depth int) {
	if depth > maxDepth {
		r.unreadable(src, "shells nested deeper than agentry reads")
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		r.unreadable(src, "agentry cannot parse it as a shell line")
		return
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if as, ok := n.(*syntax.Assign); ok && as.Name != nil && !r.over && (as.Value != nil || as.Array == nil && !as.Naked) {
			// X= too: an empty GIT_CONFIG_PARAMETERS drops agentry's guard
			r.assign(as.Name.Value, readWord(as.Value), depth)
		}
		st, ok := n.(*syntax.Stmt)
		if !ok || r.over {
			return !r.over
		}
		r.redirects(st.Redirs)
		if ce, ok := st.Cmd.(*syntax.CallExpr); ok && len(ce.Args) > 0 {
			ws := make([]word, len(ce.Args))
			for i, a := range ce.Args {
				ws[i] = readWord(a)
			}
			r.groups++
			r.call(ws, stdinOf(st.Redirs), r.groups, depth)
		}
		return true
	})
}

// redirects records the files a statement's redirections write and read.
func (r *reader) redirects(rs []*syntax.Redirect) {
	for _, rd := range rs {
		var write, read bool
		switch rd.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob:
			write = true
		case syntax.RdrIn:
			read = true
		case syntax.RdrInOut:
			write, read = true, true
		case syntax.DplOut, syntax.DplIn: // >&2, <&0, >&-: a descriptor; >&file: a file
			write = rd.Op == syntax.DplOut
			read = !write
		default:
			continue
		}
		w := readWord(rd.Word)
		if hasHole(w.v) && rd.Op != syntax.DplOut && rd.Op != syntax.DplIn {
			// > $F: a name the shell computes, which could be any file
			if write {
				r.holeWrites = append(r.holeWrites, clip(w.shown, maxMatch/2))
			}
			if read {
				r.holeReads = append(r.holeReads, clip(w.shown, maxMatch/2))
			}
			continue
		}
		if w.v == "" || hasHole(w.v) || isDescriptor(w.v) || isDevice(w.v) {
			continue
		}
		if write {
			r.writes = append(r.writes, w.v)
		}
		if read {
			r.reads = append(r.reads, w.v)
		}
	}
}

func isDescriptor(s string) bool {
	s = strings.TrimSuffix(s, "-")
	return s == "" || strings.Trim(s, "0123456789") == ""
}

// isDevice tells the devices a redirection uses as plumbing, not files.
func isDevice(s string) bool {
	switch s {
	case "/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero":
		return true
	}
	return strings.HasPrefix(s, "/dev/fd/")
}

// stdinOf is what a command's redirections give its standard input: a
// here-document or here-string's word; nil when none is given, and an
// unreadable word for a file.
func stdinOf(rs []*syntax.Redirect) *word {
	var in *word
	for _, rd := range rs {
		switch rd.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			w := readText(rd.Hdoc, true)
			in = &w
		case syntax.WordHdoc:
			w := readText(rd.Word, false)
			w.v += "\n"
			in = &w
		case syntax.RdrIn, syntax.RdrInOut:
			in = &word{v: string(hole), shown: "a file"}
		}
	}
	return in
}

// readWord reads a word as the shell would pass it, quotes removed; a
// part agentry cannot know before it runs (a variable, a substitution, a
// glob or brace expansion) is a hole.
func readWord(w *syntax.Word) word {
	if w == nil {
		return word{}
	}
	if splitsBraces(w) {
		return shownWord(w, string(hole))
	}
	var b strings.Builder
	for _, part := range w.Parts {
		if !readPart(&b, part, false, true) {
			return shownWord(w, string(hole)) // a glob: the names it expands to
		}
	}
	return shownWord(w, b.String())
}

// readText reads a here-document's body (heredoc) or a here-string's
// word, which the shell expands but neither splits nor globs.
func readText(w *syntax.Word, heredoc bool) word {
	if w == nil {
		return word{}
	}
	var b strings.Builder
	for _, part := range w.Parts {
		if lit, ok := part.(*syntax.Lit); ok {
			unescape(&b, lit.Value, heredoc, false)
		} else {
			readPart(&b, part, false, false)
		}
	}
	return shownWord(w, b.String())
}

// shownWord is a word read as v, shown as written when it has a hole.
func shownWord(w *syntax.Word, v string) word {
	if !hasHole(v) {
		return word{v: v, shown: v}
	}
	var src strings.Builder
	if syntax.NewPrinter().Print(&src, w) != nil {
		src.Reset()
		src.WriteString("?")
	}
	return word{v: v, shown: src.String()}
}

// readPart writes one part of a word; false when it is a glob (globs:
// the shell would expand it).
func readPart(b *strings.Builder, part syntax.WordPart, quoted, globs bool) bool {
	switch p := part.(type) {
	case *syntax.Lit:
		return unescape(b, p.Value, quoted, globs)
	case *syntax.SglQuoted:
		if p.Dollar {
			b.WriteByte(hole) // $'…': escapes agentry does not decode
		} else {
			b.WriteString(p.Value)
		}
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			readPart(b, q, true, false)
		}
	default:
		b.WriteByte(hole)
	}
	return true
}

// unescape writes a literal's text with the shell's backslashes taken
// out (quoted: only those double quotes take out); false when it is a
// glob the shell would expand (globs).
func unescape(b *strings.Builder, s string, quoted, globs bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			n := s[i+1]
			switch {
			case n == '\n':
			case !quoted || strings.IndexByte("$`\"\\", n) >= 0:
				b.WriteByte(n)
			default:
				b.WriteByte(c)
				b.WriteByte(n)
			}
			i++
			continue
		case globs && (c == '*' || c == '?'):
			return false
		case globs && c == '[' && strings.IndexByte(s[i+1:], ']') >= 0:
			return false
		}
		b.WriteByte(c)
	}
	return true
}

// splitsBraces tells whether the shell would expand braces in w (a{b,c}).
func splitsBraces(w *syntax.Word) bool {
	c := &syntax.Word{Parts: slices.Clone(w.Parts)}
	if !syntax.SplitBraces(c) {
		return false
	}
	return slices.ContainsFunc(c.Parts, func(p syntax.WordPart) bool {
		_, ok := p.(*syntax.BraceExp)
		return ok
	})
}

func literalWords(argv []string) []word {
	ws := make([]word, len(argv))
	for i, a := range argv {
		a = strings.ReplaceAll(a, string(hole), "")
		ws[i] = word{v: a, shown: a}
	}
	return ws
}

// add records one layer of a command.
func (r *reader) add(ws []word, group int, container bool) bool {
	if len(r.cmds) >= maxCommands {
		r.over = true
		return false
	}
	r.cmds = append(r.cmds, command{words: ws, group: group, container: container})
	return true
}

// finish records, if the line was read into more commands than agentry
// reads, that the rest is unreadable.
func (r *reader) finish(src string) {
	r.writes = r.afterCd(r.writes)
	r.reads = r.afterCd(r.reads)
	if r.over {
		r.cmds = r.cmds[:min(len(r.cmds), maxCommands-1)]
		r.unreadable(src, "more commands than agentry reads in one call")
	}
}

// call reads one simple command: it is matched as it is, and what it runs
// past a wrapper or in a shell's -c body is read too.
func (r *reader) call(ws []word, stdin *word, group, depth int) {
	if len(ws) == 0 || !r.step() {
		return
	}
	name := ws[0].v
	if hasHole(name) {
		r.add(ws, group, false) // a command agentry cannot name: any rule could match it
		return
	}
	rest := ws[1:]
	base := path.Base(name)
	if w := wrapperOf(base); w != nil {
		if !r.add(ws, group, false) {
			return
		}
		w.unwrap(r, rest, stdin, group, depth)
		return
	}
	if len(rest) > 0 && !strings.Contains(rest[0].v, " ") {
		if w := wrapperOf(base + " " + rest[0].v); w != nil { // uv run CMD
			if r.add(ws, group, false) {
				w.unwrap(r, rest[1:], stdin, group, depth)
			}
			return
		}
	}
	if isShell(base) {
		if r.add(ws, group, true) {
			r.shell(ws[0], rest, stdin, depth)
		}
		return
	}
	switch base {
	case "eval":
		if r.add(ws, group, true) {
			r.eval(ws, depth)
		}
		return
	case "source", ".":
		// a file: matched by its own line, as sh FILE is; its input,
		// or a name the shell computes (. <(…)), read as such
		if !r.add(ws, group, false) || len(rest) == 0 {
			return
		}
		switch f := rest[0].v; {
		case hasHole(f):
			r.unreadable(shownOf(ws), "it runs a file agentry cannot name before it runs")
		case isStdin(f) && stdin != nil:
			r.body(*stdin, depth)
		case isStdin(f):
			r.unreadable(shownOf(ws), "it runs its standard input")
		}
		return
	}
	if !r.add(ws, group, false) {
		return
	}
	switch base {
	case "cd", "pushd":
		for _, w := range rest {
			if !strings.HasPrefix(w.v, "-") || w.v == "-" {
				if !hasHole(w.v) {
					r.cds = append(r.cds, w.v)
				}
				break
			}
		}
	case "find":
		r.find(rest, depth)
	case "git":
		r.git(ws[0], rest, group, depth)
	case "npm", "pnpm", "yarn", "bun":
		r.pkgManager(ws[0], rest, group, depth)
	case "rg":
		// rg --pre CMD runs CMD on every file it searches
		for j, w := range rest {
			if w.v == "--pre" && j+1 < len(rest) {
				r.nested([]word{rest[j+1], {v: string(hole), shown: "FILE"}}, depth)
			} else if v, ok := strings.CutPrefix(w.v, "--pre="); ok {
				r.nested([]word{{v: v, shown: v}, {v: string(hole), shown: "FILE"}}, depth)
			}
		}
	case "trap":
		if len(rest) >= 2 && rest[0].v != "-" {
			r.body(rest[0], depth)
		}
	case "alias":
		// alias p='git push': p runs that line where bash expands aliases
		for _, w := range rest {
			if name, v, ok := strings.Cut(w.v, "="); ok && name != "" && !hasHole(name) {
				r.body(word{v: v, shown: w.shown}, depth)
			}
		}
	case "su", "runuser", "script", "sg":
		r.commandOpt(rest, depth)
		if base == "sg" && len(rest) > 1 && !strings.HasPrefix(rest[1].v, "-") {
			r.body(joinWords(rest[1:]), depth) // sg GROUP LINE
		}
	}
}

// commandOpt reads the line of a -c or --command option, however it is
// spelt: -c LINE, -lc LINE, -cLINE, --command LINE, --command=LINE (su,
// runuser, script, sg).
func (r *reader) commandOpt(ws []word, depth int) {
	for i, w := range ws {
		v := w.v
		switch {
		case v == "--":
			return
		case v == "--command" && i+1 < len(ws):
			r.body(ws[i+1], depth)
		case strings.HasPrefix(v, "--command="):
			v = v[len("--command="):]
			r.body(word{v: v, shown: v}, depth)
		case len(v) > 1 && v[0] == '-' && v[1] != '-':
			if k := strings.IndexByte(v, 'c'); k > 0 {
				if k < len(v)-1 {
					r.body(word{v: v[k+1:], shown: v[k+1:]}, depth)
				} else if i+1 < len(ws) {
					r.body(ws[i+1], depth)
				}
			}
		}
	}
}

func isShell(base string) bool {
	switch base {
	case "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash", "ksh93", "oksh", "loksh", "lksh", "pdksh", "posh", "yash",
		"csh", "tcsh", "bosh", "xonsh", "elvish", "nu", "pwsh", "powershell":
		return true
	}
	return false
}

func shownOf(ws []word) string { return command{words: ws}.shown() }

// body reads a word that is a shell line (a -c body, eval's words).
func (r *reader) body(w word, depth int) {
	if hasHole(w.v) {
		r.unreadable(w.shown, "a shell line agentry cannot read before it runs")
		return
	}
	r.line(w.v, depth+1)
}

// shell reads a shell's command line: its -c body; a script file is
// matched by its name only; with neither it reads standard input, which
// agentry reads only from a here-document.
func (r *reader) shell(name word, ws []word, stdin *word, depth int) {
	c, s := false, false
	i := 0
scan:
	for ; i < len(ws); i++ {
		w := ws[i].v
		switch {
		case hasHole(w):
			r.unreadable(shownOf(append([]word{name}, ws...)), "a shell's options agentry cannot read")
			return
		case w == "--" || w == "-":
			i++
			break scan
		case w == "--rcfile" || w == "--init-file" || w == "--init-command" || w == "-C":
			i++
		case w == "--command" || strings.EqualFold(w, "-command"): // pwsh -Command
			c = true
		case strings.HasPrefix(w, "--command="):
			r.body(word{v: w[len("--command="):], shown: w}, depth)
			return
		case strings.HasPrefix(w, "--"):
		case len(w) > 1 && (w[0] == '-' || w[0] == '+'):
			for k := 1; k < len(w); k++ {
				switch w[k] {
				case 'c':
					c = true
				case 's':
					s = true
				case 'o', 'O':
					if k == len(w)-1 {
						i++
					}
				}
			}
		default:
			break scan
		}
	}
	switch {
	case c && i < len(ws):
		r.body(ws[i], depth)
	case c:
	case i < len(ws) && !s && !isStdin(ws[i].v):
		// a script file: matched by the shell's line alone
	case stdin != nil:
		r.body(*stdin, depth)
	default:
		r.unreadable(shownOf(append([]word{name}, ws...)), "a shell reading commands from its standard input")
	}
}

// isStdin tells the files that are a process's standard input, which a
// shell given one as its script reads its commands from.
func isStdin(name string) bool {
	switch name {
	case "-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0":
		return true
	}
	return false
}

// eval runs its words joined as a line.
func (r *reader) eval(ws []word, depth int) {
	vs := make([]string, 0, len(ws)-1)
	for _, w := range ws[1:] {
		if hasHole(w.v) {
			r.unreadable(shownOf(ws), "eval of what agentry cannot read before it runs")
			return
		}
		vs = append(vs, w.v)
	}
	r.line(strings.Join(vs, " "), depth+1)
}

// find: what -exec, -execdir, -ok and -okdir run, up to ; or +.
func (r *reader) find(ws []word, depth int) {
	for i := 0; i < len(ws); i++ {
		switch ws[i].v {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(ws) && ws[j].v != ";" && ws[j].v != "+" {
				j++
			}
			r.nested(replaced(ws[i+1:j], "{}"), depth)
			i = j
		}
	}
}

// nested reads a command another runs (find -exec, git bisect run) as a
// command of its own.
func (r *reader) nested(ws []word, depth int) {
	if depth >= maxDepth {
		r.unreadable(shownOf(ws), "commands nested deeper than agentry reads")
		return
	}
	r.groups++
	r.call(ws, nil, r.groups, depth+1)
}

// assign reads a variable set in the line (X=v cmd, export X=v, env
// X=v cmd) whose value a program runs: an editor, a pager or ssh command
// git runs through the shell is read as a line; a file a shell sources
// (BASH_ENV) and git settings (an alias among them) are what agentry
// cannot read.
func (r *reader) assign(name string, value word, depth int) {
	switch {
	case name == "BASH_ENV" || name == "ENV":
		r.unreadable(name+"="+value.shown, "a file a shell runs, which agentry does not read")
	case name == "PATH":
		r.unreadable(name+"="+value.shown, "a PATH of the line's own, which changes what program a name runs")
	case strings.HasPrefix(name, "BASH_FUNC_") || name == "SHELLOPTS" || name == "BASHOPTS" || name == "PS4":
		r.unreadable(name+"="+value.shown, "a shell function or option from the environment, which agentry does not read")
	case name == "GIT_CONFIG_GLOBAL" || name == "GIT_CONFIG_SYSTEM" || name == "GIT_DIR" || name == "GIT_EXEC_PATH" || name == "GIT_COMMON_DIR":
		r.unreadable(name+"="+value.shown, "git settings or programs from elsewhere, which agentry does not read")
	case name == "GIT_CONFIG_COUNT" || strings.HasPrefix(name, "GIT_CONFIG_VALUE_") || name == "GIT_CONFIG_PARAMETERS":
		// what git takes as its command line's settings: the guard agentry
		// gives git (safe.bareRepository) among them
		r.unreadable(name+"="+value.shown, "git settings from the environment, which agentry cannot read")
	case loadsCode(name):
		r.unreadable(name+"="+value.shown, "code the program loads, which agentry does not read")
	case strings.HasPrefix(name, "GIT_CONFIG_KEY_"):
		v := strings.ToLower(value.v)
		if hasHole(v) || strings.Contains(v, "alias.") || strings.Contains(v, "safe.") || strings.Contains(v, "include") ||
			isGitCommandKey(strings.Trim(strings.SplitN(v, "=", 2)[0], "'\"")) {
			r.unreadable(name+"="+value.shown, "git settings from the environment, which agentry cannot read")
		}
	case isCommandVar(name):
		if hasHole(value.v) {
			r.unreadable(name+"="+value.shown, "a command agentry cannot read before it runs")
			return
		}
		r.line(value.v, depth+1)
	}
}

// loadsCode tells the variables that make a program load code besides
// its own: a library the dynamic linker preloads, modules or options an
// interpreter takes from the environment.
func loadsCode(name string) bool {
	switch name {
	case "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME",
		"NODE_OPTIONS", "NODE_PATH", "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB",
		"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS":
		return true
	}
	return false
}

// isCommandVar tells the variables whose value programs run as a command.
func isCommandVar(name string) bool {
	switch name {
	case "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_PAGER", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS",
		"GIT_PROXY_COMMAND", "EDITOR", "VISUAL", "PAGER", "MANPAGER", "SYSTEMD_PAGER", "GH_EDITOR", "GH_PAGER", "LESSOPEN", "LESSCLOSE",
		"RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "CARGO_BUILD_RUSTC_WRAPPER":
		return true
	}
	return false
}

// afterCd are the relative paths ps as the line's redirections may name
// them after its cd and pushd: from each directory they go to, and from
// where they lead one after the other, beside ps as given.
func (r *reader) afterCd(ps []string) []string {
	if len(r.cds) == 0 {
		return ps
	}
	out := ps
	for _, p := range ps {
		if path.IsAbs(p) || strings.HasPrefix(p, "~") {
			continue
		}
		chain := ""
		for _, d := range r.cds {
			if d == "-" {
				continue
			}
			if path.IsAbs(d) || strings.HasPrefix(d, "~") {
				chain = d
			} else {
				chain = path.Join(chain, d)
			}
			out = append(out, path.Join(d, p))
			if chain != d {
				out = append(out, path.Join(chain, p))
			}
		}
	}
	return out
}
