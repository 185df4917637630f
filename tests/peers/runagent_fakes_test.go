package peers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// flaky stands in front of a fake model API: the first len(faults)
// requests get each fault in turn, then every request goes through to
// the fake. A fault is an HTTP status (with a Retry-After of retryAfter
// when set), or 0 for a stream cut mid-answer: the status line and the
// first event are sent, then the connection is dropped.
type flaky struct {
	*server
	mu         sync.Mutex
	faults     []int
	retryAfter string
	message    string   // added to the error's message
	seen       []string // every request's body, faults included
	// rewrite replaces text in a request before the fake reads it: a
	// prompt of runagent's own (a wrap-up, a failed check) becomes the
	// directive that makes the fake model do what the test needs.
	rewrite map[string]string
}

func newFlaky(t *testing.T, api *server, faults ...int) *flaky {
	f := &flaky{faults: faults, rewrite: map[string]string{}}
	target, _ := url.Parse(api.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	f.server = serve(t, func(s *server) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			f.mu.Lock()
			for from, to := range f.rewrite {
				q, _ := json.Marshal(to)
				fq, _ := json.Marshal(from)
				if bytes.Contains(body, fq[1:len(fq)-1]) {
					body = textOnly(bytes.ReplaceAll(body, fq[1:len(fq)-1], q[1:len(q)-1]), to)
				}
			}
			f.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			s.record(string(body))
			f.mu.Lock()
			f.seen = append(f.seen, string(body))
			fault, faulty := -1, len(f.faults) > 0
			if faulty {
				fault, f.faults = f.faults[0], f.faults[1:]
			}
			f.mu.Unlock()
			switch {
			case !faulty:
				proxy.ServeHTTP(w, r)
			case fault == 0:
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_cut\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-fake-1\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n")
				w.(http.Flusher).Flush()
				if hj, ok := w.(http.Hijacker); ok {
					if c, _, err := hj.Hijack(); err == nil {
						c.Close()
					}
				}
			default:
				if f.retryAfter != "" {
					w.Header().Set("Retry-After", f.retryAfter)
				}
				w.Header().Set("x-should-retry", "false")
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(fault)
				kind := "api_error"
				switch fault {
				case 529:
					kind = "overloaded_error"
				case 401:
					kind = "authentication_error"
				case 429:
					kind = "rate_limit_error"
				}
				fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":"flaky forced HTTP %d%s"}}`, kind, fault, f.message)
			}
		})
	})
	return f
}

func (f *flaky) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.seen)
}

// textOnly drops the tool results from the Messages API message that
// holds text: resuming a session whose last message was tool results,
// claude adds the new prompt to that message, and the fake would read
// only the results.
func textOnly(body []byte, text string) []byte {
	var req map[string]any
	if json.Unmarshal(body, &req) != nil {
		return body
	}
	msgs, _ := req["messages"].([]any)
	for _, m := range msgs {
		msg, _ := m.(map[string]any)
		blocks, ok := msg["content"].([]any)
		if !ok || !strings.Contains(fmt.Sprint(blocks), text) {
			continue
		}
		var kept []any
		for _, b := range blocks {
			if bm, _ := b.(map[string]any); bm["type"] != "tool_result" {
				kept = append(kept, b)
			}
		}
		msg["content"] = kept
	}
	out, err := json.Marshal(req)
	if err != nil {
		return body
	}
	return out
}
