// Package schema is JSON Schema: a schema file compiled (drafts 4, 6, 7,
// 2019-09 and 2020-12, the default 2020-12), and a value checked against
// it, with the first violation as a path and a reason. Only ndjson-schema
// links it (ndjson check --schema and runagent --schema run that binary):
// the validator, santhosh-tekuri/jsonschema, compiles every draft's
// meta-schema in its package init, which every process that links it
// pays at start, whether or not it loads a schema (DESIGN.md, "Heavy
// dependencies").
package schema

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema is a compiled JSON Schema.
type Schema struct {
	schema *jsonschema.Schema
}

// Load reads and compiles a schema file; an error says why it is not a
// usable schema.
func Load(path string) (*Schema, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, errors.Unwrap(err)) // errors.Is(err, fs.ErrNotExist) holds
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s is not JSON: %v", path, err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(abs, doc); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	sch, err := c.Compile(abs)
	var sve *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	switch {
	case errors.As(err, &sve) && errors.As(sve.Err, &ve):
		return nil, fmt.Errorf("%s is not a valid JSON Schema: %s", path, leaf(ve))
	case err != nil:
		return nil, fmt.Errorf("%s is not a valid JSON Schema: %v", path, firstLine(err.Error()))
	}
	return &Schema{schema: sch}, nil
}

// Check checks one JSON value: "" when it conforms, else the first
// violation, "at /path: reason". Safe for concurrent use.
func (s *Schema) Check(value []byte) (violation string) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(value))
	if err != nil {
		return "not JSON: " + firstLine(err.Error())
	}
	var ve *jsonschema.ValidationError
	if err := s.schema.Validate(v); errors.As(err, &ve) {
		return leaf(ve)
	} else if err != nil {
		return "could not be checked: " + err.Error()
	}
	return ""
}

// leaf is the first violation at the bottom of a validation error, as
// "at /path: reason".
func leaf(ve *jsonschema.ValidationError) string {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	return fmt.Sprintf("at /%s: %s", strings.Join(ve.InstanceLocation, "/"), ve.ErrorKind.LocalizedString(message.NewPrinter(language.English)))
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
