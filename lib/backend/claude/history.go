package claude

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentry/agentry/lib/agentstream"
	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/ndjson"
	"github.com/agentry/agentry/lib/protocol"
	"github.com/tidwall/gjson"
)

// LoadSession makes the chat continue Claude Code's session id: the CLI
// in flight for the chat, if any, is ended, and the chat's next turn starts
// it with --resume id. The history is the CLI's own record of the session,
// CLAUDE_CONFIG_DIR (default ~/.claude) projects/*/ID.jsonl.
func (b *Backend) LoadSession(ctx context.Context, chatID, sessionID, workspace string) ([]host.Said, error) {
	if !sessionIDRE(sessionID) {
		return nil, host.Failed(protocol.CodeBadRequest, "a claude session id is a UUID, not "+sessionID, false)
	}
	env := host.Env{Environ: append(append([]string{}, b.env.Environ...), b.cfg.Env...)}
	dir := env.Getenv("CLAUDE_CONFIG_DIR")
	if dir == "" {
		dir = filepath.Join(env.Getenv("HOME"), ".claude")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "projects", "*", sessionID+".jsonl"))
	if len(files) == 0 {
		return nil, host.Failed(protocol.CodeUnknownChat, "claude has no session "+sessionID, false)
	}
	said, err := readHistory(files[0], b.cfg.MaxLine)
	if err != nil {
		return nil, host.Failed(protocol.CodeBackendFailed, "reading claude's session "+sessionID+": "+err.Error(), false)
	}
	c := b.chat(chatID)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cli != nil {
		c.cli.stop(2 * time.Second)
		c.cli = nil
	}
	b.mu.Lock()
	c.session = sessionID
	b.mu.Unlock()
	if workspace != "" {
		c.workspace = workspace
	}
	return said, nil
}

func sessionIDRE(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if r != '-' {
				return false
			}
		case !strings.ContainsRune("0123456789abcdefABCDEF", r):
			return false
		}
	}
	return true
}

// readHistory reads a session record: the user's messages, and the
// agent's text, thinking, tool calls and results, in order. Side chains,
// meta messages (command caveats) and the CLI's notes of an interrupt are
// not what anyone said, and are left out.
func readHistory(path string, maxLine int) ([]host.Said, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if maxLine <= 0 {
		maxLine = 64 << 20
	}
	var said []host.Said
	err = ndjson.Lines(f, maxLine, func(*ndjson.TooLongError) {}, func(line []byte) bool {
		if ndjson.Check(line) != ndjson.Valid {
			return true
		}
		s := string(line)
		if gjson.Get(s, "isSidechain").Bool() || gjson.Get(s, "isMeta").Bool() {
			return true
		}
		switch gjson.Get(s, "type").Str {
		case "user":
			content := gjson.Get(s, "message.content")
			if content.Type == gjson.String {
				said = appendUser(said, content.Str)
				return true
			}
			content.ForEach(func(_, blk gjson.Result) bool {
				if blk.Get("type").Str == "text" {
					said = appendUser(said, blk.Get("text").Str)
				}
				return true
			})
			for _, e := range agentstream.Claude(s) {
				said = append(said, host.Said{Event: e})
			}
		case "assistant":
			for _, e := range agentstream.Claude(s) {
				said = append(said, host.Said{Event: e})
			}
		}
		return true
	})
	return said, err
}

func appendUser(said []host.Said, text string) []host.Said {
	text = stripReminders(text)
	t := strings.TrimSpace(text)
	if t == "" || strings.HasPrefix(t, "[Request interrupted by user") || strings.HasPrefix(t, "<command-") ||
		strings.HasPrefix(t, "<local-command-") || strings.HasPrefix(t, "Caveat:") {
		return said
	}
	return append(said, host.Said{User: t})
}

// stripReminders takes out what Claude Code adds to a user's message for
// the model (<system-reminder> blocks): the user never wrote it.
func stripReminders(s string) string {
	const open, end = "<system-reminder>", "</system-reminder>"
	for {
		i := strings.Index(s, open)
		if i < 0 {
			return s
		}
		j := strings.Index(s[i:], end)
		if j < 0 {
			return s[:i]
		}
		s = s[:i] + s[i+j+len(end):]
	}
}
