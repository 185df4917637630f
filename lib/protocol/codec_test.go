package protocol

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func fixture(t testing.TB) []json.RawMessage {
	b, err := os.ReadFile("testdata/agent-host_v1.json")
	if err != nil {
		t.Fatal(err)
	}
	var msgs []json.RawMessage
	if err := json.Unmarshal(b, &msgs); err != nil {
		t.Fatal(err)
	}
	return msgs
}

func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// TestFixtureReplay parses and re-serialises every sample, and holds the
// fixture to exactly the protocol's type list: a type cannot be added
// without a sample.
func TestFixtureReplay(t *testing.T) {
	seen := map[string]bool{}
	for _, raw := range fixture(t) {
		var line bytes.Buffer
		json.Compact(&line, raw)
		m := Parse(line.Bytes())
		switch m.(type) {
		case *Unknown, *BadMessage:
			t.Errorf("fixture line does not parse: %+v", m)
			continue
		}
		seen[m.MsgType()] = true
		out, err := Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		if !sameJSON(out, line.Bytes()) {
			t.Errorf("round trip changed the message:\n in  %s\n out %s", line.Bytes(), out)
		}
		if bytes.IndexByte(out, '\n') >= 0 {
			t.Errorf("encoded message spans lines: %s", out)
		}
	}
	var got []string
	for k := range seen {
		got = append(got, k)
	}
	want := Types()
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("fixture types %v\nprotocol types %v", got, want)
	}
}

func TestUnknownFieldsSurvive(t *testing.T) {
	m := Parse([]byte(`{"type":"ping","id":"g2","trace":{"span":"a1b2"},"priority":7}`))
	p, ok := m.(*Ping)
	if !ok || p.ID != "g2" || string(p.Extra["trace"]) != `{"span":"a1b2"}` {
		t.Fatalf("got %#v", m)
	}
	out, _ := Encode(p)
	if string(out) != `{"type":"ping","id":"g2","priority":7,"trace":{"span":"a1b2"}}` {
		t.Errorf("encoded %s", out)
	}
}

// A new event type, a new field on a known event and a new usage counter
// all reach a daemon, and go back out as they came.
func TestUnknownEventFieldsSurvive(t *testing.T) {
	for _, line := range []string{
		`{"type":"event","runId":"r1","seq":3,"event":{"type":"citation","url":"https://example.com","title":"x"}}`,
		`{"type":"event","runId":"r1","seq":4,"event":{"type":"text_delta","text":"hi","lang":"en"}}`,
		`{"type":"event","runId":"r1","seq":5,"event":{"type":"completed","text":"ok","usage":{"inputTokens":3,"outputTokens":4,"reasoningTokens":9}}}`,
		`{"type":"run_done","id":"t1","runId":"r1","events":5,"usage":{"inputTokens":3,"outputTokens":4,"reasoningTokens":9}}`,
	} {
		m := Parse([]byte(line))
		out, err := Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		if !jsonEqual(t, out, []byte(line)) {
			t.Errorf("in  %s\nout %s", line, out)
		}
	}
	e := Parse([]byte(`{"type":"event","runId":"r1","seq":4,"event":{"type":"text_delta","text":"hi","lang":"en"}}`)).(*Event)
	if e.Event.Text != "hi" || string(e.Event.Extra["lang"]) != `"en"` {
		t.Errorf("event: %+v", e.Event)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

func TestParseBadLines(t *testing.T) {
	cases := []struct {
		line, reason, id string
	}{
		{`{"type":`, ReasonMalformedJSON, ""},
		{`[1]`, ReasonNotAnObject, ""},
		{`{"type":"frob","id":"q1"}`, ReasonUnknownType, "q1"},
		{`{"id":"q2"}`, ReasonUnknownType, "q2"},
		{"{\"type\":\"ping\",\"id\":\"\xff\"}", ReasonMalformedJSON, ""},
	}
	for _, c := range cases {
		u, ok := Parse([]byte(c.line)).(*Unknown)
		if !ok || u.Reason != c.reason || u.ID != c.id || string(u.Raw) != c.line {
			t.Errorf("Parse(%q) = %+v", c.line, u)
		}
	}
	for _, line := range []string{`{"type":"ping"}`, `{"type":"ping","id":5}`, `{"type":"run_turn","id":"t","runId":"r","params":{}}`,
		`{"type":"run_turn","id":"t","params":{"chatId":"c"}}`, `{"type":"hello","id":"h"}`, `{"type":"interrupt","id":"i"}`,
		// answer_permission names the request it answers: without either
		// id it is a bad request, not an answer to an unknown one.
		`{"type":"answer_permission","id":"a","requestId":"p1","decision":"allow"}`,
		`{"type":"answer_permission","id":"a","runId":"r","decision":"allow"}`} {
		if b, ok := Parse([]byte(line)).(*BadMessage); !ok || b.Err == "" {
			t.Errorf("Parse(%s) = %#v, want a BadMessage", line, Parse([]byte(line)))
		}
	}
	if b := Parse([]byte(`{"type":"ping","id":5}`)).(*BadMessage); b.ID != "" {
		t.Errorf("id %q from a numeric id", b.ID)
	}
}

// FuzzParse: the codec is total — nothing panics — and whatever parses as
// a message encodes to a line that parses to the same message.
func FuzzParse(f *testing.F) {
	for _, raw := range fixture(f) {
		var line bytes.Buffer
		json.Compact(&line, raw)
		f.Add(line.Bytes())
	}
	f.Add([]byte(`{"type":"run_turn","id":"t","runId":"r","params":{"chatId":"c","prompt":"\u0000"}}`))
	f.Add([]byte(`{"type":"event","runId":"r","seq":1,"event":{"type":"text","text":"x"},"extra":[1,2]}`))
	f.Add([]byte(`{"type":"event","runId":"r","seq":2,"event":{"type":"new","a\"b":1,"usage":{"inputTokens":1,"more":{}}}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		m := Parse(line)
		out, err := Encode(m)
		if err != nil {
			t.Fatalf("Encode(%#v): %v", m, err)
		}
		switch m.(type) {
		case *Unknown, *BadMessage:
			if !bytes.Equal(out, line) {
				t.Fatalf("unknown line not kept: %q → %q", line, out)
			}
			return
		}
		again := Parse(out)
		out2, _ := Encode(again)
		if !bytes.Equal(out, out2) {
			t.Fatalf("not stable:\n%s\n%s\n%s", line, out, out2)
		}
	})
}

// agent-host-protocol(7) documents every message type, event type and
// error code.
func TestProtocolManPage(t *testing.T) {
	page, err := os.ReadFile("../../man/agent-host-protocol.7")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	names = append(names, Types()...)
	names = append(names, EventTypes()...)
	names = append(names, ErrorCodes()...)
	for _, n := range names {
		if !strings.Contains(string(page), ".Ql "+n) && !strings.Contains(string(page), ".It Ql "+n) {
			t.Errorf("man/agent-host-protocol.7 does not document %s", n)
		}
	}
}

// Messages are written without HTML escaping, and an escaped backslash
// before "u003c" text stays as it was.
func TestEncodeWithoutHTMLEscapes(t *testing.T) {
	b, err := Encode(&Log{Level: "info", Component: "host", Msg: `echo a > b && c < d \u003c`})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"log","level":"info","component":"host","msg":"echo a > b && c < d \\u003c"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	m, ok := Parse(b).(*Log)
	if !ok || m.Msg != `echo a > b && c < d \u003c` {
		t.Errorf("round trip: %#v", Parse(b))
	}
}

// A line that is not a message keeps at most MaxRaw of itself, and says
// how much it dropped; such a cut line cannot be written back out.
func TestParseKeepsLittleOfABadLine(t *testing.T) {
	long := `{"type":"run_turn","id":"t1","runId":"r","params":{"chatId":5,"prompt":"` + strings.Repeat("x", 3*MaxRaw) + `"}}`
	b, ok := Parse([]byte(long)).(*BadMessage)
	if !ok || b.ID != "t1" || len(b.Raw) != MaxRaw || b.Cut != len(long)-MaxRaw || string(b.Raw) != long[:MaxRaw] {
		t.Fatalf("%T id %q raw %d cut %d", Parse([]byte(long)), b.ID, len(b.Raw), b.Cut)
	}
	if _, err := Encode(b); err == nil {
		t.Error("a cut line was written back out")
	}
	u, ok := Parse([]byte(`{"type":"nope","id":"u1","pad":"` + strings.Repeat("y", MaxRaw) + `"}`)).(*Unknown)
	if !ok || u.ID != "u1" || len(u.Raw) != MaxRaw || u.Cut == 0 {
		t.Fatalf("unknown: %+v", u)
	}
	short := `{"type":"ping"}`
	if b, ok := Parse([]byte(short)).(*BadMessage); !ok || string(b.Raw) != short || b.Cut != 0 {
		t.Errorf("a short bad line: %+v", Parse([]byte(short)))
	} else if out, err := Encode(b); err != nil || string(out) != short {
		t.Errorf("written back: %q %v", out, err)
	}
}

// An answer may be one bare label; any other shape is refused in the
// protocol's words, not Go's.
func TestAnswerQuestionShapes(t *testing.T) {
	m := Parse([]byte(`{"type":"answer_question","id":"a","runId":"r","requestId":"q1","answers":{"DB":"SQLite","Tags":["a","b"]}}`))
	a, ok := m.(*AnswerQuestion)
	if !ok || !reflect.DeepEqual(a.Answers, map[string][]string{"DB": {"SQLite"}, "Tags": {"a", "b"}}) || a.RunID != "r" {
		t.Fatalf("got %#v", m)
	}
	out, _ := Encode(a)
	if !jsonEqual(t, out, []byte(`{"type":"answer_question","id":"a","runId":"r","requestId":"q1","answers":{"DB":["SQLite"],"Tags":["a","b"]}}`)) {
		t.Errorf("encoded %s", out)
	}
	for _, answers := range []string{`{"DB":5}`, `{"DB":{"x":1}}`, `{"DB":[1]}`, `["SQLite"]`, `"SQLite"`} {
		line := `{"type":"answer_question","id":"a","runId":"r","requestId":"q1","answers":` + answers + `}`
		b, ok := Parse([]byte(line)).(*BadMessage)
		if !ok || b.Err != ErrAnswersShape || b.ID != "a" {
			t.Errorf("answers %s: got %#v", answers, Parse([]byte(line)))
		}
	}
}

// An extra field with no JSON in it (an agent's missing tool call) is left
// out: the line stays one JSON object.
func TestEncodeDropsAnEmptyExtra(t *testing.T) {
	b, err := Encode(&PermissionRequest{RunID: "r1", RequestID: "p1", Tool: "t", Input: json.RawMessage(`{}`),
		Choices: []string{DecisionAllow}, Extra: Extra{"acpToolCall": nil, "kept": json.RawMessage(`{"a":1}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b) || strings.Contains(string(b), "acpToolCall") || !strings.Contains(string(b), `"kept":{"a":1}`) {
		t.Errorf("encoded %s", b)
	}
}

// A run's level is 1, 2 or 3 in every member of a repeated key, since the
// decoder takes the last and a lookup the first.
func TestRunLevelRepeated(t *testing.T) {
	for _, line := range []string{
		`{"type":"run_turn","id":"t1","runId":"r1","params":{"chatId":"c","prompt":"p","level":2,"level":0}}`,
		`{"type":"run_turn","id":"t1","runId":"r1","params":{"chatId":"c","prompt":"p","level":-1}}`,
		`{"type":"run_turn","id":"t1","runId":"r1","params":{"chatId":"c","prompt":"p","level":2},"params":{"chatId":"c","prompt":"p","level":0}}`,
	} {
		if m, ok := Parse([]byte(line)).(*BadMessage); !ok || !strings.Contains(m.Err, "the levels are 1, 2 and 3") {
			t.Errorf("%s: parsed as %#v", line, Parse([]byte(line)))
		}
	}
	if _, ok := Parse([]byte(`{"type":"run_turn","id":"t1","runId":"r1","params":{"chatId":"c","prompt":"p","level":3}}`)).(*RunTurn); !ok {
		t.Error("level 3 refused")
	}
}
