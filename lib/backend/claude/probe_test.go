package claude

import (
	"context"
	"encoding/json"
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
