package agentrun

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentry/agentry/lib/schema"
)

// Schema is a JSON Schema the answer must conform to: neither CLI can be
// trusted to enforce it, so runagent checks the answer itself.
type Schema struct {
	File    string // absolute, for codex's --output-schema
	Compact string // the schema as one line, for claude's --json-schema
	schema  *schema.Schema
}

// LoadSchema reads a schema file and compiles it; an error means the file
// is not a usable schema, and nothing should start.
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
	s, err := schema.Load(abs)
	if err != nil {
		return nil, fmt.Errorf("--schema %v", err)
	}
	return &Schema{File: abs, Compact: compact.String(), schema: s}, nil
}

// Check checks an answer: its compact JSON when it conforms, else the
// first violation, where and why.
func (s *Schema) Check(raw string) (compact string, violation string) {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(strings.TrimSpace(raw))); err != nil {
		return "", "the answer is not JSON: " + err.Error()
	}
	if v := s.schema.Check(b.Bytes()); v != "" {
		return "", "the answer does not conform to the schema: " + v
	}
	return b.String(), ""
}
