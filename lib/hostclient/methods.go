package hostclient

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentry/agentry/lib/protocol"
)

// connector gives the client the conversation to use: the one in-process
// host, or the current agent-host process (started, or restarted, on
// demand).
type connector interface {
	conn(ctx context.Context) (*conn, error)
	ping(ctx context.Context) error
	close() error
	shutdown(ctx context.Context) error
}

// client implements Client over a connector.
type client struct{ c connector }

func unexpected(m protocol.Msg, want string) error {
	return fmt.Errorf("agent-host answered with %s, not %s", m.MsgType(), want)
}

func (cl *client) call(ctx context.Context, build func(id string) protocol.Msg) (protocol.Msg, error) {
	c, err := cl.c.conn(ctx)
	if err != nil {
		return nil, err
	}
	return c.call(ctx, build)
}

func (cl *client) Hello(ctx context.Context, daemon string, config json.RawMessage) (*protocol.Ready, error) {
	if s, ok := cl.c.(*subprocess); ok {
		s.rememberHello(daemon, config)
	}
	m, err := cl.call(ctx, func(id string) protocol.Msg {
		return &protocol.Hello{ID: id, Protocol: protocol.Version, Daemon: daemon, Config: config}
	})
	if err != nil {
		return nil, err
	}
	r, ok := m.(*protocol.Ready)
	if !ok {
		return nil, unexpected(m, "ready")
	}
	return r, nil
}

func (cl *client) RunTurn(ctx context.Context, runID string, p protocol.ChatRunParams) (*Run, error) {
	c, err := cl.c.conn(ctx)
	if err != nil {
		return nil, err
	}
	return c.start(runID, func(id string) protocol.Msg { return &protocol.RunTurn{ID: id, RunID: runID, Params: p} })
}

func (cl *client) RunOneShot(ctx context.Context, runID string, p protocol.OneShotParams) (*Run, error) {
	c, err := cl.c.conn(ctx)
	if err != nil {
		return nil, err
	}
	return c.start(runID, func(id string) protocol.Msg { return &protocol.OneShot{ID: id, RunID: runID, Params: p} })
}

func (cl *client) ok(ctx context.Context, build func(id string) protocol.Msg) (*protocol.OK, error) {
	m, err := cl.call(ctx, build)
	if err != nil {
		return nil, err
	}
	ok, isOK := m.(*protocol.OK)
	if !isOK {
		return nil, unexpected(m, "ok")
	}
	return ok, nil
}

func (cl *client) Interrupt(ctx context.Context, chatID, runID string) (bool, error) {
	ok, err := cl.ok(ctx, func(id string) protocol.Msg { return &protocol.Interrupt{ID: id, ChatID: chatID, RunID: runID} })
	if err != nil {
		return false, err
	}
	return ok.Interrupted != nil && *ok.Interrupted, nil
}

func (cl *client) AnswerPermission(ctx context.Context, runID, requestID string, a Answer) error {
	_, err := cl.ok(ctx, func(id string) protocol.Msg {
		return &protocol.AnswerPermission{ID: id, RunID: runID, RequestID: requestID, Decision: a.Decision, Input: a.Input, Message: a.Message}
	})
	return err
}

func (cl *client) AnswerQuestion(ctx context.Context, runID, requestID string, a QuestionAnswer) error {
	_, err := cl.ok(ctx, func(id string) protocol.Msg {
		return &protocol.AnswerQuestion{ID: id, RunID: runID, RequestID: requestID, Answers: a.Answers, Decline: a.Decline}
	})
	return err
}

func (cl *client) WarmSession(ctx context.Context, chatID string) error {
	_, err := cl.ok(ctx, func(id string) protocol.Msg { return &protocol.WarmSession{ID: id, ChatID: chatID} })
	return err
}

func (cl *client) SetMCPServers(ctx context.Context, chatID string, servers map[string]json.RawMessage) (*protocol.ToolRefresh, error) {
	ok, err := cl.ok(ctx, func(id string) protocol.Msg { return &protocol.SetMCPServers{ID: id, ChatID: chatID, Servers: servers} })
	if err != nil {
		return nil, err
	}
	return ok.Tools, nil
}

func (cl *client) RefreshTools(ctx context.Context, chatID string) (*protocol.ToolRefresh, error) {
	ok, err := cl.ok(ctx, func(id string) protocol.Msg { return &protocol.RefreshTools{ID: id, ChatID: chatID} })
	if err != nil {
		return nil, err
	}
	return ok.Tools, nil
}

func (cl *client) ResetSession(ctx context.Context, chatID string) (bool, error) {
	ok, err := cl.ok(ctx, func(id string) protocol.Msg { return &protocol.ResetSession{ID: id, ChatID: chatID} })
	if err != nil {
		return false, err
	}
	return ok.Cleared != nil && *ok.Cleared, nil
}

func (cl *client) ListModels(ctx context.Context, filter string) ([]protocol.ModelInfo, int, error) {
	m, err := cl.call(ctx, func(id string) protocol.Msg { return &protocol.ListModels{ID: id, Filter: filter} })
	if err != nil {
		return nil, 0, err
	}
	ms, ok := m.(*protocol.Models)
	if !ok {
		return nil, 0, unexpected(m, "models")
	}
	return ms.Models, ms.Total, nil
}

func (cl *client) PlanUsage(ctx context.Context) (*protocol.PlanUsage, error) {
	m, err := cl.call(ctx, func(id string) protocol.Msg { return &protocol.PlanUsageReq{ID: id} })
	if err != nil {
		return nil, err
	}
	u, ok := m.(*protocol.UsageReply)
	if !ok {
		return nil, unexpected(m, "usage")
	}
	return u.Usage, nil
}

func (cl *client) SessionInfo(ctx context.Context, chatID string) (*protocol.SessionInfo, error) {
	m, err := cl.call(ctx, func(id string) protocol.Msg { return &protocol.SessionInfoReq{ID: id, ChatID: chatID} })
	if err != nil {
		return nil, err
	}
	s, ok := m.(*protocol.Session)
	if !ok {
		return nil, unexpected(m, "session")
	}
	return s.Session, nil
}

func (cl *client) Shutdown(ctx context.Context) error { return cl.c.shutdown(ctx) }
func (cl *client) Ping(ctx context.Context) error     { return cl.c.ping(ctx) }
func (cl *client) Close() error                       { return cl.c.close() }

// pingConn sends a ping on c and waits for its ok.
func pingConn(ctx context.Context, c *conn) error {
	m, err := c.call(ctx, func(id string) protocol.Msg { return &protocol.Ping{ID: id} })
	if err != nil {
		return err
	}
	if _, ok := m.(*protocol.OK); !ok {
		return unexpected(m, "ok")
	}
	return nil
}

// shutdownConn sends shutdown on c and waits for bye. drain, when not nil,
// replaces the host's drain timeout.
func shutdownConn(ctx context.Context, c *conn, drain *time.Duration) error {
	m, err := c.call(ctx, func(id string) protocol.Msg {
		sd := &protocol.Shutdown{ID: id}
		if drain != nil {
			ms := drain.Milliseconds()
			sd.DrainMs = &ms
		}
		return sd
	})
	if err != nil {
		return err
	}
	if _, ok := m.(*protocol.Bye); !ok {
		return unexpected(m, "bye")
	}
	return nil
}
