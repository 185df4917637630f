package agentrun

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/grant"
	"github.com/agentry/agentry/lib/proc"
)

// A run's grant is made again with its files directory and its services'
// URL: the tools URL's token, the services' URL and the system prompt are
// in the grant's files (claude) or its configuration file (codex), and
// none of them is on the argv, which every user of the machine can read.
func TestRegrantKeepsSecretsOffTheArgv(t *testing.T) {
	const token, prompt, url = "TOKEN-IN-THE-TOOLS-URL", "SECRET-PROMPT-WORDS", "http://127.0.0.1:40123/mcp"
	for _, h := range []string{grant.Claude, grant.Codex} {
		o := grant.Options{Level: 2, Harness: h, ToolsURL: "http://127.0.0.1:7/run/" + token, ServicesURL: url,
			AppendSystemPrompt: prompt, FilesDir: "/run/dir"}
		req := regrant(Request{Options: o})
		argv := strings.Join(req.Grant.Argv, " ")
		kept := req.Grant.CodexConfig
		for _, f := range req.Grant.Files {
			kept += f.Content
			if !strings.HasPrefix(f.Path, "/run/dir/") {
				t.Errorf("%s: a file outside the run's directory: %s", h, f.Path)
			}
		}
		for _, secret := range []string{token, prompt, url} {
			if strings.Contains(argv, secret) {
				t.Errorf("%s: %s is on the argv: %s", h, secret, argv)
			}
			if !strings.Contains(kept, secret) {
				t.Errorf("%s: %s is in none of the grant's files", h, secret)
			}
		}
	}
}

// A service's end reads as it always did: its exit among its fields, in
// their order.
func TestServiceEndJSON(t *testing.T) {
	code := 3
	b, _ := json.Marshal(ServiceEnd{Name: "web", Command: []string{"x"}, Port: 80, URL: "http://h/", Status: "exited",
		StoppedBy: "runagent", Ended: proc.Ended{ExitCode: &code, Signal: "SIGTERM"}, Tail: []string{"t"}})
	want := `{"name":"web","command":["x"],"port":80,"url":"http://h/","status":"exited","stoppedBy":"runagent","exitCode":3,"signal":"SIGTERM","tail":["t"]}`
	if string(b) != want {
		t.Errorf("%s\nwant %s", b, want)
	}
}
