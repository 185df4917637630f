package agentrun

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentry/agentry/lib/grant"
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
				s.add(name, v)
			}
		}
	}
	for _, name := range req.Redact {
		if v := lookup(job, name); v != "" {
			s.add(name, v)
		}
	}
	if len(s.pairs) > 0 {
		s.replacer() // now, before the goroutines that use it
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
	pairs []pair            // value → mark, as it is and as in a JSON string
	r     *strings.Replacer // made from pairs when first used
}

type pair struct{ from, to string }

func (s *secrets) add(name, value string) {
	mark := "[redacted:" + name + "]"
	s.pairs = append(s.pairs, pair{value, mark})
	if q := jsonEscaped(value); q != value {
		s.pairs = append(s.pairs, pair{q, mark})
	}
	s.r = nil
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

// jsonEscaped is v as Go's encoder writes it inside a JSON string.
func jsonEscaped(v string) string {
	b, _ := json.Marshal(v)
	return string(b[1 : len(b)-1])
}

func (s *secrets) apply(text string) string {
	if s == nil || len(s.pairs) == 0 {
		return text
	}
	return s.replacer().Replace(text)
}

// writer is w with the secrets redacted from each write (the event log
// writes a whole line at a time); nil stays nil.
func (s *secrets) writer(w io.Writer) io.Writer {
	if w == nil || s == nil || len(s.pairs) == 0 {
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
	for i := range res.Attempts {
		a := &res.Attempts[i]
		a.Reason = w.redact.apply(w.secrets.apply(a.Reason))
		if a.Check != nil {
			a.Check.Tail = w.secrets.apply(a.Check.Tail)
		}
	}
}
