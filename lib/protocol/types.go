// Package protocol is the agent-host protocol, version 1: its vocabulary of
// message types, and how a line is classified against it.
//
// The table here is the one place the suite lists the v1 message types;
// agent-host and "ndjson check --protocol agent-host" both use it.
package protocol

import (
	"bytes"

	"github.com/agentry/agentry/lib/ndjson"
	"github.com/tidwall/gjson"
)

// Version is the protocol version this package speaks.
const Version = 1

// Kind is the role a message type plays on the wire.
type Kind uint8

const (
	Request Kind = iota + 1 // daemon → host, carries an id
	Reply                   // host → daemon, carries the id of its request
	Stream                  // host → daemon, part of a run
	Notice                  // host → daemon, unsolicited
)

func (k Kind) String() string {
	switch k {
	case Request:
		return "request"
	case Reply:
		return "reply"
	case Stream:
		return "stream"
	case Notice:
		return "notice"
	}
	return "unknown"
}

// table lists every v1 message type with its kind, in protocol order.
func table() []struct {
	Type string
	Kind Kind
} {
	return []struct {
		Type string
		Kind Kind
	}{
		{"hello", Request}, {"run_turn", Request}, {"interrupt", Request},
		{"one_shot", Request}, {"warm_session", Request}, {"set_mcp_servers", Request},
		{"refresh_tools", Request}, {"list_models", Request}, {"plan_usage", Request},
		{"session_info", Request}, {"reset_session", Request}, {"shutdown", Request},
		{"ping", Request}, {"answer_permission", Request}, {"answer_question", Request},
		{"ready", Reply}, {"ok", Reply}, {"run_done", Reply}, {"error", Reply},
		{"models", Reply}, {"usage", Reply}, {"session", Reply}, {"bye", Reply},
		{"event", Stream}, {"permission_request", Stream}, {"permission_resolved", Stream},
		{"question", Stream}, {"question_resolved", Stream},
		{"log", Notice}, {"metric", Notice},
	}
}

// Types returns every v1 message type, in protocol order.
func Types() []string {
	t := table()
	out := make([]string, len(t))
	for i, e := range t {
		out[i] = e.Type
	}
	return out
}

// KindOf returns the kind of a v1 message type, and false for a type v1
// does not have.
func KindOf(typ string) (Kind, bool) {
	for _, e := range table() {
		if e.Type == typ {
			return e.Kind, true
		}
	}
	return 0, false
}

// Reasons a line is not a v1 message.
const (
	ReasonMalformedJSON = "malformed_json" // not JSON, or not valid UTF-8
	ReasonNotAnObject   = "not_an_object"  // JSON, but not an object
	ReasonUnknownType   = "unknown_type"   // an object whose type v1 lacks, or with no string type
	ReasonTooLong       = "too_long"       // over the line cap; never read whole
)

// Classify tells what a line is: a known v1 message type (reason empty),
// or unknown with one of the Reason values. typ is the line's type field
// when it has a string one.
func Classify(line []byte) (typ, reason string) {
	switch ndjson.Check(line) {
	case ndjson.Valid:
	default:
		return "", ReasonMalformedJSON
	}
	if trimmed := bytes.TrimLeft(line, " \t\r"); len(trimmed) == 0 || trimmed[0] != '{' {
		return "", ReasonNotAnObject
	}
	t := gjson.GetBytes(line, "type")
	if t.Type != gjson.String {
		return "", ReasonUnknownType
	}
	if _, ok := KindOf(t.Str); !ok {
		return t.Str, ReasonUnknownType
	}
	return t.Str, ""
}
