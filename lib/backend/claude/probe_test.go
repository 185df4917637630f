package claude

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestProbeMCP(t *testing.T) {
	var got string
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = r.Method + " " + r.URL.Path + " " + r.Header.Get("Content-Type") + " " + string(b)
		w.Write([]byte(`{}`))
	}))
	defer ok.Close()
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer bad.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/mcp"
	l.Close()

	cfg := func(typ, u string) json.RawMessage {
		return json.RawMessage(`{"type":"` + typ + `","url":"` + u + `"}`)
	}
	for _, tc := range []struct {
		cfg  json.RawMessage
		want string
	}{
		{cfg("http", ok.URL+"/mcp"), ""},
		{cfg("sse", bad.URL+"/mcp"), "answered HTTP 500 to initialize"},
		{cfg("http", closed), "cannot connect: dial tcp " + strings.TrimPrefix(closed, "http://")[:len(l.Addr().String())] + ": connect: connection refused"},
		{cfg("http", "ftp://x/y"), `bad url: "ftp://x/y"`},
		{json.RawMessage(`{"command":"x"}`), ""},
	} {
		err := probeMCP(context.Background(), tc.cfg)
		if msg := errString(err); msg != tc.want {
			t.Errorf("probeMCP(%s) = %q, want %q", tc.cfg, msg, tc.want)
		}
	}
	if !strings.HasPrefix(got, "POST /mcp application/json {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"") {
		t.Errorf("the server was sent %q", got)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A turn's cost is the result's model_usage_since_last_result, not the
// session's running total_cost_usd; without it, the total less what the
// same CLI reported before.
func TestTurnCost(t *testing.T) {
	p := &cli{}
	for _, tc := range []struct {
		line string
		want float64
	}{
		{`{"total_cost_usd":0.000208,"model_usage_since_last_result":{"m":{"costUSD":0.000208}}}`, 0.000208},
		{`{"total_cost_usd":0.000396,"model_usage_since_last_result":{"m":{"costUSD":0.000188}}}`, 0.000188},
		{`{"total_cost_usd":0.000376,"model_usage_since_last_result":{"a":{"costUSD":0.0001},"b":{"costUSD":0.00002}}}`, 0.00012},
		{`{"total_cost_usd":0.000500}`, 0.000124},
	} {
		if got := turnCost(tc.line, p); fmt.Sprintf("%.9f", got) != fmt.Sprintf("%.9f", tc.want) {
			t.Errorf("turnCost(%s) = %v, want %v", tc.line, got, tc.want)
		}
	}
	if got := turnCost(`{"total_cost_usd":0.0003}`, nil); got != 0.0003 {
		t.Errorf("with no CLI: %v", got)
	}
}
