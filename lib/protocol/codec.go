package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/tidwall/gjson"
)

// Parse reads one line into a message. It never panics and never fails: a
// line that is not a v1 message comes back as an *Unknown with a reason,
// and a known type with missing or ill-typed fields as a *BadMessage.
// Fields a type does not define are kept in its Extra.
func Parse(line []byte) Msg {
	typ, reason := Classify(line)
	if reason != "" {
		u := &Unknown{Reason: reason, Type: typ}
		u.Raw, u.Cut = keep(line)
		if reason == ReasonUnknownType {
			if id := gjson.GetBytes(line, "id"); id.Type == gjson.String {
				u.ID = id.Str
			}
		}
		return u
	}
	m := newMsg(typ)
	if err := json.Unmarshal(line, m); err != nil {
		return bad(typ, line, err.Error())
	}
	if err := required(m); err != "" {
		return bad(typ, line, err)
	}
	if _, ok := m.(*RunTurn); ok {
		if err := levelsGiven(line); err != "" {
			return bad(typ, line, err)
		}
	}
	setExtra(m, line)
	return m
}

func bad(typ string, line []byte, why string) *BadMessage {
	b := &BadMessage{Type: typ, Err: strings.TrimPrefix(why, "json: ")}
	b.Raw, b.Cut = keep(line)
	if id := gjson.GetBytes(line, "id"); id.Type == gjson.String {
		b.ID = id.Str
	}
	return b
}

// keep is a copy of line's first MaxRaw bytes, and how many it left out.
func keep(line []byte) ([]byte, int) {
	n := min(len(line), MaxRaw)
	return append([]byte(nil), line[:n]...), len(line) - n
}

// levelsGiven checks every params.level of a run_turn line, a repeated
// key's members each (the decoder takes the last, a lookup the first):
// none may be other than 1, 2 or 3.
func levelsGiven(line []byte) string {
	why := ""
	gjson.ParseBytes(line).ForEach(func(k, params gjson.Result) bool {
		if k.Str == "params" && params.IsObject() {
			params.ForEach(func(k, v gjson.Result) bool {
				if k.Str == "level" {
					why = levelGiven(v)
				}
				return why == ""
			})
		}
		return why == ""
	})
	return why
}

// levelGiven checks a run's params.level, when it is given: 1, 2 or 3.
// Any other (0 and negative ones included, which would read as none
// given, the backend's default) is refused, never run at another level.
func levelGiven(l gjson.Result) string {
	if !l.Exists() || l.Type == gjson.Null {
		return ""
	}
	switch l.Raw {
	case "1", "2", "3":
		return ""
	}
	return "params.level " + l.Raw + ": the levels are 1, 2 and 3"
}

// required checks the fields a request cannot do without.
func required(m Msg) string {
	v := reflect.ValueOf(m).Elem()
	if kind, _ := KindOf(m.MsgType()); kind == Request && v.FieldByName("ID").String() == "" {
		return "missing id"
	}
	switch m := m.(type) {
	case *RunTurn:
		switch {
		case m.RunID == "":
			return "missing runId"
		case m.Params.ChatID == "":
			return "missing params.chatId"
		}
	case *OneShot:
		if m.RunID == "" {
			return "missing runId"
		}
	case *Interrupt:
		if m.ChatID == "" && m.RunID == "" {
			return "missing chatId"
		}
	case *WarmSession:
		if m.ChatID == "" {
			return "missing chatId"
		}
	case *SetMCPServers:
		if m.ChatID == "" {
			return "missing chatId"
		}
	case *RefreshTools:
		if m.ChatID == "" {
			return "missing chatId"
		}
	case *SessionInfoReq:
		if m.ChatID == "" {
			return "missing chatId"
		}
	case *ResetSession:
		if m.ChatID == "" {
			return "missing chatId"
		}
	case *Hello:
		if m.Protocol == 0 {
			return "missing protocol"
		}
	case *AnswerQuestion:
		switch {
		case m.RunID == "":
			return "missing runId"
		case m.RequestID == "":
			return "missing requestId"
		}
	case *AnswerPermission:
		switch {
		case m.RunID == "":
			return "missing runId"
		case m.RequestID == "":
			return "missing requestId"
		}
	}
	return ""
}

// known returns the JSON names of a struct's fields.
func known(t reflect.Type) map[string]bool {
	names := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		tag := t.Field(i).Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name != "" && name != "-" {
			names[name] = true
		}
	}
	return names
}

// setExtra keeps the fields of line that m's type does not define.
func setExtra(m Msg, line []byte) {
	f := reflect.ValueOf(m).Elem().FieldByName("Extra")
	if !f.IsValid() {
		return
	}
	if extra := extraFields(line, msgFields()[m.MsgType()]); extra != nil {
		f.Set(reflect.ValueOf(extra))
	}
}

// msgFields holds, for each message type, the names of its fields and
// "type"; read-only, built on first use.
var msgFields = sync.OnceValue(func() map[string]map[string]bool {
	all := map[string]map[string]bool{}
	for _, typ := range Types() {
		names := known(reflect.TypeOf(newMsg(typ)).Elem())
		names["type"] = true
		all[typ] = names
	}
	return all
})

// extraFields returns the fields of the object obj whose names are not in
// names, or nil when there are none.
func extraFields(obj []byte, names map[string]bool) Extra {
	if len(obj) == 0 {
		return nil
	}
	var extra Extra
	// A view of obj, not a copy (gjson.ParseBytes would copy the whole
	// line, and an extra field's value would keep that copy alive): what is
	// kept is copied out of it, field by field.
	view := unsafe.String(&obj[0], len(obj))
	gjson.Parse(view).ForEach(func(k, val gjson.Result) bool {
		if !names[k.Str] {
			if extra == nil {
				extra = Extra{}
			}
			extra[strings.Clone(k.Str)] = json.RawMessage(val.Raw)
		}
		return true
	})
	return extra
}

// appendExtra appends extra's fields to the JSON object body, in key order;
// a field whose value is no JSON (empty, say) is left out, so that the
// line stays one JSON object.
func appendExtra(body []byte, extra Extra) []byte {
	if len(extra) == 0 {
		return body
	}
	keys := slices.Sorted(maps.Keys(extra))
	b := body[:len(body)-1] // drop the '}'
	for _, k := range keys {
		if !json.Valid(extra[k]) {
			continue
		}
		if b[len(b)-1] != '{' {
			b = append(b, ',')
		}
		kb, _ := json.Marshal(k)
		b = append(append(append(b, kb...), ':'), extra[k]...)
	}
	return append(b, '}')
}

// Marshal is json.Marshal without the HTML escaping: a "<" in a shell
// command reaches the daemon (and a grep) as "<", not "\u003c". It is
// how every message is written, and what a backend builds its events'
// JSON with.
func Marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil || !bytes.Contains(b, []byte(`\u00`)) {
		return b, err
	}
	return unescapeHTML(b), nil
}

// unescapeHTML undoes json.Marshal's \u003c, \u003e and \u0026, walking
// the escapes in order so that an escaped backslash followed by "u003c"
// text is left alone.
func unescapeHTML(b []byte) []byte {
	out := b[:0]
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			out = append(out, b[i])
			continue
		}
		if b[i+1] == 'u' && i+6 <= len(b) {
			switch string(b[i+2 : i+6]) {
			case "003c":
				out, i = append(out, '<'), i+5
				continue
			case "003e":
				out, i = append(out, '>'), i+5
				continue
			case "0026":
				out, i = append(out, '&'), i+5
				continue
			}
		}
		out, i = append(out, b[i], b[i+1]), i+1
	}
	return out
}

// marshalExtra marshals v, a struct without JSON methods, with extra's
// fields after its own.
func marshalExtra(v any, extra Extra) ([]byte, error) {
	body, err := Marshal(v)
	if err != nil {
		return nil, err
	}
	return appendExtra(body, extra), nil
}

// unmarshalExtra unmarshals data into v, a pointer to a struct without JSON
// methods whose field names are names, and returns the other fields.
func unmarshalExtra(data []byte, v any, names map[string]bool) (Extra, error) {
	if err := json.Unmarshal(data, v); err != nil {
		return nil, err
	}
	return extraFields(data, names), nil
}

func raw(b []byte, cut int) ([]byte, error) {
	if cut > 0 {
		return nil, fmt.Errorf("protocol: the line was %d bytes, and only its first %d were kept", len(b)+cut, len(b))
	}
	return b, nil
}

// Encode writes a message as one line of JSON, without the newline: its
// "type", its fields, then any Extra fields in key order. An *Unknown or
// *BadMessage is written back as the line it was.
func Encode(m Msg) ([]byte, error) {
	switch m := m.(type) {
	case *Unknown:
		return raw(m.Raw, m.Cut)
	case *BadMessage:
		return raw(m.Raw, m.Cut)
	}
	body, err := Marshal(m)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(len(body) + 24)
	b.WriteString(`{"type":"`)
	b.WriteString(m.MsgType())
	b.WriteByte('"')
	if len(body) > 2 {
		b.WriteByte(',')
		b.Write(body[1 : len(body)-1])
	}
	b.WriteByte('}')
	if f := reflect.ValueOf(m).Elem().FieldByName("Extra"); f.IsValid() && f.Len() > 0 {
		return appendExtra(b.Bytes(), f.Interface().(Extra)), nil
	}
	return b.Bytes(), nil
}

// RequestID returns the id of a request, or of an unknown or bad line that
// carried one; "" otherwise.
func RequestID(m Msg) string {
	switch m := m.(type) {
	case *Unknown:
		return m.ID
	case *BadMessage:
		return m.ID
	}
	if f := reflect.ValueOf(m).Elem().FieldByName("ID"); f.IsValid() {
		return f.String()
	}
	return ""
}
