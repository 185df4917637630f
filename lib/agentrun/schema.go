package agentrun

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agentry/agentry/lib/proc"
)

// Schema is a JSON Schema the answer must conform to: neither CLI can be
// trusted to enforce it, so runagent checks the answer itself — with
// ndjson check --schema, so that the validator (whose start-up costs ~3 ms)
// is loaded only by runs that have a schema.
type Schema struct {
	File    string // absolute, for codex's --output-schema
	Compact string // the schema as one line, for claude's --json-schema
	ndjson  string
}

// LoadSchema reads a schema file and has ndjson compile it; an error means
// the file is not a usable schema, and nothing should start.
func LoadSchema(path string) (*Schema, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("--schema %s: %v", path, errors.Unwrap(err))
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		return nil, fmt.Errorf("--schema %s is not JSON: %v", path, err)
	}
	bin, err := proc.Sibling("ndjson")
	if err != nil {
		return nil, fmt.Errorf("--schema needs ndjson, which is neither beside runagent nor on PATH")
	}
	s := &Schema{File: abs, Compact: compact.String(), ndjson: bin}
	if _, errText, code := s.check(nil); code != 0 {
		return nil, errors.New(strings.TrimPrefix(errText, "ndjson: error: "))
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
	return "", "the answer could not be checked: " + strings.TrimSpace(errText)
}

// check runs ndjson check --schema over input.
func (s *Schema) check(input []byte) (stdout, stderr string, code int) {
	cmd := exec.Command(s.ndjson, "check", "--json", "--schema", s.File)
	cmd.Stdin = bytes.NewReader(input)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), errb.String(), 0
	case errors.As(err, &ee):
		return out.String(), strings.TrimSpace(errb.String()), ee.ExitCode()
	}
	return "", err.Error(), -1
}
