package acp

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentry/agentry/lib/policy"
	"github.com/agentry/agentry/lib/protocol"
)

func TestCallOf(t *testing.T) {
	cases := []struct {
		name string
		tc   string
		want policy.Call
	}{
		{"claude's Bash", `{"toolCallId":"1","title":"git push","kind":"execute","rawInput":{"command":"git push origin x"}}`,
			policy.Call{Tool: "git push", Command: "git push origin x"}},
		{"codex's exec", `{"toolCallId":"2","title":"touch a","kind":"execute","rawInput":{"command":["/bin/bash","-lc","touch a"],"cwd":"/w"}}`,
			policy.Call{Tool: "touch a", Argv: []string{"/bin/bash", "-lc", "touch a"}, Dir: "/w"}},
		{"codex's exec_command", `{"toolCallId":"3","title":"exec_command","rawInput":{"cmd":"touch a"}}`,
			policy.Call{Tool: "exec_command", Command: "touch a"}},
		{"an edit", `{"toolCallId":"4","title":"Edit .env","kind":"edit","locations":[{"path":"/w/.env"}],"rawInput":{"file_path":"/w/sub/.env"}}`,
			policy.Call{Tool: "Edit .env", Writes: []string{"/w/.env", "/w/sub/.env"}}},
		{"a read", `{"toolCallId":"5","title":"Read","kind":"read","locations":[{"path":"/w/a"}]}`,
			policy.Call{Tool: "Read", Reads: []string{"/w/a"}}},
		{"a fetch", `{"toolCallId":"6","title":"Fetch","kind":"fetch","rawInput":{"url":"https://example.com/x"}}`,
			policy.Call{Tool: "Fetch", Hosts: []string{"https://example.com/x"}}},
		{"a patch", `{"toolCallId":"7","title":"patch","kind":"edit","rawInput":{"changes":{"/w/b":{"type":"add"}}}}`,
			policy.Call{Tool: "patch", Writes: []string{"/w/b"}}},
		{"another kind", `{"toolCallId":"8","title":"mcp","kind":"other","rawInput":{"path":"/w/c"}}`,
			policy.Call{Tool: "mcp", Reads: []string{"/w/c"}, Writes: []string{"/w/c"}}},
	}
	for _, c := range cases {
		var tc toolCall
		if err := json.Unmarshal([]byte(c.tc), &tc); err != nil {
			t.Fatal(err)
		}
		if got := callOf(tc); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestTerminalCall(t *testing.T) {
	line := terminalCall(createTerminal{Command: "git push && true"}, "/w")
	argv := terminalCall(createTerminal{Command: "sh", Args: []string{"-c", "git push"}}, "/w")
	if line.Command != "git push && true" || len(line.Argv) != 0 || !reflect.DeepEqual(argv.Argv, []string{"sh", "-c", "git push"}) || argv.Dir != "/w" {
		t.Errorf("%+v %+v", line, argv)
	}
}

func TestElicitationQuestions(t *testing.T) {
	var e elicitation
	raw := `{"mode":"form","message":"Pick","sessionId":"s","requestedSchema":{"type":"object","properties":{
		"db":{"type":"string","title":"Database","description":"Which database?","oneOf":[{"const":"pg","title":"Postgres"},{"const":"sq","title":"SQLite"}]},
		"extras":{"type":"array","title":"Extras","items":{"type":"string","enum":["A","B"]}},
		"ok":{"type":"boolean","title":"Go on?"},
		"n":{"type":"integer","title":"How many"}}}}`
	if err := json.Unmarshal([]byte(raw), &e); err != nil {
		t.Fatal(err)
	}
	fs := fieldsOf(e.RequestedSchema.Properties)
	qs := questionsOf(e, fs)
	want := []protocol.Question{
		{ID: "db", Header: "Database", Question: "Which database?", Options: []protocol.QuestionOption{{Label: "Postgres"}, {Label: "SQLite"}}},
		{ID: "extras", Header: "Extras", Question: "Extras", Options: []protocol.QuestionOption{{Label: "A"}, {Label: "B"}}, MultiSelect: true},
		{ID: "ok", Header: "Go on?", Question: "Go on?", Options: []protocol.QuestionOption{{Label: "Yes"}, {Label: "No"}}},
		{ID: "n", Header: "How many", Question: "How many"},
	}
	if !reflect.DeepEqual(qs, want) {
		t.Errorf("questions %+v\nwant %+v", qs, want)
	}
	got := contentOf(fs, map[string][]string{"db": {"SQLite"}, "extras": {"B"}, "ok": {"Yes"}, "n": {"3"}})
	wantContent := map[string]any{"db": "sq", "extras": []string{"B"}, "ok": true, "n": int64(3)}
	if !reflect.DeepEqual(got, wantContent) {
		t.Errorf("content %v, want %v", got, wantContent)
	}
}
