package agentrun

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/agentry/agentry/lib/grant"
	"github.com/agentry/agentry/lib/protocol"
)

// minSecret is the shortest value redacted for being in a variable the
// agent was not given: shorter ones ("1", "true", "en") are everywhere.
const minSecret = 8

// shellVars are set by a shell for itself, and hold nothing secret.
var shellVars = []string{"PWD", "OLDPWD", "SHLVL", "_", "SHELL", "USER", "LOGNAME", "HOSTNAME", "PS1", "PS2", "PS4", "IFS"}

// agentEnv is the agent's environment from the job's, and the values to
// redact from what the run says: those of the variables a clean
// environment drops (of minSecret characters or more, not a shell's own,
// not the value of a variable that is passed), and those of Redact.
func agentEnv(req Request, job []string) ([]string, *secrets) {
	s := &secrets{}
	env := job
	if req.Clean != nil {
		allow := grant.EnvAllowed(req.Grant.Harness, req.Clean.Allow)
		if req.Grant.Harness == grant.Codex {
			allow = append(allow, grant.CodexEnvKeys(codexUserConfig(req, job))...)
		}
		var dropped []string
		env, dropped = grant.FilterEnv(job, allow)
		passed := map[string]bool{}
		for _, kv := range env {
			_, v, _ := strings.Cut(kv, "=")
			passed[v] = true
		}
		for _, name := range dropped {
			if v := lookup(job, name); len(v) >= minSecret && !passed[v] && !slices.Contains(shellVars, name) {
				s.values = append(s.values, [2]string{name, v})
			}
		}
	}
	for _, name := range req.Redact {
		if v := lookup(job, name); v != "" {
			s.values = append(s.values, [2]string{name, v})
		}
	}
	return env, s
}

// codexUserConfig is the text of the user's codex config.toml, or "".
func codexUserConfig(req Request, env []string) string {
	path := req.Codex.Config
	if path == "" {
		home := req.Codex.Home
		if home == "" {
			home = lookup(env, "CODEX_HOME")
		}
		if home == "" {
			if h := lookup(env, "HOME"); h != "" {
				home = filepath.Join(h, ".codex")
			}
		}
		path = filepath.Join(home, "config.toml")
	}
	b, _ := os.ReadFile(path)
	return string(b)
}

func lookup(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// secrets are values replaced by [redacted:NAME] wherever the run says
// them: the answer, the reasons, the events, the check's output.
type secrets struct {
	// values are the variables' names and values, made into pairs when
	// first asked for (ready): their every encoding is ~1 ms in a fresh
	// process, which the run spends once the agent has started.
	values [][2]string
	once   sync.Once
	pairs  []pair            // value → mark, as it is and as in a JSON string
	have   map[pair]bool     // pairs, to add each once
	r      *strings.Replacer // made from pairs when first used
}

// ready makes the pairs of the values, once; every use of the pairs
// comes after it (a nil secrets is ready, with none).
func (s *secrets) ready() {
	if s == nil {
		return
	}
	s.once.Do(func() {
		for _, nv := range s.values {
			s.add(nv[0], nv[1])
		}
		if len(s.pairs) > 0 {
			s.replacer() // now, before the goroutines that use it
		}
	})
}

type pair struct{ from, to string }

func (s *secrets) add(name, value string) {
	mark := "[redacted:" + name + "]"
	if s.have == nil {
		s.have = make(map[pair]bool, 64) // a variable's forms, and more
	}
	for _, v := range encodings(value) {
		if p := (pair{v, mark}); !s.have[p] {
			s.have[p] = true
			s.pairs = append(s.pairs, p)
		}
	}
	s.r = nil
}

// minEncoded is the shortest form of a secret redacted for being an
// encoding or a prefix of one: shorter ones match by chance.
const minEncoded = 8

// encodings are the forms a secret's value is redacted in: as it is, as in
// a JSON string (also with \/ and every character \u-escaped), upper and
// lower case, hex, base64 (standard and URL-safe, at each of the three
// offsets it can start at in a longer encoded text), URL-encoded, and its
// long prefixes. It is best effort: an agent that means to leak a value it
// can read can always encode it some other way.
func encodings(v string) []string {
	out := []string{v}
	add := func(forms ...string) {
		for _, f := range forms {
			if len(f) >= minEncoded && !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	j := jsonEscaped(v)
	add(j[0], j[1], strings.ReplaceAll(j[1], "/", `\/`), uEscaped(v))
	add(strings.ToUpper(v), strings.ToLower(v), hex.EncodeToString([]byte(v)), strings.ToUpper(hex.EncodeToString([]byte(v))))
	for k := range 3 {
		add(base64Middle(base64.RawStdEncoding, v, k), base64Middle(base64.RawURLEncoding, v, k))
	}
	add(url.QueryEscape(v), url.PathEscape(v))
	if len(v) >= minLongPrefix {
		for n := max(minLongPrefix*3/4, len(v)*2/3); n < len(v); n++ {
			add(v[:n])
		}
	}
	return out
}

// minLongPrefix is the shortest secret whose prefixes are redacted too: a
// token, not a word.
const minLongPrefix = 20

// uEscaped is v with every character written \uXXXX, as JSON allows.
func uEscaped(v string) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 0, 6*len(v))
	for _, r := range v {
		if r > 0xFFFF {
			return ""
		}
		b = append(b, '\\', 'u', digits[r>>12], digits[r>>8&0xF], digits[r>>4&0xF], digits[r&0xF])
	}
	return string(b)
}

// base64Middle is the part of v's base64 that stands whatever comes
// before and after it, when v begins k bytes into the encoded text: the
// characters made only of v's bits.
func base64Middle(enc *base64.Encoding, v string, k int) string {
	e := enc.EncodeToString(append(make([]byte, k), v...))
	from, to := (8*k+5)/6, 8*(k+len(v))/6
	if to <= from || to > len(e) {
		return ""
	}
	return e[from:to]
}

// replacer is the secrets' replacer, longest value first, so that a value
// that holds another is replaced whole.
func (s *secrets) replacer() *strings.Replacer {
	if s.r == nil {
		slices.SortStableFunc(s.pairs, func(a, b pair) int { return len(b.from) - len(a.from) })
		var old []string
		for _, p := range s.pairs {
			old = append(old, p.from, p.to)
		}
		s.r = strings.NewReplacer(old...)
	}
	return s.r
}

// jsonEscaped is v as it is written inside a JSON string: by Go's
// encoder (its HTML escapes: \u0026), and without them, as --events'
// lines are written (protocol.Marshal) and the agents write theirs.
func jsonEscaped(v string) [2]string {
	b, _ := json.Marshal(v)
	p, _ := protocol.Marshal(v)
	return [2]string{string(b[1 : len(b)-1]), string(p[1 : len(p)-1])}
}

func (s *secrets) apply(text string) string {
	if s.none() || !s.mayHold(text) {
		return text
	}
	return s.replacer().Replace(text)
}

// mayHold reports whether text may hold a secret in one of its forms: a
// short one is searched for each (a few µs), so that a run that says none
// never has the replacer built, which a strings.Replacer does on its first
// use (~0.5 ms for what a clean environment drops); a long one is left to
// the replacer, which reads it once.
func (s *secrets) mayHold(text string) bool {
	if len(text) > 4096 {
		return true
	}
	for _, p := range s.pairs {
		if strings.Contains(text, p.from) {
			return true
		}
	}
	return false
}

// minCut is the shortest end of a secret that tail takes for one.
const minCut = 4

// tail is text that lost its beginning (the end of an output kept in a
// bounded buffer) redacted: a secret cut there, its first bytes gone, is
// a secret still when minCut or more of it is left.
func (s *secrets) tail(text string) string {
	if s.none() {
		return text
	}
	cut, mark := 0, ""
	for _, p := range s.pairs {
		for n := len(p.from) - 1; n >= minCut && n > cut; n-- {
			if strings.HasPrefix(text, p.from[len(p.from)-n:]) {
				cut, mark = n, p.to
				break
			}
		}
	}
	return mark + s.apply(text[cut:])
}

func (s *secrets) none() bool {
	s.ready()
	return s == nil || len(s.pairs) == 0
}

// started is the length of the longest end of text that is the start of
// a secret, not the whole of it: what may yet become one.
func (s *secrets) started(text string) int {
	s.ready()
	longest := 0
	for _, p := range s.pairs {
		for n := min(len(p.from)-1, len(text)); n > longest; n-- {
			if strings.HasSuffix(text, p.from[:n]) {
				longest = n
				break
			}
		}
	}
	return longest
}

// writer is w with the secrets redacted from each write (the event log
// writes a whole line at a time); nil stays nil.
func (s *secrets) writer(w io.Writer) io.Writer {
	if w == nil || s.none() {
		return w
	}
	return redactingWriter{w, s}
}

type redactingWriter struct {
	w io.Writer
	s *secrets
}

func (r redactingWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, r.s.apply(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// redact takes the secrets, and the run's absolute paths, out of what the
// result says.
func (res *Result) redact(w *workspace) {
	res.Text = w.secrets.apply(res.Text)
	res.Reason = w.redact.apply(w.secrets.apply(res.Reason))
	for i := range res.work.Commands {
		res.work.Commands[i].Command = w.secrets.apply(res.work.Commands[i].Command)
	}
	for i := range res.work.Denials {
		res.work.Denials[i] = w.secrets.apply(res.work.Denials[i])
	}
	for i := range res.Denials {
		res.Denials[i].Match = w.redact.apply(w.secrets.apply(res.Denials[i].Match))
	}
	for i := range res.Attempts {
		a := &res.Attempts[i]
		a.Reason = w.redact.apply(w.secrets.apply(a.Reason))
		if a.Check != nil {
			a.Check.Tail = w.secrets.apply(a.Check.Tail)
		}
	}
}
