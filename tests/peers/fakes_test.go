package peers

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The fake model is scripted by the conversation itself, so a test says
// what the model does in its prompt:
//
//	CALL <tool> <json input>   the model calls a tool
//	ERROR <status>             the API answers with that HTTP error
//	SLOW <n>                   n text deltas, 50 ms apart
//	STALL <n>                  one text delta, then nothing for n seconds
//	RECALL                     the model repeats the conversation's first prompt
//	SAY <text>                 the model says text
//	FAILAFTER <text>           (Responses API) says text, then the response fails
//
//	STEPS:                     then one CALL per line: the model makes the
//	                           calls one after another, each after the result
//	                           of the one before, then says RESULTS: and every
//	                           result, joined by " | "
//
// After a tool call, the model says TOOL_RESULT(<isError>): <result text>.
var directiveRE = regexp.MustCompile(`(CALL (\S+) (\{.*\})|ERROR (\d{3})|SLOW (\d+)|RECALL|SAY (.*)|FAILAFTER (.*)|STALL (\d+))`)

type turn struct {
	kind    string // call, error, slow, text
	tool    string
	input   string
	status  int
	n       int
	text    string
	isError bool
}

// decide reads the conversation: the last tool result if the last message
// holds one, else the directive in the latest user text.
func decide(lastUser string, toolResult *string, toolError bool, firstUser string) turn {
	return decideSteps(lastUser, lastUser, nil, toolResult, toolError, firstUser)
}

// decideSteps is decide, knowing also the latest user text and the tool
// results that came after it, for STEPS.
func decideSteps(lastText, lastUser string, results []string, toolResult *string, toolError bool, firstUser string) turn {
	if _, script, ok := strings.Cut(lastText, "STEPS:"); ok {
		var steps []string
		for _, line := range strings.Split(script, "\n") {
			if line = strings.TrimSpace(line); strings.HasPrefix(line, "CALL ") {
				steps = append(steps, line)
			}
		}
		if len(results) < len(steps) {
			return decide(steps[len(results)], nil, false, firstUser)
		}
		return turn{kind: "text", text: "RESULTS: " + strings.Join(results, " | ")}
	}
	if toolResult != nil {
		return turn{kind: "text", text: fmt.Sprintf("TOOL_RESULT(%s): %s", strings.Title(strconv.FormatBool(toolError)), *toolResult)}
	}
	m := directiveRE.FindStringSubmatch(lastUser)
	switch {
	case m == nil:
		return turn{kind: "text", text: "ok"}
	case m[2] != "":
		return turn{kind: "call", tool: m[2], input: m[3]}
	case m[4] != "":
		st, _ := strconv.Atoi(m[4])
		return turn{kind: "error", status: st}
	case m[5] != "":
		n, _ := strconv.Atoi(m[5])
		return turn{kind: "slow", n: n}
	case m[0] == "RECALL":
		return turn{kind: "text", text: "FIRST PROMPT WAS: " + firstUser}
	case m[7] != "":
		return turn{kind: "failafter", text: strings.TrimSpace(m[7])}
	case m[8] != "":
		n, _ := strconv.Atoi(m[8])
		return turn{kind: "stall", n: n}
	}
	return turn{kind: "text", text: strings.TrimSpace(m[6])}
}

// server is a fake HTTP API on loopback, counting its requests.
type server struct {
	URL      string
	mu       sync.Mutex
	requests int
	bodies   []string
	srv      *http.Server
}

func serve(t *testing.T, h func(s *server) http.Handler) *server {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{URL: "http://" + ln.Addr().String()}
	s.srv = &http.Server{Handler: h(s)}
	go s.srv.Serve(ln)
	t.Cleanup(func() { s.srv.Close() })
	return s
}

func (s *server) record(body string) {
	s.mu.Lock()
	s.requests++
	s.bodies = append(s.bodies, body)
	s.mu.Unlock()
}

// ── Anthropic Messages API ─────────────────────────────────────────────

func textOf(content json.RawMessage) (text string, toolResult *string, toolError bool) {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s, nil, false
	}
	var blocks []map[string]any
	_ = json.Unmarshal(content, &blocks)
	for _, b := range blocks {
		switch b["type"] {
		case "text":
			t, _ := b["text"].(string)
			text += t + "\n"
		case "tool_result":
			isErr, _ := b["is_error"].(bool)
			var out string
			switch c := b["content"].(type) {
			case string:
				out = c
			case []any:
				for _, x := range c {
					if m, ok := x.(map[string]any); ok {
						if t, ok := m["text"].(string); ok {
							out += t
						}
					}
				}
			}
			toolResult, toolError = &out, isErr
		}
	}
	return text, toolResult, toolError
}

func fakeAnthropic(t *testing.T) *server {
	return serve(t, func(s *server) http.Handler {
		var ids int
		var idMu sync.Mutex
		next := func(prefix string) string {
			idMu.Lock()
			defer idMu.Unlock()
			ids++
			return fmt.Sprintf("%s_fake%06d", prefix, ids)
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			s.record(string(body))
			if !strings.HasPrefix(r.URL.Path, "/v1/messages") || r.Method != http.MethodPost {
				http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"fake"}}`, 404)
				return
			}
			var req struct {
				Stream   bool `json:"stream"`
				Model    string
				Messages []struct {
					Role    string          `json:"role"`
					Content json.RawMessage `json:"content"`
				} `json:"messages"`
			}
			_ = json.Unmarshal(body, &req)
			var first, last, lastText string
			var result *string
			var resultErr bool
			var results []string
			// The last user message decides; claude puts a "system" message
			// after it, which a strict fake would choke on.
			for _, m := range req.Messages {
				if m.Role != "user" {
					continue
				}
				text, tr, te := textOf(m.Content)
				if first == "" && text != "" {
					first = strings.TrimSpace(text)
				}
				last, result, resultErr = text, tr, te
				if tr != nil {
					results = append(results, *tr)
				} else if text != "" {
					lastText, results = text, nil
				}
			}
			d := decideSteps(lastText, last, results, result, resultErr, first)
			if d.kind == "error" {
				w.Header().Set("x-should-retry", "false")
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(d.status)
				fmt.Fprintf(w, `{"type":"error","error":{"type":"api_error","message":"fake-anthropic forced HTTP %d"}}`, d.status)
				return
			}
			msgID := next("msg")
			if !req.Stream {
				writeAnthropicJSON(w, msgID, d, next)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			fl, _ := w.(http.Flusher)
			ev := func(name string, v any) {
				b, _ := json.Marshal(v)
				fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
				if fl != nil {
					fl.Flush()
				}
			}
			usage := map[string]int{"input_tokens": 12, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
			ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": msgID, "type": "message", "role": "assistant",
				"model": "claude-fake-1", "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})
			stop := "end_turn"
			switch d.kind {
			case "call":
				stop = "tool_use"
				ev("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
					"content_block": map[string]any{"type": "tool_use", "id": next("toolu"), "name": d.tool, "input": map[string]any{}}})
				ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": d.input}})
			default:
				ev("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
				if d.kind == "stall" {
					ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": "thinking about it "}})
					select {
					case <-r.Context().Done():
						return
					case <-time.After(time.Duration(d.n) * time.Second):
					}
				} else if d.kind == "slow" {
					for i := 0; i < d.n; i++ {
						ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": fmt.Sprintf("tick %d ", i)}})
						select {
						case <-r.Context().Done():
							return
						case <-time.After(50 * time.Millisecond):
						}
					}
				} else {
					ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": d.text}})
				}
			}
			ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
			ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 7}})
			ev("message_stop", map[string]any{"type": "message_stop"})
		})
	})
}

func writeAnthropicJSON(w http.ResponseWriter, id string, d turn, next func(string) string) {
	var content []any
	stop := "end_turn"
	if d.kind == "call" {
		var input any
		_ = json.Unmarshal([]byte(d.input), &input)
		content = []any{map[string]any{"type": "tool_use", "id": next("toolu"), "name": d.tool, "input": input}}
		stop = "tool_use"
	} else {
		content = []any{map[string]any{"type": "text", "text": d.text}}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"id": id, "type": "message", "role": "assistant", "model": "claude-fake-1",
		"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": map[string]int{"input_tokens": 12, "output_tokens": 7}})
}

// ── MCP server (Streamable HTTP, JSON responses) ───────────────────────

func fakeMCP(t *testing.T) *server {
	return serve(t, func(s *server) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			s.record(string(body))
			if r.Method != http.MethodPost {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if json.Unmarshal(body, &req) != nil {
				w.WriteHeader(400)
				return
			}
			w.Header().Set("Mcp-Session-Id", "fake-session-1")
			if len(req.ID) == 0 { // a notification
				w.WriteHeader(http.StatusAccepted)
				return
			}
			reply := func(v any) {
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": v})
			}
			switch req.Method {
			case "initialize":
				var p struct {
					ProtocolVersion string `json:"protocolVersion"`
				}
				_ = json.Unmarshal(req.Params, &p)
				reply(map[string]any{"protocolVersion": p.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
					"serverInfo": map[string]any{"name": "fake-tools", "version": "1"}})
			case "tools/list":
				reply(map[string]any{"tools": []any{map[string]any{"name": "echo", "description": "Echo the text back.",
					"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}, "required": []string{"text"}}}}})
			case "tools/call":
				var p struct {
					Name      string         `json:"name"`
					Arguments map[string]any `json:"arguments"`
				}
				_ = json.Unmarshal(req.Params, &p)
				reply(map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("echo: %v", p.Arguments["text"])}}})
			case "ping":
				reply(map[string]any{})
			default:
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
			}
		})
	})
}

// ── OpenAI Responses API ───────────────────────────────────────────────

// fakeOpenAI speaks the Responses API as codex uses it: POST /v1/responses,
// streamed. Directives as for the Anthropic fake; CALL shell <json> makes
// the model call codex's shell tool, CALL <namespace>.<tool> an MCP tool,
// and CALL tool_search {"query":…} codex's search for deferred (MCP)
// tools, which must come before an MCP tool is called.
func fakeOpenAI(t *testing.T) *server {
	return serve(t, func(s *server) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			s.record(string(body))
			if !strings.HasSuffix(r.URL.Path, "/responses") {
				http.Error(w, `{"error":{"message":"fake: no such endpoint"}}`, 404)
				return
			}
			var req struct {
				Input []map[string]any `json:"input"`
			}
			_ = json.Unmarshal(body, &req)
			var first, last string
			var result *string
			var results []string
			for _, it := range req.Input {
				switch it["type"] {
				case "message":
					if it["role"] != "user" {
						continue
					}
					text := ""
					if cs, ok := it["content"].([]any); ok {
						for _, c := range cs {
							if m, ok := c.(map[string]any); ok {
								if tx, ok := m["text"].(string); ok {
									text += tx + "\n"
								}
							}
						}
					}
					if strings.Contains(text, "<environment_context>") || strings.Contains(text, "<user_instructions>") || strings.Contains(text, "AGENTS.md") {
						continue
					}
					if first == "" {
						first = strings.TrimSpace(text)
					}
					last, result, results = text, nil, nil
				case "tool_search_output":
					// codex's answer to a tool_search call: the tools found.
					var names []string
					if ts, ok := it["tools"].([]any); ok {
						for _, x := range ts {
							if m, ok := x.(map[string]any); ok {
								name := fmt.Sprint(m["name"])
								if inner, ok := m["tools"].([]any); ok {
									var in []string
									for _, y := range inner {
										if n, ok := y.(map[string]any); ok {
											in = append(in, fmt.Sprint(n["name"]))
										}
									}
									name += "(" + strings.Join(in, ",") + ")"
								}
								names = append(names, name)
							}
						}
					}
					out := "found " + strings.Join(names, ",")
					result = &out
					results = append(results, out)
				case "function_call_output", "custom_tool_call_output":
					out := fmt.Sprint(it["output"])
					if m, ok := it["output"].(map[string]any); ok {
						out = fmt.Sprint(m["content"])
					}
					result = &out
					results = append(results, out)
				}
			}
			d := decideSteps(last, last, results, result, false, first)
			callID := fmt.Sprintf("call_%d", len(results)+1)
			if d.kind == "error" {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(d.status)
				fmt.Fprintf(w, `{"error":{"message":"fake-openai forced HTTP %d","type":"server_error"}}`, d.status)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			fl, _ := w.(http.Flusher)
			ev := func(v map[string]any) {
				b, _ := json.Marshal(v)
				fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v["type"], b)
				if fl != nil {
					fl.Flush()
				}
			}
			ev(map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_1", "object": "response", "status": "in_progress", "output": []any{}}})
			var item map[string]any
			if d.kind == "call" && d.tool == "tool_search" {
				// codex offers MCP tools only behind its client-side search.
				var args any
				_ = json.Unmarshal([]byte(d.input), &args)
				item = map[string]any{"type": "tool_search_call", "id": "ts_" + callID, "call_id": callID, "execution": "client", "arguments": args, "status": "completed"}
				ev(map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
			} else if d.kind == "call" {
				name, ns := d.tool, ""
				if i := strings.LastIndex(d.tool, "."); i >= 0 {
					ns, name = d.tool[:i], d.tool[i+1:]
				}
				item = map[string]any{"type": "function_call", "id": "fc_" + callID, "call_id": callID, "name": name, "arguments": d.input, "status": "completed"}
				if name == "apply_patch" {
					// codex's apply_patch is a custom (freeform) tool: its
					// input is the patch's text, given here as {"input": …}.
					var in struct{ Input string }
					_ = json.Unmarshal([]byte(d.input), &in)
					item = map[string]any{"type": "custom_tool_call", "id": "ctc_" + callID, "call_id": callID, "name": name, "input": in.Input, "status": "completed"}
				}
				if ns != "" {
					item["namespace"] = ns
				}
				ev(map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
			} else {
				text := d.text
				if d.kind == "slow" || d.kind == "stall" {
					text = ""
				}
				ev(map[string]any{"type": "response.output_item.added", "output_index": 0,
					"item": map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress", "content": []any{}}})
				if d.kind == "stall" {
					ev(map[string]any{"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "thinking about it "})
					text = "thinking about it "
					select {
					case <-r.Context().Done():
						return
					case <-time.After(time.Duration(d.n) * time.Second):
					}
				} else if d.kind == "slow" {
					for i := 0; i < d.n; i++ {
						ev(map[string]any{"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": fmt.Sprintf("tick %d ", i)})
						text += fmt.Sprintf("tick %d ", i)
						select {
						case <-r.Context().Done():
							return
						case <-time.After(50 * time.Millisecond):
						}
					}
				} else {
					ev(map[string]any{"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": text})
				}
				item = map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
					"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
			}
			ev(map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
			if d.kind == "failafter" {
				ev(map[string]any{"type": "response.failed", "response": map[string]any{"id": "resp_1", "status": "failed",
					"error": map[string]any{"code": "server_error", "message": "fake-openai: response.failed"}}})
				return
			}
			ev(map[string]any{"type": "response.completed", "response": map[string]any{"id": "resp_1", "object": "response", "status": "completed",
				"output": []any{item}, "usage": map[string]any{"input_tokens": 20, "input_tokens_details": map[string]any{"cached_tokens": 0},
					"output_tokens": 8, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 28}}})
		})
	})
}
