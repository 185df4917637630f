// Package dotenv reads dotenv files, the K=V lines svc start's
// --env-file and svc.toml's env_file name.
package dotenv

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"sync"
)

var envKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`) })

// Read reads a dotenv file: K=V lines, blank lines and # comments,
// an optional "export " before K, and values bare (trailing " #comment"
// dropped), in single quotes (as they are) or in double quotes (\n, \t,
// \", \\ and \$ understood). Nothing is expanded. A line that is none of
// these is an error naming the file and line.
func Read(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, unopened(err)
	}
	defer f.Close()
	var env []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		kv, err := envLine(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		if kv != "" {
			env = append(env, kv)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return env, nil
}

// envLine parses one line: "" for a blank or comment line.
func envLine(line string) (string, error) {
	line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
	if line == "" || line[0] == '#' {
		return "", nil
	}
	line = strings.TrimPrefix(line, "export ")
	k, v, ok := strings.Cut(line, "=")
	k = strings.TrimSpace(k)
	if !ok {
		return "", fmt.Errorf("no '=' in %q", clip(line))
	}
	if !envKey().MatchString(k) {
		return "", fmt.Errorf("%q is not a variable name", clip(k))
	}
	v, err := envValue(strings.TrimSpace(v))
	if err != nil {
		return "", fmt.Errorf("%s: %v", k, err)
	}
	return k + "=" + v, nil
}

func envValue(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	switch v[0] {
	case '\'':
		end := strings.IndexByte(v[1:], '\'')
		if end < 0 {
			return "", fmt.Errorf("the single quote is not closed")
		}
		return v[1 : end+1], trailing(v[end+2:])
	case '"':
		var b strings.Builder
		for i := 1; i < len(v); i++ {
			switch c := v[i]; {
			case c == '"':
				return b.String(), trailing(v[i+1:])
			case c == '\\' && i+1 < len(v):
				i++
				b.WriteString(map[byte]string{'n': "\n", 't': "\t", 'r': "\r", '"': `"`, '\\': `\`, '$': "$"}[v[i]])
				if !strings.ContainsRune(`nrt"\$`, rune(v[i])) {
					b.WriteByte('\\')
					b.WriteByte(v[i])
				}
			default:
				b.WriteByte(c)
			}
		}
		return "", fmt.Errorf("the double quote is not closed")
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return v, nil
}

// trailing allows only a comment after a quoted value.
func trailing(rest string) error {
	rest = strings.TrimSpace(rest)
	if rest != "" && rest[0] != '#' {
		return fmt.Errorf("%q after the closing quote", clip(rest))
	}
	return nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// unopened is a file's error from os.Open said as "PATH: why", without
// the name of the call ("open PATH: why").
func unopened(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}
