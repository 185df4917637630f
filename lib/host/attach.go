package host

import (
	"encoding/base64"
	"fmt"
	"slices"

	"github.com/agentry/agentry/lib/protocol"
)

// ImageTaker is a backend whose turns take images beside the prompt
// (params.attachments); ImageTypes are the MIME types it takes. A run
// with attachments, on a backend that is not one or for a type it does
// not list, is refused before it starts.
type ImageTaker interface {
	ImageTypes() []string
}

// ImageTypes are the image types a backend takes, none if it takes none.
func ImageTypes(b Backend) []string {
	if it, ok := b.(ImageTaker); ok {
		return it.ImageTypes()
	}
	return nil
}

// ResourceTaker is a backend whose turns take resources and links to
// them beside the prompt (params.attachments of type resource and
// resource_link); a run with one, on a backend that is not one, is
// refused before it starts.
type ResourceTaker interface {
	TakesResources() bool
}

func takesResources(b Backend) bool {
	rt, ok := b.(ResourceTaker)
	return ok && rt.TakesResources()
}

// checkAttachments refuses a run whose attachments are malformed
// (bad_request) or that the backend cannot take (unsupported); it returns
// nil for one that may start.
func checkAttachments(id string, p protocol.ChatRunParams, b Backend) *protocol.Error {
	types := ImageTypes(b)
	for i, at := range p.Attachments {
		if at.Type == protocol.AttachmentResource || at.Type == protocol.AttachmentResourceLink {
			if refuse := checkResource(id, i, at, b); refuse != nil {
				return refuse
			}
			continue
		}
		if at.Type != protocol.AttachmentImage {
			return errReply(id, protocol.CodeBadRequest, fmt.Sprintf("attachments[%d]: type %q: it is image, resource or resource_link", i, at.Type), false)
		}
		if at.MimeType == "" {
			return errReply(id, protocol.CodeBadRequest, fmt.Sprintf("attachments[%d]: missing mimeType", i), false)
		}
		if at.Data == "" {
			return errReply(id, protocol.CodeBadRequest, fmt.Sprintf("attachments[%d]: missing data", i), false)
		}
		if _, err := base64.StdEncoding.DecodeString(at.Data); err != nil {
			return errReply(id, protocol.CodeBadRequest, fmt.Sprintf("attachments[%d]: data is not base64: %v", i, err), false)
		}
		if len(types) == 0 {
			return errReply(id, protocol.CodeUnsupported, fmt.Sprintf("the %s backend takes no images", b.Name()), false)
		}
		if !slices.Contains(types, at.MimeType) {
			return errReply(id, protocol.CodeUnsupported, fmt.Sprintf("the %s backend takes no %s images (it takes %v)", b.Name(), at.MimeType, types), false)
		}
	}
	return nil
}

// checkResource refuses a resource or link attachment that is malformed
// or that the backend cannot take.
func checkResource(id string, i int, at protocol.Attachment, b Backend) *protocol.Error {
	switch {
	case at.URI == "":
		return errReply(id, protocol.CodeBadRequest, fmt.Sprintf("attachments[%d]: missing uri", i), false)
	case at.Type == protocol.AttachmentResourceLink && at.Name == "":
		return errReply(id, protocol.CodeBadRequest, fmt.Sprintf("attachments[%d]: missing name", i), false)
	case at.Type == protocol.AttachmentResource && (at.Text == nil) == (at.Data == ""):
		return errReply(id, protocol.CodeBadRequest, fmt.Sprintf("attachments[%d]: a resource has text or data, one of them", i), false)
	}
	if at.Data != "" {
		if _, err := base64.StdEncoding.DecodeString(at.Data); err != nil {
			return errReply(id, protocol.CodeBadRequest, fmt.Sprintf("attachments[%d]: data is not base64: %v", i, err), false)
		}
	}
	if !takesResources(b) {
		return errReply(id, protocol.CodeUnsupported, fmt.Sprintf("the %s backend takes no %s attachments", b.Name(), at.Type), false)
	}
	return nil
}
