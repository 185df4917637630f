package protocol

import (
	"os"
	"strings"
	"testing"
)

func TestTypes(t *testing.T) {
	seen := map[string]bool{}
	for _, typ := range Types() {
		if seen[typ] {
			t.Errorf("%s listed twice", typ)
		}
		seen[typ] = true
		if _, ok := KindOf(typ); !ok {
			t.Errorf("KindOf(%s) unknown", typ)
		}
	}
	if _, ok := KindOf("frobnicate"); ok {
		t.Error("KindOf accepts an unknown type")
	}
	if k, _ := KindOf("ping"); k != Request {
		t.Errorf("ping is a %v", k)
	}
}

func TestClassify(t *testing.T) {
	cases := []struct{ line, typ, reason string }{
		{`{"type":"hello","id":"h1","protocol":1}`, "hello", ""},
		{`{"id":"x","type":"event","extra":{"new":"field"}}`, "event", ""},
		{`{"type":"frob","id":"1"}`, "frob", ReasonUnknownType},
		{`{"id":"1"}`, "", ReasonUnknownType},
		{`{"type":7}`, "", ReasonUnknownType},
		{`[1]`, "", ReasonNotAnObject},
		{`"hello"`, "", ReasonNotAnObject},
		{`{"type":`, "", ReasonMalformedJSON},
		{"{\"type\":\"log\",\"msg\":\"\xff\"}", "", ReasonMalformedJSON},
		{``, "", ReasonMalformedJSON},
	}
	for _, c := range cases {
		typ, reason := Classify([]byte(c.line))
		if typ != c.typ || reason != c.reason {
			t.Errorf("Classify(%q) = %q, %q; want %q, %q", c.line, typ, reason, c.typ, c.reason)
		}
	}
}

// ndjson(1) lists the types check --protocol accepts; it must list them all.
func TestManPageListsEveryType(t *testing.T) {
	page, err := os.ReadFile("../../man/ndjson.1")
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range Types() {
		if !strings.Contains(string(page), ".Ql "+typ+"\n") && !strings.Contains(string(page), ".Ql "+typ+" ,\n") {
			t.Errorf("man/ndjson.1 does not list %s", typ)
		}
	}
}
