package acp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/backend/echo"
	"github.com/agentry/agentry/lib/host"
)

// seer is the echo backend taking PNG images: it echoes the prompt and
// then, for each image, its type and data.
type seer struct{ *echo.Backend }

func (seer) ImageTypes() []string { return []string{"image/png"} }

func (b seer) RunTurn(ctx context.Context, t *host.Turn) error {
	for _, at := range t.Params.Attachments {
		t.Params.Prompt += " [" + at.MimeType + " " + at.Data + "]"
	}
	return b.Backend.RunTurn(ctx, t)
}

// Images reach a backend that takes them, in prompt order, with the
// prompt's text; initialize says so; an image of a type it does not take
// is refused.
func TestImages(t *testing.T) {
	c := startWith(t, loadDefs(t), func(string, json.RawMessage) (host.Backend, error) {
		b, err := echo.New(nil)
		return seer{b}, err
	}, "")
	r := c.call("initialize", map[string]any{"protocolVersion": 1})
	if !strings.Contains(string(r["result"]), `"image":true`) {
		t.Errorf("initialize: %s", r["result"])
	}
	s := c.newSession()
	ms := c.until(c.send("session/prompt", map[string]any{"sessionId": s, "prompt": []any{
		map[string]any{"type": "text", "text": "what are these?"},
		map[string]any{"type": "image", "data": "AAAA", "mimeType": "image/png"},
		map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///a/b.png", "mimeType": "image/png", "blob": "BBBB"}},
	}}))
	ups, _ := updates(t, ms)
	if got := chunks(ups); !strings.Contains(got, "what are these? [image/png AAAA] [image/png BBBB]") {
		t.Errorf("the backend was given %q", got)
	}
	ms = c.until(c.send("session/prompt", map[string]any{"sessionId": s, "prompt": []any{
		map[string]any{"type": "image", "data": "AAAA", "mimeType": "image/png"}}}))
	if ups, _ := updates(t, ms); !strings.Contains(chunks(ups), "[image/png AAAA]") {
		t.Errorf("an image alone: %q", chunks(ups))
	}
	for _, bad := range []map[string]any{
		{"type": "image", "data": "AAAA", "mimeType": "image/tiff"},
		{"type": "image", "uri": "https://example.com/a.png", "mimeType": "image/png"},
		{"type": "image", "data": "not base64!", "mimeType": "image/png"},
		{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
		{"type": "resource", "resource": map[string]any{"uri": "file:///a/b.png", "mimeType": "image/png", "blob": "not base64!"}},
		{"type": "resource", "resource": map[string]any{"uri": "file:///a/b.pdf", "mimeType": "application/pdf", "blob": "AAAA"}},
	} {
		r := c.call("session/prompt", map[string]any{"sessionId": s, "prompt": []any{bad}})
		if !strings.Contains(string(r["error"]), "-32602") {
			t.Errorf("%v: %s", bad, r["error"])
		}
	}
}
