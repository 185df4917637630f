package agentrun

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agentry/agentry/lib/protocol"
)

// Answers are a run's answers to its agent's questions (runagent
// --answers): by a question's id or its header, the labels chosen (one
// for a single-choice question) or a free answer's text. A question they
// do not answer ends the run: nothing is ever chosen for the agent.
type Answers map[string][]string

// AnswersError is an answers document that is not one: not a JSON
// object, or a value that is neither a string nor a list of strings
// (Key names it).
type AnswersError struct {
	Key    string
	Reason string
}

func (e *AnswersError) Error() string {
	if e.Key == "" {
		return e.Reason
	}
	return fmt.Sprintf("%q: %s", e.Key, e.Reason)
}

// ParseAnswers reads an answers document: a JSON object whose keys are
// questions' ids or headers and whose values are a label, or a list of
// labels for a multi-select question.
func ParseAnswers(data []byte) (Answers, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil || raw == nil {
		return nil, &AnswersError{Reason: "not a JSON object of answers (question id or header → label, or a list of labels)"}
	}
	a := Answers{}
	for k, v := range raw {
		var one string
		var many []string
		switch {
		case json.Unmarshal(v, &one) == nil && one != "":
			a[k] = []string{one}
		case json.Unmarshal(v, &many) == nil && len(many) > 0 && !slices.Contains(many, ""):
			a[k] = many
		default:
			return nil, &AnswersError{Key: k, Reason: "an answer is a label, or a list of labels (none empty)"}
		}
	}
	return a, nil
}

// lookup is the answer to q and the key it was found by: its id first,
// then its header.
func (a Answers) lookup(q protocol.Question) (key string, labels []string, ok bool) {
	for _, k := range []string{q.ID, q.Header} {
		if l, found := a[k]; found && k != "" {
			return k, l, true
		}
	}
	return "", nil, false
}

// Keys are the answers' keys, sorted.
func (a Answers) Keys() []string {
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// AnswersPrompt opens the prompt of a run that resumes a session stopped
// at a question (runagent --resume ID --answers FILE): the session's
// agent was told nobody answered, so the answers come as new input.
const AnswersPrompt = "Your previous turn stopped at a question you asked, which nobody was there to answer then. A person has answered it now; each line below is the question (its id or header) and the answer chosen:\n\n%s\nGo on with the task with these answers."

// ResumedPrompt is the prompt of a run that resumes a session with
// answers: the answers, then the user's prompt, if any.
func ResumedPrompt(a Answers, prompt string) string {
	var b strings.Builder
	for _, k := range a.Keys() {
		fmt.Fprintf(&b, "- %s: %s\n", k, strings.Join(a[k], ", "))
	}
	p := fmt.Sprintf(AnswersPrompt, b.String())
	if strings.TrimSpace(prompt) != "" {
		p += "\n\n" + prompt
	}
	return p
}

// answering is a run's answers and which of them a question asked for.
type answering struct {
	answers Answers
	used    map[string]bool
}

// answer is the answer to every question of q, or false when one of them
// has none.
func (an *answering) answer(q *protocol.QuestionRequest) (map[string][]string, bool) {
	out := map[string][]string{}
	var keys []string
	for _, question := range q.Questions {
		k, labels, ok := an.answers.lookup(question)
		if !ok {
			return nil, false
		}
		out[question.ID], keys = labels, append(keys, k)
	}
	for _, k := range keys {
		an.used[k] = true
	}
	return out, true
}

// unused are the answers no question asked for, sorted.
func (an *answering) unused() []string {
	var out []string
	for _, k := range an.answers.Keys() {
		if !an.used[k] {
			out = append(out, k)
		}
	}
	return out
}
