package agentrun

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agentry/agentry/lib/proc"
)

// Validator is the program that checks a schema and an answer:
// ndjson-schema, found beside runagent, else on PATH. The validator's
// package init compiles every draft's meta-schema in every process that
// links it (DESIGN.md, "Heavy dependencies", has the cost), so runagent
// does not link it: only runs that have a schema run it.
const Validator = "ndjson-schema"

// ErrNoValidator is LoadSchema's error when there is no Validator to run.
var ErrNoValidator = errors.New("a schema needs " + Validator + ", which is neither beside this program nor on PATH")

// SchemaError is a schema file that cannot be used: one that could not be
// read (Problem "read"), is not JSON ("json"), or that the Validator does
// not take as a schema ("schema": Err is then its own words).
type SchemaError struct {
	Path    string // as given
	Problem string
	Err     error
}

func (e *SchemaError) Error() string {
	switch e.Problem {
	case "read":
		return fmt.Sprintf("schema %s: %v", e.Path, e.Err)
	case "json":
		return fmt.Sprintf("schema %s is not JSON: %v", e.Path, e.Err)
	}
	return e.Err.Error()
}

func (e *SchemaError) Unwrap() error { return e.Err }

// Schema is a JSON Schema the answer must conform to: neither CLI can be
// trusted to enforce it, so runagent checks the answer itself, with
// ndjson-schema check --schema.
type Schema struct {
	File      string // absolute, for codex's --output-schema
	Compact   string // the schema as one line, for claude's --json-schema
	validator string
	starts    proc.Options // how the validator starts (through the process's reaper)
}

// LoadSchema reads a schema file and has ndjson-schema compile it; an
// error (a *SchemaError, or ErrNoValidator when there is no ndjson-schema)
// means the file is not a usable schema, and nothing should start.
func LoadSchema(path string, starts proc.Options) (*Schema, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(abs)
	if err != nil {
		return nil, &SchemaError{path, "read", errors.Unwrap(err)}
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		return nil, &SchemaError{path, "json", err}
	}
	bin, err := proc.Sibling(Validator)
	if err != nil {
		return nil, ErrNoValidator
	}
	s := &Schema{File: abs, Compact: compact.String(), validator: bin, starts: starts}
	if _, errText, code := s.check(nil); code != 0 {
		return nil, &SchemaError{path, "schema", errors.New(errText)}
	}
	return s, nil
}

// Check checks an answer: its compact JSON when it conforms, else the
// first violation, where and why.
func (s *Schema) Check(raw string) (compact string, violation string) {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(strings.TrimSpace(raw))); err != nil {
		return "", "the answer is not JSON: " + err.Error()
	}
	out, errText, code := s.check(append(b.Bytes(), '\n'))
	switch code {
	case 0:
		return b.String(), ""
	case 1:
		var p struct{ Detail string }
		first, _, _ := strings.Cut(out, "\n")
		if json.Unmarshal([]byte(first), &p) == nil && p.Detail != "" {
			return "", "the answer " + p.Detail
		}
	}
	return "", "the answer could not be checked: " + errText
}

// check runs ndjson-schema check --json --schema over input: its stdout,
// the first line of its stderr without the program's name, and its exit
// code (-1 when it did not run, or a signal ended it).
func (s *Schema) check(input []byte) (stdout, stderr string, code int) {
	c, err := proc.StartPiped(exec.Command(s.validator, "check", "--json", "--schema", s.File), proc.Pipes{Stdin: bytes.NewReader(input), Options: s.starts})
	if err != nil {
		return "", fmt.Sprintf("%s: %s", Validator, proc.ErrnoName(err)), -1
	}
	out, _ := io.ReadAll(c.Stdout)
	c.Stdout.Close()
	exit := c.End()
	stderr, _, _ = strings.Cut(strings.TrimSpace(c.Stderr.String()), "\n")
	stderr = strings.TrimPrefix(stderr, Validator+": error: ")
	switch {
	case exit.Code == nil:
		return string(out), exit.String(), -1
	case stderr == "" && *exit.Code != 0 && *exit.Code != 1:
		stderr = exit.String()
	}
	return string(out), stderr, *exit.Code
}
