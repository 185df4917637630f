package claude

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/agentry/agentry/lib/host"
	"github.com/agentry/agentry/lib/protocol"
)

// replay feeds a recorded claude stream through the translator, turn by
// turn, and returns each turn's events and ending.
func replay(t *testing.T, name string) (turns [][]protocol.AgentEvent, ends []error) {
	f, err := os.Open("testdata/" + name + ".stdout")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := &Backend{chats: map[string]*chat{}}
	c := b.chat("c1")
	var evs []protocol.AgentEvent
	turnOf := func() *host.Turn {
		return &host.Turn{Emit: func(e protocol.AgentEvent) { evs = append(evs, e) }, Log: func(string, string) {}}
	}
	x := &translator{t: turnOf(), c: c, b: b}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if done, err := x.line(sc.Bytes()); done {
			turns, ends = append(turns, evs), append(ends, err)
			evs = nil
			x = &translator{t: turnOf(), c: c, b: b}
		}
	}
	return turns, ends
}

func kinds(evs []protocol.AgentEvent) string {
	var k []string
	for _, e := range evs {
		k = append(k, e.Type)
	}
	return strings.Join(k, " ")
}

func TestTranslateInterrupt(t *testing.T) {
	turns, ends := replay(t, "stream-interrupt")
	if len(turns) != 2 {
		t.Fatalf("%d turns", len(turns))
	}
	if ends[0] != host.ErrInterrupted {
		t.Errorf("the aborted turn ended %v", ends[0])
	}
	if got := kinds(turns[0]); !strings.HasPrefix(got, "text_delta text_delta text_delta text_delta text_delta text") {
		t.Errorf("aborted turn events: %s", got)
	}
	if ends[1] != nil || kinds(turns[1]) != "text_delta text usage completed" || turns[1][3].Text != "AFTER-INTERRUPT" {
		t.Errorf("next turn: %s %v", kinds(turns[1]), ends[1])
	}
}

func TestTranslateTools(t *testing.T) {
	turns, ends := replay(t, "level2-write-multiblock")
	if len(turns) != 1 || ends[0] != nil {
		t.Fatalf("%d turns, %v", len(turns), ends)
	}
	got := kinds(turns[0])
	if !strings.Contains(got, "tool_call") || !strings.Contains(got, "tool_result") || !strings.HasSuffix(got, "usage completed") {
		t.Errorf("events: %s", got)
	}
	for _, e := range turns[0] {
		if e.Type == protocol.EvToolCall && (e.ToolCallID == "" || e.Name == "" || len(e.Input) == 0) {
			t.Errorf("tool_call without id, name or input: %+v", e)
		}
		if e.Type == protocol.EvToolResult && e.ToolCallID == "" {
			t.Errorf("tool_result without id: %+v", e)
		}
	}
}

func TestTranslateAPIError(t *testing.T) {
	turns, ends := replay(t, "err500-streamjson")
	info, ok := ends[0].(*protocol.ErrorInfo)
	if len(turns) != 1 || !ok || !info.Retryable || !strings.Contains(info.Message, "500") {
		t.Fatalf("API 500: %v", ends)
	}
}
