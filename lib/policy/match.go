package policy

import (
	"path"
	"strings"
)

// hole stands, in a command's text, for a word agentry cannot read: a
// variable, a substitution's output, a glob the shell expands.
const hole = '\x00'

// matchText tells whether pat, where * is any run of characters (spaces
// too) and every other character itself, matches all of text. A hole in
// text is covered by a * of the pattern; with could, it may also stand
// for any text at all (what the word could turn out to be), which is how
// an ask or deny rule is matched: what could match does.
func matchText(pat, text string, could bool) bool {
	m, n := len(pat), len(text)
	next := make([]bool, n+1) // row i+1: pat[i+1:] against text[j:]
	cur := make([]bool, n+1)
	// The pattern's end matches the text's end, and (could) holes alone.
	next[n] = true
	for j := n - 1; j >= 0; j-- {
		next[j] = could && text[j] == hole && next[j+1]
	}
	for i := m - 1; i >= 0; i-- {
		p := pat[i]
		cur[n] = p == '*' && next[n]
		for j := n - 1; j >= 0; j-- {
			switch {
			case p == '*':
				cur[j] = next[j] || cur[j+1]
			case text[j] == hole:
				// The hole ends here, or it stands for pat[i] and goes on.
				cur[j] = could && (cur[j+1] || next[j])
			default:
				cur[j] = p == text[j] && next[j+1]
			}
		}
		next, cur = cur, next
	}
	return next[0]
}

// matchPath tells whether a path pattern matches p, or a directory above
// it (a pattern that names a directory names what is in it). Both are
// slash-separated and absolute or relative alike; ** is any number of
// whole names, and a name is matched by path.Match.
func matchPath(pat, p string) bool {
	ps := strings.Split(strings.TrimPrefix(pat, "/"), "/")
	ss := strings.Split(strings.TrimPrefix(p, "/"), "/")
	m, n := len(ps), len(ss)
	next := make([]bool, n+1)
	cur := make([]bool, n+1)
	for j := range next {
		next[j] = true // the pattern is used up: p is at or under it
	}
	for i := m - 1; i >= 0; i-- {
		seg := ps[i]
		cur[n] = seg == "**" && next[n]
		for j := n - 1; j >= 0; j-- {
			if seg == "**" {
				cur[j] = next[j] || cur[j+1]
				continue
			}
			ok, _ := path.Match(seg, ss[j])
			cur[j] = ok && next[j+1]
		}
		next, cur = cur, next
	}
	return next[0]
}
