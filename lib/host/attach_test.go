package host

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/agentry/agentry/lib/protocol"
)

// seer takes PNG images, and says what it was shown.
type seer struct{ asker }

func (seer) ImageTypes() []string { return []string{"image/png"} }
func (seer) RunTurn(ctx context.Context, t *Turn) error {
	text := t.Params.Prompt
	for _, at := range t.Params.Attachments {
		b, _ := base64.StdEncoding.DecodeString(at.Data)
		text += " +" + at.MimeType + ":" + string(b)
	}
	t.Emit(protocol.AgentEvent{Type: protocol.EvCompleted, Text: text})
	return nil
}

func image(mime, data string) []protocol.Attachment {
	return []protocol.Attachment{{Type: protocol.AttachmentImage, MimeType: mime, Data: data}}
}

// A backend that takes images gets them as given; one that does not, or
// an image of a type it does not take, or a malformed attachment, is
// refused before anything runs.
func TestAttachments(t *testing.T) {
	rec := &recorder{got: make(chan struct{}, 1)}
	h := New(Options{Backend: "seer", Factory: func(string, json.RawMessage) (Backend, error) { return seer{}, nil }}, rec.out)
	defer h.Abort()
	h.Deliver(&protocol.Hello{ID: "h", Protocol: 1})
	rec.waitFor(t, func(m protocol.Msg) bool { _, ok := m.(*protocol.Ready); return ok })

	png := base64.StdEncoding.EncodeToString([]byte("PNGBYTES"))
	h.Deliver(&protocol.RunTurn{ID: "t1", RunID: "r1", Params: protocol.ChatRunParams{ChatID: "c1", Prompt: "look", Attachments: image("image/png", png)}})
	if _, text := rec.done(t, "r1"); text != "look +image/png:PNGBYTES" {
		t.Errorf("the backend was shown %q", text)
	}
	for id, p := range map[string]struct {
		at   []protocol.Attachment
		code string
	}{
		"t2": {image("image/jpeg", png), protocol.CodeUnsupported},
		"t3": {image("image/png", "not base64!"), protocol.CodeBadRequest},
		"t4": {image("", png), protocol.CodeBadRequest},
		"t5": {[]protocol.Attachment{{Type: "audio", MimeType: "audio/wav", Data: png}}, protocol.CodeBadRequest},
	} {
		h.Deliver(&protocol.RunTurn{ID: id, RunID: "r" + id, Params: protocol.ChatRunParams{ChatID: "c" + id, Prompt: "look", Attachments: p.at}})
		wantCode(t, rec.reply(t, id), p.code)
	}

	h2, rec2 := newAsker(t, asker{})
	defer h2.Abort()
	h2.Deliver(&protocol.RunTurn{ID: "t1", RunID: "r1", Params: protocol.ChatRunParams{ChatID: "c1", Prompt: "look", Attachments: image("image/png", png)}})
	wantCode(t, rec2.reply(t, "t1"), protocol.CodeUnsupported)
}
