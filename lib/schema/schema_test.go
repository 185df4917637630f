package schema

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, text string) string {
	p := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheck(t *testing.T) {
	s, err := Load(write(t, `{"type":"object","properties":{"answer":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}},"required":["answer"],"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	for value, want := range map[string]string{
		`{"answer":42}`:                   "",
		`{"answer":42,"tags":["a"]}`:      "",
		`{"answer":"x"}`:                  "at /answer: got string, want integer",
		`{"answer":1,"tags":["a",2]}`:     "at /tags/1: got number, want string",
		`{}`:                              "at /: missing property 'answer'",
		`{"answer":1,"extra":true}`:       "at /: additional properties 'extra' not allowed",
		`[1]`:                             "at /: got array, want object",
		`{"answer":12345678901234567890}`: "",
	} {
		if got := s.Check([]byte(value)); got != want {
			t.Errorf("%s: got %q, want %q", value, got, want)
		}
	}
}

func TestLoadRefusesWhatIsNoSchema(t *testing.T) {
	for text, want := range map[string]string{
		`{"type":"nope"}`:      "is not a valid JSON Schema: at /type: value must be one of",
		`{"minimum":"x"}`:      "is not a valid JSON Schema: at /minimum: got string, want number",
		`{"type":`:             "is not JSON",
		`{"$ref":"#/nowhere"}`: "is not a valid JSON Schema",
	} {
		_, err := Load(write(t, text))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want …%s…", text, err, want)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a missing file: %v", err)
	}
}

// Every draft the man page names compiles and checks, chosen by $schema.
func TestDrafts(t *testing.T) {
	for _, uri := range []string{
		"http://json-schema.org/draft-04/schema#",
		"http://json-schema.org/draft-06/schema#",
		"http://json-schema.org/draft-07/schema#",
		"https://json-schema.org/draft/2019-09/schema",
		"https://json-schema.org/draft/2020-12/schema",
	} {
		s, err := Load(write(t, `{"$schema":"`+uri+`","type":"object","required":["a"]}`))
		if err != nil {
			t.Errorf("%s: %v", uri, err)
			continue
		}
		if got, want := s.Check([]byte(`{}`)), "at /: missing property 'a'"; got != want {
			t.Errorf("%s: got %q, want %q", uri, got, want)
		}
	}
	// Draft 4 has its own meaning for exclusiveMinimum: a boolean.
	if _, err := Load(write(t, `{"$schema":"http://json-schema.org/draft-04/schema#","minimum":1,"exclusiveMinimum":true}`)); err != nil {
		t.Errorf("draft 4's boolean exclusiveMinimum: %v", err)
	}
	if _, err := Load(write(t, `{"minimum":1,"exclusiveMinimum":true}`)); err == nil {
		t.Errorf("2020-12 took a boolean exclusiveMinimum")
	}
}

// A missing file is told apart by errors.Is, not by its text.
func TestLoadMissingIsNotExist(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v is not fs.ErrNotExist", err)
	}
}
