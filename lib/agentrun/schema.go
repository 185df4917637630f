package agentrun

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema is a JSON Schema the answer must conform to: neither CLI can be
// trusted to enforce it, so runagent checks the answer itself.
type Schema struct {
	File    string // absolute, for codex's --output-schema
	Compact string // the schema as one line, for claude's --json-schema
	schema  *jsonschema.Schema
}

// LoadSchema reads and compiles a schema file; an error means the file is
// not a usable schema, and nothing should start.
func LoadSchema(path string) (*Schema, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("--schema: %v", errors.Unwrap(err))
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("--schema %s is not JSON: %v", path, err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(abs, doc); err != nil {
		return nil, fmt.Errorf("--schema %s: %v", path, err)
	}
	sch, err := c.Compile(abs)
	if err != nil {
		return nil, fmt.Errorf("--schema %s is not a valid JSON Schema: %v", path, firstLine(err.Error()))
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		return nil, fmt.Errorf("--schema %s is not JSON: %v", path, err)
	}
	return &Schema{File: abs, Compact: compact.String(), schema: sch}, nil
}

// Check validates an answer: its compact JSON when it conforms, else the
// first violation, as a path and a reason.
func (s *Schema) Check(raw string) (compact string, violation string) {
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(raw))
	if err != nil {
		return "", "the answer is not JSON: " + firstLine(err.Error())
	}
	var ve *jsonschema.ValidationError
	if err := s.schema.Validate(v); errors.As(err, &ve) {
		for len(ve.Causes) > 0 {
			ve = ve.Causes[0]
		}
		where := "/" + strings.Join(ve.InstanceLocation, "/")
		return "", fmt.Sprintf("the answer does not conform to the schema: at %s: %s", where, ve.ErrorKind.LocalizedString(message.NewPrinter(language.English)))
	} else if err != nil {
		return "", "the answer could not be checked: " + err.Error()
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(raw)); err != nil {
		return "", "the answer is not JSON: " + err.Error()
	}
	return b.String(), ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
