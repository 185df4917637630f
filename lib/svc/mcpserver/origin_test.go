package mcpserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestCheckOrigin(t *testing.T) {
	h := checkOrigin(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	for _, c := range []struct {
		origins []string
		want    int
	}{
		{nil, http.StatusTeapot},
		{[]string{"http://127.0.0.1:4000"}, http.StatusTeapot},
		{[]string{"http://localhost:5173"}, http.StatusTeapot},
		{[]string{"https://LOCALHOST"}, http.StatusTeapot},
		{[]string{"http://[::1]:8080"}, http.StatusTeapot},
		{[]string{"http://127.1.2.3:9"}, http.StatusTeapot},
		{[]string{"http://evil.example"}, http.StatusForbidden},
		{[]string{"http://evil.example:4000"}, http.StatusForbidden},
		{[]string{"http://localhost.evil.example"}, http.StatusForbidden},
		{[]string{"http://0.0.0.0:4000"}, http.StatusForbidden},
		{[]string{"http://192.168.1.2:4000"}, http.StatusForbidden},
		{[]string{"null"}, http.StatusForbidden},
		{[]string{"file://"}, http.StatusForbidden},
		{[]string{""}, http.StatusForbidden},
		{[]string{"http://127.0.0.1:4000", "http://evil.example"}, http.StatusForbidden},
	} {
		r := httptest.NewRequest("POST", "/mcp", nil)
		for _, o := range c.origins {
			r.Header.Add("Origin", o)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("Origin %q: %d, want %d", c.origins, w.Code, c.want)
		}
		if w.Code == http.StatusForbidden {
			var body struct {
				JSONRPC string `json:"jsonrpc"`
				Error   struct{ Code int }
			}
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.JSONRPC != "2.0" || body.Error.Code != -32600 {
				t.Errorf("Origin %q: body %s", c.origins, w.Body)
			}
		}
	}
}
