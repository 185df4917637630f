package codex

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/protocol"
	"github.com/agentry/agentry/lib/schema"
	"github.com/tidwall/gjson"
)

// The messages this backend sends, fully filled in, against the pinned
// codex's own schema (codex app-server generate-json-schema, kept in
// testdata/schema): each validates, and every field it has is one the
// schema names, so a misspelt field cannot hide behind an open object.
func TestWireTypesMatchCodexSchema(t *testing.T) {
	cases := []struct {
		file string
		v    any
	}{
		{"InitializeParams", initializeParams{ClientInfo: clientInfo{Name: "agent-host", Title: "agent-host", Version: "1"}}},
		{"ThreadStartParams", threadStartParams{Cwd: "/w", ApprovalPolicy: policyNever, Sandbox: "read-only", Model: "m",
			DeveloperInstructions: "be brief", Config: map[string]any{"sandbox_workspace_write.network_access": true}}},
		{"ThreadStartParams", threadStartParams{ApprovalPolicy: policyUntrusted, Sandbox: "workspace-write", Ephemeral: true}},
		{"ThreadResumeParams", threadResumeParams{ThreadID: "01a2", ExcludeTurns: true, Cwd: "/w", ApprovalPolicy: policyNever, Sandbox: "workspace-write", Model: "m"}},
		{"TurnStartParams", turnStartParams{ThreadID: "01a2", Input: []userInput{{Type: "text", Text: "hi"}}, ApprovalPolicy: policyUntrusted, Model: "m", Effort: "low"}},
		{"TurnStartParams", turnStartParams{ThreadID: "01a2", Input: inputOf(protocol.ChatRunParams{Prompt: "what is this?",
			Attachments: []protocol.Attachment{{Type: protocol.AttachmentImage, MimeType: "image/png", Data: "iVBORw0KGgo="}}})}},
		{"TurnStartParams", turnStartParams{ThreadID: "01a2", Input: inputOf(protocol.ChatRunParams{})}},
		{"ThreadForkParams", threadForkParams{ThreadID: "01a2", Cwd: "/w", ApprovalPolicy: policyNever, Sandbox: "workspace-write", Model: "m",
			DeveloperInstructions: "be brief", Config: map[string]any{"sandbox_workspace_write.writable_roots": []string{"/x"}}}},
		{"ThreadUnsubscribeParams", threadUnsubscribeParams{ThreadID: "01a2"}},
		{"ThreadSetNameParams", threadSetNameParams{ThreadID: "01a2", Name: "agent-host 3f2a"}},
		{"TurnInterruptParams", turnInterruptParams{ThreadID: "01a2", TurnID: "01a3"}},
		{"CommandExecutionRequestApprovalResponse", approvalResponse{Decision: decisionAccept}},
		{"CommandExecutionRequestApprovalResponse", approvalResponse{Decision: decisionAcceptForSession}},
		{"CommandExecutionRequestApprovalResponse", approvalResponse{Decision: decisionDecline}},
		{"FileChangeRequestApprovalResponse", approvalResponse{Decision: decisionCancel}},
		{"ToolRequestUserInputResponse", questionResponse{Answers: map[string]questionAnswer{"color": {Answers: []string{"B"}}}}},
		{"ThreadInjectItemsParams", threadInjectItemsParams{ThreadID: "01a2", Items: []any{map[string]any{"type": "message", "role": "developer"}}}},
	}
	for _, c := range cases {
		path := "testdata/schema/" + c.file + ".json"
		s, err := schema.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(c.v)
		if v := s.Check(b); v != "" {
			t.Errorf("%s %s: %s", c.file, b, v)
		}
		raw, _ := os.ReadFile(path)
		props := gjson.GetBytes(raw, "properties")
		for _, name := range fieldNames(reflect.TypeOf(c.v)) {
			if !props.Get(gjson.Escape(name)).Exists() {
				t.Errorf("%s has no field %q", c.file, name)
			}
		}
	}
	// And what the schema requires, the types have.
	for file, v := range map[string]any{"TurnStartParams": turnStartParams{}, "TurnInterruptParams": turnInterruptParams{}, "ThreadResumeParams": threadResumeParams{}} {
		raw, _ := os.ReadFile("testdata/schema/" + file + ".json")
		names := strings.Join(fieldNames(reflect.TypeOf(v)), " ")
		for _, req := range gjson.GetBytes(raw, "required").Array() {
			if !strings.Contains(" "+names+" ", " "+req.Str+" ") {
				t.Errorf("%s requires %s, which the type lacks", file, req.Str)
			}
		}
	}
}

func fieldNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	return names
}
