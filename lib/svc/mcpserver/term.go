package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentry/agentry/lib/svc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SendIn is the send tool's input.
type SendIn struct {
	Name string `json:"name"`
	Text string `json:"text" jsonschema:"what to type, as is (no escapes are read: JSON's \\n ends a line, \\u0003 is Ctrl-C); nothing is added"`
}

// SendOut is what a send did.
type SendOut struct {
	Name string `json:"name"`
	Sent int    `json:"sent" jsonschema:"the bytes the terminal took"`
}

// send types text into the terminal of a service started with a pty.
func (s *Server) send(_ context.Context, _ *mcp.CallToolRequest, in SendIn) (*mcp.CallToolResult, SendOut, error) {
	d, err := s.dir(in.Name)
	if err != nil {
		return nil, SendOut{}, err
	}
	n, err := svc.Send(d, in.Text)
	var noPTY *svc.NoPTYError
	var notLive *svc.NotLiveError
	switch {
	case errors.As(err, &noPTY):
		return nil, SendOut{}, fmt.Errorf("%s has no terminal to type into: start it with pty true (svc start --pty)", s.short(noPTY.Name))
	case errors.As(err, &notLive):
		return nil, SendOut{}, fmt.Errorf("%s is not running (%s)", s.short(notLive.Name), notLive.Status)
	case err != nil:
		return nil, SendOut{}, s.word(err)
	}
	return nil, SendOut{Name: s.short(d.Name), Sent: n}, nil
}

// ptySize is the terminal of a service the start tool runs with pty.
func ptySize(pty bool) *svc.TermSize {
	if !pty {
		return nil
	}
	return &svc.TermSize{Rows: 24, Cols: 80}
}
