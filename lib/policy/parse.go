package policy

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// rule is one pattern of the file, with what it says and where it is.
type rule struct {
	verdict Verdict
	key     string // as written, dotted: commands.deny
	text    string // the pattern as written
	pat     string // the pattern as matched
	// dflt: the pattern is * alone (** or /** for paths), the rule for
	// what no other rule of its kind names (deny = ["*"] beside allows).
	dflt bool
	file string
	line int
}

// String is the rule as a Decision names it:
// commands.deny "git push*" (policy.toml:3).
func (r rule) String() string {
	return fmt.Sprintf("%s %q (%s:%d)", r.key, r.text, r.file, r.line)
}

// isTable tells the tables of a policy.
func isTable(t string) bool { return t == "commands" || t == "paths" || t == "hosts" }

// isKey tells the keys of a table: a verdict, and in paths what the rule
// is about (reads, writes; both when not said).
func isKey(table, key string) bool {
	v, about, split := strings.Cut(key, "_")
	if verdictOf(v) == None {
		return false
	}
	return !split || (table == "paths" && (about == "read" || about == "write"))
}

func verdictOf(word string) Verdict {
	switch word {
	case "allow":
		return Allow
	case "ask":
		return Ask
	case "deny":
		return Deny
	}
	return None
}

// Load reads and parses the policy file at path. An error reading it is
// the *fs.PathError of os.ReadFile; one in it, an *Error.
func Load(path string) (*Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse parses a policy document (agentry-policy(5)); name is what its
// errors and its rules' places call it. Anything it does not know — a
// table, a key, a value that is not a list of strings, a pattern that is
// not one — is an *Error: a policy fails closed.
func Parse(name string, data []byte) (*Policy, error) {
	// First as plain TOML, so that the document is TOML as go-toml reads
	// it (a key defined twice, a table opened twice), with its own words.
	var plain map[string]any
	if err := toml.Unmarshal(data, &plain); err != nil {
		e := &Error{File: name, Reason: "not valid TOML: " + strings.TrimPrefix(err.Error(), "toml: ")}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			e.Line, _ = de.Position()
		}
		return nil, e
	}
	pr := &parser{pol: &Policy{name: name}, name: name}
	pr.p.Reset(data)
	var table []string
	for pr.p.NextExpression() {
		e := pr.p.Expression()
		switch e.Kind {
		case unstable.Table:
			table = keyOf(e.Key())
			if len(table) != 1 || !isTable(table[0]) {
				return nil, pr.errorf(e, strings.Join(table, "."), "an unknown table: a policy has [commands], [paths] and [hosts]")
			}
		case unstable.ArrayTable:
			return nil, pr.errorf(e, strings.Join(keyOf(e.Key()), "."), "an unknown table: a policy has [commands], [paths] and [hosts]")
		case unstable.KeyValue:
			if err := pr.keyValue(append(table[:len(table):len(table)], keyOf(e.Key())...), e.Value(), e); err != nil {
				return nil, err
			}
		}
	}
	if err := pr.p.Error(); err != nil { // not after Unmarshal took it; kept so that nothing is skipped
		return nil, &Error{File: name, Reason: err.Error()}
	}
	pr.pol.defaults()
	return pr.pol, nil
}

type parser struct {
	p    unstable.Parser
	pol  *Policy
	name string
}

func keyOf(it unstable.Iterator) []string {
	var k []string
	for it.Next() {
		k = append(k, string(it.Node().Data))
	}
	return k
}

// line is the line a node starts on: its own bytes, else its first
// child's that has some.
func (pr *parser) line(n *unstable.Node) int {
	for ; n != nil && n.Valid(); n = n.Child() {
		if n.Raw.Length > 0 {
			return pr.p.Shape(n.Raw).Start.Line
		}
		if n.Kind == unstable.KeyValue || n.Kind == unstable.Table || n.Kind == unstable.ArrayTable {
			if it := n.Key(); it.Next() && it.Node().Raw.Length > 0 {
				return pr.p.Shape(it.Node().Raw).Start.Line
			}
		}
	}
	return 0
}

func (pr *parser) errorf(n *unstable.Node, key, format string, args ...any) *Error {
	return &Error{File: pr.name, Line: pr.line(n), Key: key, Reason: fmt.Sprintf(format, args...)}
}

// keyValue takes one key and its value, at the table the file is in: a
// list of patterns, or (an inline table, or a table's name dotted into
// the key) the keys of a table.
func (pr *parser) keyValue(key []string, v *unstable.Node, at *unstable.Node) error {
	dotted := strings.Join(key, ".")
	if len(key) == 1 && isTable(key[0]) && v.Kind == unstable.InlineTable {
		it := v.Children()
		for it.Next() {
			kv := it.Node()
			if err := pr.keyValue(append(key[:1:1], keyOf(kv.Key())...), kv.Value(), kv); err != nil {
				return err
			}
		}
		return nil
	}
	if len(key) != 2 || !isTable(key[0]) {
		if len(key) == 1 && isTable(key[0]) {
			return pr.errorf(at, dotted, "must be a table of lists of strings, as in [%s] deny = [\"…\"], not a %s", key[0], kindName(v.Kind))
		}
		if len(key) == 1 {
			return pr.errorf(at, dotted, "an unknown key: a policy's rules are in [commands], [paths] and [hosts]")
		}
		return pr.errorf(at, dotted, "an unknown key: a policy has [commands], [paths] and [hosts]")
	}
	if !isKey(key[0], key[1]) {
		return pr.errorf(at, dotted, "an unknown key: [%s] has %s", key[0], keyList(key[0]))
	}
	if v.Kind != unstable.Array {
		return pr.errorf(at, dotted, "must be a list of strings, as in %s = [\"…\"], not a %s", key[1], kindName(v.Kind))
	}
	it := v.Children()
	for it.Next() {
		s := it.Node()
		if s.Kind == unstable.Comment {
			continue
		}
		if s.Kind != unstable.String {
			return pr.errorf(s, dotted, "must be a list of strings: a %s is in it", kindName(s.Kind))
		}
		if err := pr.add(key[0], key[1], string(s.Data), pr.line(s)); err != nil {
			err.Key = dotted
			return err
		}
	}
	return nil
}

// add checks one pattern and files it under the calls it is about.
func (pr *parser) add(table, key, text string, line int) *Error {
	verdictWord, about, _ := strings.Cut(key, "_")
	r := rule{verdict: verdictOf(verdictWord), key: table + "." + key, text: text, file: pr.name, line: line}
	bad := func(format string, args ...any) *Error {
		return &Error{File: pr.name, Line: line, Reason: fmt.Sprintf(format, args...)}
	}
	var err error
	switch table {
	case "commands":
		fields := strings.Fields(text)
		r.pat = strings.Join(fields, " ")
		if r.pat == "" {
			return bad("an empty pattern matches no command")
		}
		for _, f := range fields {
			if why := shellOperator(f); why != "" {
				return bad("%q: %s", text, why)
			}
		}
		pr.pol.commands = append(pr.pol.commands, r)
	case "paths":
		if r.pat, err = pathPattern(text); err != nil {
			return bad("%q: %v", text, err)
		}
		if about != "write" {
			pr.pol.reads = append(pr.pol.reads, r)
		}
		if about != "read" {
			pr.pol.writes = append(pr.pol.writes, r)
		}
	case "hosts":
		if r.pat, err = hostPattern(text); err != nil {
			return bad("%q: %v", text, err)
		}
		pr.pol.hosts = append(pr.pol.hosts, r)
	}
	return nil
}

// shellOperator says why a pattern's word that is the shell's, not a
// command's (|, &&, >), would make the rule match nothing; "" when f is
// none.
func shellOperator(f string) string {
	op := strings.TrimLeft(f, "0123456789")
	if op == "" || strings.Trim(op, "|&<>") != "" {
		return ""
	}
	if strings.ContainsAny(op, "<>") {
		return op + " is a redirection, which is not part of a command: its file is a path, for [paths] deny_write or deny_read"
	}
	return op + " joins commands, and a rule matches one command: write one for each (\"curl *\"); a shell reading a pipe (| sh) gets the strictest verdict of the command rules already"
}

func keyList(table string) string {
	switch table {
	case "paths":
		return "allow, ask and deny (reads and writes), allow_read, ask_read, deny_read, allow_write, ask_write and deny_write"
	}
	return "allow, ask and deny"
}

func kindName(k unstable.Kind) string {
	switch k {
	case unstable.String:
		return "string"
	case unstable.InlineTable:
		return "table"
	case unstable.Array:
		return "list"
	case unstable.Bool:
		return "boolean"
	case unstable.Integer:
		return "number"
	case unstable.Float:
		return "number"
	}
	return "date or time"
}

// pathPattern checks a path pattern and returns it as matched: slashes
// only, no ./ before it, a directory's trailing slash dropped (a pattern
// matches what is under what it names).
func pathPattern(text string) (string, error) {
	p := strings.TrimSpace(text)
	if p == "" {
		return "", errors.New("an empty pattern matches no path")
	}
	if strings.HasPrefix(p, "~") {
		return "", errors.New("~ is not expanded: write the absolute path, or **/ before what is under it")
	}
	abs := strings.HasPrefix(p, "/")
	p = path.Clean(p)
	if !abs && (p == ".." || strings.HasPrefix(p, "../")) {
		return "", errors.New("a relative pattern names paths in the working copy: write an absolute one for a path outside it")
	}
	for _, seg := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		if seg == "**" {
			continue
		}
		if strings.Contains(seg, "**") {
			return "", errors.New("** stands alone between slashes (a/**/b), or use * inside a name")
		}
		if _, err := path.Match(seg, ""); err != nil {
			return "", fmt.Errorf("not a glob: %v", err)
		}
	}
	return p, nil
}

// hostPattern checks a host pattern: a host name, * for any run of
// characters in it.
func hostPattern(text string) (string, error) {
	h := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(text), "."))
	switch {
	case h == "":
		return "", errors.New("an empty pattern matches no host")
	case strings.Contains(h, "://") || strings.Contains(h, "/"):
		return "", errors.New("a host name, not a URL: write example.com or *.example.com")
	case strings.Contains(h, ":"):
		return "", errors.New("a host name alone: ports are not matched")
	case strings.ContainsAny(h, " \t?[]"):
		return "", errors.New("a host name, with * as its only wildcard")
	}
	return h, nil
}

// defaults marks each rule whose pattern is * alone (** or /** for
// paths).
func (p *Policy) defaults() {
	for _, rs := range [][]rule{p.commands, p.hosts} {
		for i := range rs {
			rs[i].dflt = rs[i].pat == "*"
		}
	}
	for _, rs := range [][]rule{p.reads, p.writes} {
		for i := range rs {
			rs[i].dflt = rs[i].pat == "**" || rs[i].pat == "/**"
		}
	}
}
