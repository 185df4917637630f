package policy

import (
	"net"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"
)

// Check says what the policy makes of one call; root is the working copy
// its paths are relative to. A nil *Policy says None of every call.
//
// A call is read into parts: each command its Command line and its Argv
// run (a simple command with its wrappers' layers: env A=1 git push is
// matched as that line and as git push; a shell's -c body, eval's words
// and what find -exec runs are commands of their own), each path it
// writes or reads (as given and with its symlinks resolved; the files its
// command line's redirections name too) and each host it fetches. Every
// part is matched against every rule of its kind, and the verdicts
// combine so that a policy only narrows:
//
//   - Deny > Ask: the strictest ask or deny rule that matched any part
//     decides, the first of that verdict in the call's order (commands
//     in the order they appear, then writes, reads, hosts) and in the
//     file's, one that matched a command as read before one that matched
//     only what it could be. A part agentry cannot read (a line that does
//     not parse, eval or sh -c of a variable, source, a word the shell
//     computes) is matched as what it could be: every ask and deny rule
//     its readable words do not rule out matches it.
//   - Allow only when every part is allowed (a command by an allow rule
//     that matches any of its layers, a path in both its forms): a line
//     of one allowed command and one no rule names is None. Allow never
//     widens a level; it says a rule names the call and narrows nothing.
//   - None otherwise: no rule names the call, and the level decides.
//
// A rule whose pattern is * alone (** or /** for paths) is a default: it
// matches only a part no other rule of its kind matches, so that deny =
// ["*"] beside allow rules denies the commands they do not allow.
//
// Decision.Rule is the deciding rule as written with its place,
// Decision.Match the part it matched: the command (its argv joined by
// spaces, past the wrappers the rule's match skipped), the path relative
// to root (absolute when outside it), the host.
func (p *Policy) Check(c Call, root string) Decision {
	if p == nil {
		return Decision{}
	}
	var t tally
	writes, reads := c.Writes, c.Reads
	if c.Command != "" || len(c.Argv) > 0 {
		r := readCall(c)
		if len(p.commands) > 0 {
			p.checkCommands(&t, r)
		} else {
			t.add(Decision{})
		}
		writes = append(writes[:len(writes):len(writes)], r.writes...)
		reads = append(reads[:len(reads):len(reads)], r.reads...)
	}
	if len(p.writes) > 0 || len(p.reads) > 0 {
		tr := newTree(root)
		for _, w := range writes {
			t.add(checkPath(p.writes, tr.places(w, c.Dir)))
		}
		for _, rd := range reads {
			t.add(checkPath(p.reads, tr.places(rd, c.Dir)))
		}
	} else {
		t.parts += len(writes) + len(reads)
	}
	for _, h := range c.Hosts {
		t.add(checkHost(p.hosts, h))
	}
	return t.result()
}

// tally combines the verdicts of a call's parts.
type tally struct {
	worst   Decision // the first strictest ask or deny
	guessed bool     // worst matched only what a hole could be
	allowed Decision // the first allow
	parts   int
	allows  int
}

func (t *tally) add(d Decision) { t.addGuess(d, false) }

// addGuess adds a part's verdict; guessed, it matched only as what
// agentry could not read could be, and one that matched as read is
// preferred to name at the same verdict.
func (t *tally) addGuess(d Decision, guessed bool) {
	t.parts++
	switch {
	case d.Verdict >= Ask && (d.Verdict > t.worst.Verdict || (d.Verdict == t.worst.Verdict && t.guessed && !guessed)):
		t.worst, t.guessed = d, guessed
	case d.Verdict == Allow:
		t.allows++
		if t.allows == 1 {
			t.allowed = d
		}
	}
}

func (t *tally) result() Decision {
	switch {
	case t.worst.Verdict != None:
		return t.worst
	case t.parts > 0 && t.allows == t.parts:
		return t.allowed
	}
	return Decision{}
}

// strictest keeps the first of the strictest verdicts.
func strictest(cur, d Decision) Decision {
	if d.Verdict > cur.Verdict {
		return d
	}
	return cur
}

// readCall reads a call's command line and argv into the commands they
// run and the files their redirections name.
func readCall(c Call) *reader {
	r := &reader{}
	if c.Command != "" {
		r.line(c.Command, 0)
	}
	ws := literalWords(c.Argv)
	if isShellLine(ws) {
		r.shell(ws[0], ws[1:], nil, 0)
	} else if len(ws) > 0 {
		r.groups++
		r.call(ws, nil, r.groups, 0)
	}
	r.finish(c.Command + strings.Join(c.Argv, " "))
	return r
}

// isShellLine tells an argv of a shell's -c and a line (bash -lc LINE),
// as codex runs every command: the line is what the agent asked for, and
// the shell around it is not matched.
func isShellLine(ws []word) bool {
	if len(ws) != 3 || !isShell(path.Base(ws[0].v)) {
		return false
	}
	o := ws[1].v
	return strings.HasPrefix(o, "-") && !strings.HasPrefix(o, "--") && strings.Contains(o, "c")
}

func (p *Policy) checkCommands(t *tally, r *reader) {
	// The commands of one group are the layers of one simple command;
	// what a layer runs of its own (git -c core.editor's line) may come
	// between them.
	var order []int
	layers := map[int][]command{}
	for _, c := range r.cmds {
		if _, ok := layers[c.group]; !ok {
			order = append(order, c.group)
		}
		layers[c.group] = append(layers[c.group], c)
	}
	for _, g := range order {
		var worst, allowed Decision
		container, guessed := false, false
		for _, c := range layers[g] {
			d, gu := p.checkCommand(c)
			container = container || c.container
			switch {
			case d.Verdict < Ask:
				if d.Verdict == Allow && allowed.Verdict == None {
					allowed = d
				}
			case d.Verdict > worst.Verdict || (d.Verdict == worst.Verdict && guessed && !gu):
				worst, guessed = d, gu
			}
		}
		switch {
		case worst.Verdict != None:
			t.addGuess(worst, guessed)
		case container:
			// a shell or eval: its line's commands are the parts
		case allowed.Verdict != None:
			t.add(allowed)
		default:
			t.add(defaultOf(p.commands, layers[g][0].shown()))
		}
	}
}

// checkCommand matches one layer of a command: its text, and the same
// with the program's base name (/usr/bin/git push: git push); guessed
// when it matched only as what its holes could be.
func (p *Policy) checkCommand(c command) (d Decision, guessed bool) {
	text := c.text()
	var base string
	if name := c.words[0].v; strings.Contains(name, "/") && !hasHole(name) {
		base = path.Base(name) + text[len(name):]
	}
	holes := hasHole(text)
	for _, r := range p.commands {
		if r.dflt || r.verdict < d.Verdict || (r.verdict == d.Verdict && !guessed) || (c.container && r.verdict == Allow) {
			continue
		}
		if matchText(r.pat, text, false) || (base != "" && matchText(r.pat, base, false)) {
			d, guessed = Decision{Verdict: r.verdict, Rule: r.String(), Match: clip(c.shown(), maxMatch)}, false
		} else if holes && r.verdict >= Ask && r.verdict > d.Verdict && matchText(r.pat, text, true) {
			d, guessed = Decision{Verdict: r.verdict, Rule: r.String(), Match: clip(c.shown(), maxMatch)}, true
		}
	}
	return d, guessed
}

// checkPath matches a path in its forms: the strictest ask or deny of
// either, else allow when both are allowed.
func checkPath(rules []rule, places []place) Decision {
	var worst, allowed Decision
	allows := 0
	for _, pl := range places {
		var d Decision
		for _, r := range rules {
			if !r.dflt && r.verdict > d.Verdict && pl.matches(r.pat) {
				d = Decision{Verdict: r.verdict, Rule: r.String(), Match: pl.rel}
			}
		}
		if d.Verdict == None {
			d = defaultOf(rules, pl.rel)
		}
		if d.Verdict >= Ask {
			worst = strictest(worst, d)
		} else if d.Verdict == Allow {
			allows++
			if allows == 1 {
				allowed = d
			}
		}
	}
	if worst.Verdict != None {
		if len(places) > 1 && worst.Match != places[0].rel {
			worst.Match = places[0].rel + " (" + worst.Match + ")"
		}
		return worst
	}
	if allows == len(places) {
		return allowed
	}
	return Decision{}
}

// checkHost matches a host, or a URL's host; one agentry cannot tell is
// matched as what it could be.
func checkHost(rules []rule, h string) Decision {
	name := hostOf(h)
	var d Decision
	for _, r := range rules {
		if r.dflt || r.verdict <= d.Verdict {
			continue
		}
		if (name != "" && matchText(r.pat, name, false)) || (name == "" && r.verdict >= Ask) {
			d = Decision{Verdict: r.verdict, Rule: r.String(), Match: h}
			if name != "" {
				d.Match = name
			}
		}
	}
	if d.Verdict == None {
		d = defaultOf(rules, h)
		if name != "" && d.Verdict != None {
			d.Match = name
		}
	}
	return d
}

// defaultOf is the verdict of the rules for what no other rule names
// (* alone, ** for paths): the first of the strictest; None without one.
func defaultOf(rules []rule, match string) Decision {
	var d Decision
	for _, r := range rules {
		if r.dflt && r.verdict > d.Verdict {
			d = Decision{Verdict: r.verdict, Rule: r.String(), Match: match}
		}
	}
	return d
}

// hostOf is the host name of a URL or of a host with or without a port,
// lower case; empty when there is none to tell.
func hostOf(s string) string {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return ""
		}
		return strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	}
	s, _, _ = strings.Cut(s, "/")
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		s = s[i+1:]
	}
	if h, _, err := net.SplitHostPort(s); err == nil {
		s = h
	}
	s = strings.Trim(s, "[]")
	if strings.ContainsAny(s, " \t") {
		return ""
	}
	return strings.TrimSuffix(strings.ToLower(s), ".")
}

// maxMatch is the most of a command a Decision shows: a heredoc's
// line could be any length.
const maxMatch = 400

// clip shortens s to n bytes, at a character's start, with … after.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
