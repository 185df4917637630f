package hostclient

import (
	"context"
	"errors"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/protocol"
)

// InProcess returns a Client whose backend runs in this process, behind
// the same rules as agent-host (lib/host), with no serialisation at all.
// notice, when not nil, receives the host's log and metric notices.
func InProcess(opts host.Options, notice func(protocol.Msg)) Client {
	ip := &inProcess{}
	ip.c = newConn(nil, notice)
	ip.h = host.New(opts, func(m protocol.Msg) {
		ip.c.receive(m)
		if _, bye := m.(*protocol.Bye); bye {
			ip.c.fail(errors.New("agent-host: shut down"))
		}
	})
	ip.c.send = func(m protocol.Msg) error { ip.h.Deliver(m); return nil }
	return &client{c: ip}
}

type inProcess struct {
	h *host.Host
	c *conn
}

func (ip *inProcess) conn(ctx context.Context) (*conn, error) {
	if err := ip.c.err(); err != nil {
		return nil, err
	}
	return ip.c, nil
}

func (ip *inProcess) ping(ctx context.Context) error { return pingConn(ctx, ip.c) }

func (ip *inProcess) shutdown(ctx context.Context) error {
	err := shutdownConn(ctx, ip.c, nil)
	ip.c.fail(errors.New("agent-host: shut down"))
	return err
}

func (ip *inProcess) close() error {
	ip.c.fail(errors.New("agent-host client: closed"))
	ip.h.Abort() // runs interrupted, the backend's processes stopped
	return nil
}
