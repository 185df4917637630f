package peers

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry/agentry/tests/acpclient"
)

// An agent's question through agent-host --acp, with the pinned claude
// (AskUserQuestion) and codex (request_user_input) behind their fake APIs
// (issue 46): an editor that takes forms gets elicitation/create with the
// choices, one that does not a session/request_permission with an option
// a choice; either way the choice, B, is the tool result the model reads
// next.

// questionPeer is what a question test needs of one CLI: its backend and
// environment (with its fake API), and the model's call that asks which
// of A and B.
type questionPeer struct {
	backend string
	env     []string
	api     *server
	ask     string
}

func claudeQuestionPeer(t *testing.T) questionPeer {
	api := fakeAnthropic(t)
	return questionPeer{backend: "claude", api: api,
		env: append(claudeEnv(t, api), "AGENT_HOST_CLAUDE_BIN="+claudeBin, "XDG_STATE_HOME="+t.TempDir()),
		ask: `CALL AskUserQuestion {"questions":[{"question":"Which letter should I use?","header":"Letter","options":[{"label":"A","description":"the first"},{"label":"B","description":"the second"}],"multiSelect":false}]}`}
}

func codexQuestionPeer(t *testing.T) questionPeer {
	api := fakeOpenAI(t)
	return questionPeer{backend: "codex", api: api,
		env: append(codexEnv(t, api), "AGENT_HOST_CODEX_BIN="+codexBin, "XDG_STATE_HOME="+t.TempDir()),
		ask: `CALL request_user_input {"questions":[{"id":"letter","header":"Letter","question":"Which letter should I use?","options":[{"label":"A","description":"the first"},{"label":"B","description":"the second"}]}]}`}
}

// startQuestionACP runs agent-host --acp for p under the official SDK's
// client, initialized with caps, in a session of its own directory.
func startQuestionACP(t *testing.T, p questionPeer, caps map[string]any, flags ...string) (*acpclient.Client, string, string) {
	t.Helper()
	need(t)
	sdk := acpclient.SDK()
	if sdk == "" {
		t.Fatal("no @agentclientprotocol/sdk in $AGENTRY_PEERS/acp (tests/peers/install.sh installs it) or no node")
	}
	hostBin := filepath.Join(filepath.Dir(runagentBin), "agent-host")
	argv := append([]string{hostBin, "--acp", "--backend", p.backend, "--interrupt-grace", "5s"}, flags...)
	c := acpclient.Start(t, sdk, p.env, t.TempDir(), argv...)
	work := t.TempDir()
	return c, c.NewSessionWith(work, caps), work
}

// toolResultTexts are the texts of the tool results the fake API was
// given, in order of its requests: Anthropic's tool_result blocks, the
// Responses API's function_call_output items.
func toolResultTexts(api *server) []string {
	api.mu.Lock()
	defer api.mu.Unlock()
	var out []string
	for _, b := range api.bodies {
		var req struct {
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
			Input []struct {
				Type   string          `json:"type"`
				Output json.RawMessage `json:"output"`
			} `json:"input"`
		}
		_ = json.Unmarshal([]byte(b), &req)
		for _, m := range req.Messages {
			var blocks []struct {
				Type    string          `json:"type"`
				Content json.RawMessage `json:"content"`
			}
			_ = json.Unmarshal(m.Content, &blocks)
			for _, bl := range blocks {
				if bl.Type == "tool_result" {
					out = append(out, flatText(bl.Content))
				}
			}
		}
		for _, it := range req.Input {
			if it.Type == "function_call_output" || it.Type == "custom_tool_call_output" {
				out = append(out, flatText(it.Output))
			}
		}
	}
	return out
}

// flatText is a tool result's content as text: a string, or its blocks'
// texts.
func flatText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &blocks)
	for _, b := range blocks {
		s += b.Text
	}
	return s
}

// answeredB reports whether a tool result the model read holds the
// answer B (claude: "question"="B"; codex: its answers' JSON).
func answeredB(api *server) bool {
	for _, r := range toolResultTexts(api) {
		if strings.Contains(r, `"B"`) {
			return true
		}
	}
	return false
}

func questionByElicitation(t *testing.T, p questionPeer) {
	c, s, _ := startQuestionACP(t, p, map[string]any{"elicitation": map[string]any{"form": map[string]any{}}})
	c.Elicit("B")
	evs, res := c.Call("session/prompt", acpclient.Prompt(s, p.ask))
	var form struct {
		Mode            string `json:"mode"`
		RequestedSchema struct {
			Properties map[string]struct {
				Type string   `json:"type"`
				Enum []string `json:"enum"`
			} `json:"properties"`
		} `json:"requestedSchema"`
	}
	asked := false
	for _, ev := range evs {
		if ev.Event == "permission" {
			t.Error("a session/request_permission to an editor that takes forms")
		}
		if ev.Event == "elicitation" && !asked {
			asked = json.Unmarshal(ev.Params, &form) == nil
		}
	}
	var choices []string
	for _, prop := range form.RequestedSchema.Properties {
		choices = append(choices, prop.Type+":"+strings.Join(prop.Enum, ","))
	}
	if !asked || form.Mode != "form" || strings.Join(choices, " ") != "string:A,B" {
		t.Errorf("elicitation/create with the choices: asked %v, %+v; %v", asked, form, acpclient.Kinds(evs))
	}
	if !answeredB(p.api) || acpclient.StopReason(res) != "end_turn" {
		t.Errorf("the model did not read B as the tool result (%s): %q", acpclient.StopReason(res), toolResultTexts(p.api))
	}
}

func questionByPermission(t *testing.T, p questionPeer) {
	c, s, _ := startQuestionACP(t, p, nil)
	c.Permission("choose:B")
	evs, res := c.Call("session/prompt", acpclient.Prompt(s, p.ask))
	var options []string
	for _, ev := range evs {
		if ev.Event == "elicitation" {
			t.Error("elicitation/create to an editor that did not say it takes forms")
		}
		var perm struct {
			Options []struct {
				Name string `json:"name"`
			} `json:"options"`
		}
		if ev.Event == "permission" && json.Unmarshal(ev.Params, &perm) == nil && options == nil {
			for _, o := range perm.Options {
				options = append(options, o.Name)
			}
		}
	}
	if strings.Join(options, ",") != "A,B,Don't answer" {
		t.Errorf("session/request_permission with the choices: %v; %v", options, acpclient.Kinds(evs))
	}
	if !answeredB(p.api) || acpclient.StopReason(res) != "end_turn" {
		t.Errorf("the model did not read B as the tool result (%s): %q", acpclient.StopReason(res), toolResultTexts(p.api))
	}
}

func TestACPClaudeQuestionElicitation(t *testing.T) {
	need(t)
	questionByElicitation(t, claudeQuestionPeer(t))
}

func TestACPClaudeQuestionPermission(t *testing.T) {
	need(t)
	questionByPermission(t, claudeQuestionPeer(t))
}

func TestACPCodexQuestionElicitation(t *testing.T) {
	need(t)
	questionByElicitation(t, codexQuestionPeer(t))
}

func TestACPCodexQuestionPermission(t *testing.T) {
	need(t)
	questionByPermission(t, codexQuestionPeer(t))
}
