package agentrun

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/agentry/agentry/lib/grant"
	"github.com/agentry/agentry/lib/protocol"
	"github.com/tidwall/gjson"
)

// work is what an agent did that a summary lists.
type work struct {
	Commands []CommandRun
	Denials  []string // the tools refused, with what they were asked
	pending  map[string]int
}

// CommandRun is a shell command the agent ran, and its exit code (nil
// when the agent did not say).
type CommandRun struct {
	Command string
	Exit    *int
}

// take reads the commands and denials of a line of the agent's output:
// claude's Bash calls (the exit code from the result's "Exit code N", 0
// when it is no error) and its result's permission_denials; codex's
// command_execution items.
func (w *work) take(harness, s string, evs []protocol.AgentEvent) {
	if harness == grant.Codex {
		if gjson.Get(s, "type").Str == "item.completed" && gjson.Get(s, "item.type").Str == "command_execution" {
			c := CommandRun{Command: unwrapShell(gjson.Get(s, "item.command").Str)}
			if e := gjson.Get(s, "item.exit_code"); e.Exists() && e.Type == gjson.Number {
				n := int(e.Int())
				c.Exit = &n
			}
			w.Commands = append(w.Commands, c)
		}
		return
	}
	for _, e := range evs {
		switch {
		case e.Type == protocol.EvToolCall && e.Name == "Bash":
			if w.pending == nil {
				w.pending = map[string]int{}
			}
			w.pending[e.ToolCallID] = len(w.Commands)
			w.Commands = append(w.Commands, CommandRun{Command: gjson.GetBytes(e.Input, "command").Str})
		case e.Type == protocol.EvToolResult:
			i, ok := w.pending[e.ToolCallID]
			if !ok {
				continue
			}
			n := 0
			if e.IsError {
				n = -1
				if rest, ok := strings.CutPrefix(e.Output, "Exit code "); ok {
					f := strings.Fields(rest)
					if len(f) > 0 {
						n, _ = strconv.Atoi(f[0])
					}
				}
			}
			if n >= 0 {
				w.Commands[i].Exit = &n
			}
		}
	}
	if gjson.Get(s, "type").Str == "result" {
		gjson.Get(s, "permission_denials").ForEach(func(_, d gjson.Result) bool {
			what := d.Get("tool_input.command").Str
			if what == "" {
				what = d.Get("tool_input.file_path").Str
			}
			w.Denials = append(w.Denials, strings.TrimSpace(d.Get("tool_name").Str+" "+what))
			return true
		})
	}
}

// Summary is the run in Markdown, for $GITHUB_STEP_SUMMARY or a pull
// request's comment: the outcome, then a table of attempts, turns,
// tokens, cost and duration, then the commands the agent ran with their
// exit codes, what was denied it, and its services.
func Summary(res *Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### runagent: %s\n\n", outcomeWords(res))
	switch {
	case len(res.Questions) > 0:
		fmt.Fprintf(&b, "> %s asked %d %s the run had no answer to; it was told nobody answered\n\n", res.Agent, len(res.Questions), plural(len(res.Questions), "question"))
	case !res.OK && res.Reason != "":
		fmt.Fprintf(&b, "> %s\n\n", oneLine(res.Reason))
	}
	b.WriteString("| | |\n|---|---|\n")
	row := func(k, v string) { fmt.Fprintf(&b, "| %s | %s |\n", k, v) }
	row("agent", fmt.Sprintf("%s, level %d", res.Agent, res.Level))
	attempts := max(len(res.Attempts), 1)
	row("attempts", strconv.Itoa(attempts)+attemptKinds(res.Attempts))
	if u := res.Usage; u != nil {
		if u.Turns != nil {
			row("turns", strconv.Itoa(*u.Turns))
		}
		row("tool calls", strconv.Itoa(u.ToolCalls))
		if u.InputTokens != nil {
			t := fmt.Sprintf("%d in, %d out", *u.InputTokens, deref(u.OutputTokens))
			if u.CacheReadTokens != nil {
				t += fmt.Sprintf(", %d cached", *u.CacheReadTokens)
			}
			row("tokens", t)
		}
		if u.CostUSD != nil {
			row("cost", fmt.Sprintf("$%.4f", *u.CostUSD))
		}
	}
	row("duration", fmt.Sprintf("%.1f s", res.DurationMs/1000))
	if res.Session != "" {
		row("session", code(res.Session))
	}
	for _, a := range res.Attempts {
		if a.Check != nil {
			row("check", fmt.Sprintf("%s: %s", code(a.Check.Command), a.Check.Status))
		}
	}
	if cs := res.work.Commands; len(cs) > 0 {
		b.WriteString("\n#### Commands the agent ran\n\n| command | exit |\n|---|---|\n")
		for _, c := range cs {
			exit := "?"
			if c.Exit != nil {
				exit = strconv.Itoa(*c.Exit)
			}
			fmt.Fprintf(&b, "| %s | %s |\n", code(c.Command), exit)
		}
	}
	if ds := res.work.Denials; len(ds) > 0 {
		b.WriteString("\n#### Permission denials\n\n")
		for _, d := range ds {
			fmt.Fprintf(&b, "- %s\n", code(d))
		}
	}
	if len(res.Questions) > 0 {
		b.WriteString("\n#### Questions the agent asked, with no answer given\n\n| id | question | options |\n|---|---|---|\n")
		for _, q := range res.Questions {
			var opts []string
			for _, o := range q.Options {
				opts = append(opts, o.Label)
			}
			sep := " / "
			if q.MultiSelect {
				sep = " + "
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", code(q.ID), cell(q.Question), cell(strings.Join(opts, sep)))
		}
		if res.SessionID != "" {
			fmt.Fprintf(&b, "\nAnswer them in a JSON file (id or header → label) and continue the session %s.\n", code(res.SessionID))
		}
	}
	if len(res.Services) > 0 {
		b.WriteString("\n#### Services\n\n| service | command | status |\n|---|---|---|\n")
		for _, s := range res.Services {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", cell(s.Name), code(strings.Join(s.Command, " ")), s.Status)
		}
	}
	return b.String()
}

func outcomeWords(res *Result) string {
	switch {
	case res.OK:
		return "answered"
	case res.StoppedBy != "":
		return "stopped by " + res.StoppedBy
	case res.Partial:
		return "stopped at a limit (" + orDefault(res.LimitName, "stalled") + "); partial report"
	case res.Limit != NoLimit:
		return "stopped at a limit (" + res.LimitName + ")"
	case res.Stalled:
		return "stalled"
	case len(res.Questions) > 0:
		return "stopped at a question nobody answered"
	}
	return "failed"
}

// attemptKinds says why there was more than one attempt: " (1 retry, 1
// wrap-up)".
func attemptKinds(as []Attempt) string {
	n := map[string]int{}
	var order []string
	for _, a := range as[min(len(as), 1):] {
		if n[a.Kind] == 0 {
			order = append(order, a.Kind)
		}
		n[a.Kind]++
	}
	var parts []string
	for _, k := range order {
		word := k
		if k == "until" {
			word = "try after the check failed"
		}
		parts = append(parts, fmt.Sprintf("%d %s", n[k], word))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// cell is s fit for a Markdown table's cell: one line, no pipe.
func cell(s string) string {
	return strings.ReplaceAll(oneLine(s), "|", `\|`)
}

// code is s as a code span in a table's cell: fenced with more backticks
// than any run of them in s, spaced from them when it starts or ends
// with one.
func code(s string) string {
	s = cell(s)
	run, longest := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if longest > 0 {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

// unwrapShell is the command codex ran without the shell it wraps every
// command in: "/bin/bash -lc 'echo one'" is "echo one".
func unwrapShell(c string) string {
	for _, sh := range []string{"/bin/bash -lc ", "bash -lc ", "/bin/sh -c ", "sh -c "} {
		rest, ok := strings.CutPrefix(c, sh)
		if !ok || len(rest) < 2 || rest[0] != '\'' || rest[len(rest)-1] != '\'' {
			continue
		}
		inner := rest[1 : len(rest)-1]
		if strings.Contains(strings.ReplaceAll(inner, `'\''`, ""), "'") {
			continue // not one quoted word
		}
		return strings.ReplaceAll(inner, `'\''`, "'")
	}
	return c
}
