package codex

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/protocol"
)

func replay(t *testing.T, name string) ([]protocol.AgentEvent, *translator) {
	f, err := os.Open("testdata/" + name + ".stdout")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var evs []protocol.AgentEvent
	b := &Backend{chats: map[string]*chat{}}
	x := &translator{t: &host.Turn{Emit: func(e protocol.AgentEvent) { evs = append(evs, e) }, Log: func(string, string) {}}, b: b, c: b.chat("c1")}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		x.line(sc.Bytes())
	}
	return evs, x
}

func TestTranslateMCP(t *testing.T) {
	evs, x := replay(t, "mcp-echo")
	var k []string
	for _, e := range evs {
		k = append(k, e.Type)
	}
	if got := strings.Join(k, " "); got != "tool_call tool_result text usage completed" {
		t.Errorf("events: %s", got)
	}
	if evs[0].Name != "mcp__srv__echo" || !strings.HasPrefix(evs[1].Output, "echo: ") || evs[1].IsError || !x.completed {
		t.Errorf("tool events %+v %+v", evs[0], evs[1])
	}
	if x.c.thread == "" || evs[3].Usage.InputTokens != 40 {
		t.Errorf("thread %q usage %+v", x.c.thread, evs[3].Usage)
	}
}

func TestTranslateFailedTurn(t *testing.T) {
	_, x := replay(t, "message-then-turn-failed")
	if x.completed || !strings.Contains(x.failed, "high demand") {
		t.Errorf("completed %v failed %q", x.completed, x.failed)
	}
}
