package acp

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/protocol"
)

// elicitation is an agent's elicitation/create, the form mode's fields.
type elicitation struct {
	Mode            string `json:"mode"`
	Message         string `json:"message"`
	SessionID       string `json:"sessionId"`
	ToolCallID      string `json:"toolCallId"`
	RequestedSchema struct {
		Properties json.RawMessage `json:"properties"`
	} `json:"requestedSchema"`
}

// field is one property of a form's schema: a question.
type field struct {
	name string
	Type string `json:"type"`
	// Title and Description say what is asked.
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Enum        []string `json:"enum"`
	OneOf       []option `json:"oneOf"`
	Items       *struct {
		Enum  []string `json:"enum"`
		AnyOf []option `json:"anyOf"`
	} `json:"items"`
}

type option struct {
	Const       string `json:"const"`
	Title       string `json:"title"`
	Description string `json:"description"`
}

// choices are the field's options, each a label shown and the value it
// stands for.
func (f field) choices() []option {
	var opts []option
	add := func(values []string, titled []option) {
		for _, v := range values {
			opts = append(opts, option{Const: v, Title: v})
		}
		for _, o := range titled {
			if o.Title == "" {
				o.Title = o.Const
			}
			opts = append(opts, o)
		}
	}
	add(f.Enum, f.OneOf)
	if f.Items != nil {
		add(f.Items.Enum, f.Items.AnyOf)
	}
	if f.Type == "boolean" && len(opts) == 0 {
		opts = []option{{Const: "true", Title: "Yes"}, {Const: "false", Title: "No"}}
	}
	return opts
}

// fieldsOf are a schema's properties, in the order the agent wrote them.
func fieldsOf(props json.RawMessage) []field {
	dec := json.NewDecoder(bytes.NewReader(props))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var fs []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fs
		}
		name, _ := tok.(string)
		var f field
		if dec.Decode(&f) != nil {
			return fs
		}
		f.name = name
		fs = append(fs, f)
	}
	return fs
}

// questionsOf are an elicitation's fields as questions: a field's name is
// its id, its title the header, its description (else title, else the
// elicitation's message) the question.
func questionsOf(e elicitation, fs []field) []protocol.Question {
	var qs []protocol.Question
	for _, f := range fs {
		q := protocol.Question{ID: f.name, Header: f.Title, Question: f.Description, MultiSelect: f.Type == "array"}
		if len(fs) == 1 && e.Message != "" {
			q.Question = e.Message
		}
		if q.Question == "" {
			q.Question = f.Title
		}
		if q.Question == "" {
			q.Question = e.Message
		}
		if q.Question == "" {
			q.Question = f.name
		}
		for _, o := range f.choices() {
			q.Options = append(q.Options, protocol.QuestionOption{Label: o.Title, Description: o.Description})
		}
		qs = append(qs, q)
	}
	return qs
}

// contentOf is the answer as the form's content: each label chosen as the
// value it stands for, typed as the field is.
func contentOf(fs []field, answers map[string][]string) map[string]any {
	content := map[string]any{}
	for _, f := range fs {
		got, ok := answers[f.name]
		if !ok {
			continue
		}
		values := make([]string, 0, len(got))
		for _, label := range got {
			v := label
			for _, o := range f.choices() {
				if o.Title == label {
					v = o.Const
					break
				}
			}
			values = append(values, v)
		}
		if f.Type == "array" {
			content[f.name] = values
			continue
		}
		if len(values) == 0 {
			continue
		}
		v := strings.Join(values, ", ")
		switch f.Type {
		case "boolean":
			if b, err := strconv.ParseBool(v); err == nil {
				content[f.name] = b
			}
		case "integer":
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				content[f.name] = n
			}
		case "number":
			if n, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				content[f.name] = n
			}
		default:
			content[f.name] = v
		}
	}
	return content
}

// elicit answers an agent's elicitation/create: a form is put to the
// turn's Question (each field a question, its enum the choices) and the
// answer sent back as the form's content; with nobody to answer (no turn,
// a run that takes no questions), no answer, or a mode other than form,
// it is declined — never answered with a made-up choice.
func (ag *agent) elicit(params json.RawMessage) (any, error) {
	var e elicitation
	if err := decode(params, &e); err != nil {
		return nil, err
	}
	decline := map[string]string{"action": "decline"}
	ts := ag.current()
	if ts == nil || ts.t.Question == nil || e.Mode != "form" {
		return decline, nil
	}
	fs := fieldsOf(e.RequestedSchema.Properties)
	if len(fs) == 0 {
		return decline, nil
	}
	a := ts.t.Question(host.QuestionAsk{ToolCallID: ts.known(e.ToolCallID), Questions: questionsOf(e, fs)})
	if ts.isInterrupted() {
		return map[string]string{"action": "cancel"}, nil
	}
	if !a.Answered {
		return decline, nil
	}
	return map[string]any{"action": "accept", "content": contentOf(fs, a.Answers)}, nil
}
