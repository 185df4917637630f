// Command corpus writes a deterministic NDJSON corpus of agent-host v1
// traffic for make bench: mixed message types, long unicode text with
// escaped quotes, nested usage objects. Usage: corpus [-lines N]
// [-profile agent|dense|deep] > file. The dense profile is shaped unlike
// the first, so that no code is tuned to one shape of data: more keys per
// object, short strings, about 15% non-ASCII bytes, and two or three
// \uXXXX escapes a line (surrogate pairs and \u2028 among them). The deep
// profile is unlike both: agent transcripts as the CLIs stream them, long
// lines (about 1.4 KB, some over 10 KB) of messages whose content is an
// array of parts, tool output dense with escapes and unicode, objects
// nested 10 to 40 deep, and wide arrays of numbers; make bench gives it a
// fifth of the lines, for about as many bytes. The traffic profile is
// agent-host's protocol on the wire, every message kind of v1 in the
// proportions a busy host writes them: short streamed text deltas with
// escapes (\n, \", \uXXXX) and unicode, thinking, tool calls whose
// inputs nest, tool results, usage, plans, permission requests and
// questions with their answers and resolutions, run_turn requests,
// denials, errors, logs and metrics.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
)

// ascii and unicode are the vocabulary of the corpus text. Agent output
// is mostly English and code with some unicode in it; one word in eight
// comes from the unicode list, which makes about 5% of the bytes non-ASCII.
var ascii = []string{
	"the", "agent", "reads", "main.go", "and", "writes", `\"quoted\"`, "path/to/file.ts", "func()",
	"{braces}", "[brackets]", `back\\slash`, "tab\\there", "line\\nbreak", "ok", "done", "x",
	"I", "will", "run", "the", "tests", "first", "then", "fix", "failing", "case", "in", "handler",
	"return", "err", "nil", "if", "for", "range", "package", "import", "struct", "interface",
	"go test ./...", "npm run dev", "const", "value", "with", "a", "to", "of", "is", "that", "this",
	"function", "should", "error", "file", "line", "change", "update", "check", "build", "it",
}

var unicode = []string{
	"naïve", "café", "日本語", "テキスト", "emoji 🚀", "Ünïcödé", "≥ 1.5×", "—", "“curly”",
	"U+2028:\u2028", "U+2029:\u2029", "résumé", "Ελληνικά", "русский", "→", "✓",
}

func text(r *rand.Rand, n int) string {
	b := make([]byte, 0, n*8)
	for len(b) < n {
		if len(b) > 0 {
			b = append(b, ' ')
		}
		if r.IntN(8) == 0 {
			b = append(b, unicode[r.IntN(len(unicode))]...)
		} else {
			b = append(b, ascii[r.IntN(len(ascii))]...)
		}
	}
	return string(b)
}

func main() {
	lines := flag.Int("lines", 1000000, "number of lines")
	profile := flag.String("profile", "agent", "agent: agent-host traffic; traffic: agent-host protocol v1, every message kind; dense: short strings, many keys, more non-ASCII and escapes; deep: long transcript lines, deep nesting, wide arrays")
	flag.Parse()
	r := rand.New(rand.NewPCG(1, 2))
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	switch *profile {
	case "dense":
		dense(w, r, *lines)
		return
	case "deep":
		deep(w, r, *lines)
		return
	case "traffic":
		traffic(w, r, *lines)
		return
	}
	run, seq := 1, 0
	for i := 0; i < *lines; i++ {
		runID := "run-" + strconv.Itoa(run)
		seq++
		switch k := r.IntN(100); {
		case k < 55:
			fmt.Fprintf(w, `{"type":"event","runId":%q,"seq":%d,"event":{"type":"text_delta","text":"%s"}}`+"\n", runID, seq, text(r, 130+r.IntN(170)))
		case k < 65:
			fmt.Fprintf(w, `{"type":"event","runId":%q,"seq":%d,"event":{"type":"thinking","text":"%s","signature":"sig-%d"}}`+"\n", runID, seq, text(r, 200+r.IntN(150)), r.Int64())
		case k < 73:
			fmt.Fprintf(w, `{"type":"event","runId":%q,"seq":%d,"event":{"type":"tool_call","toolCallId":"call_%d","name":"Bash","input":{"command":"go test ./... -run 'Test%d'","timeout":%d,"description":"%s"}}}`+"\n", runID, seq, r.IntN(1e6), r.IntN(1000), 1000*r.IntN(600), text(r, 40))
		case k < 81:
			fmt.Fprintf(w, `{"type":"event","runId":%q,"seq":%d,"event":{"type":"tool_result","toolCallId":"call_%d","isError":%t,"output":"%s"}}`+"\n", runID, seq, r.IntN(1e6), r.IntN(10) == 0, text(r, 100+r.IntN(300)))
		case k < 86:
			fmt.Fprintf(w, `{"type":"event","runId":%q,"seq":%d,"event":{"type":"usage","usage":{"inputTokens":%d,"outputTokens":%d,"cache":{"read":%d,"write":%d},"costUsd":%.6f}}}`+"\n", runID, seq, r.IntN(200000), r.IntN(8000), r.IntN(100000), r.IntN(5000), r.Float64())
		case k < 90:
			fmt.Fprintf(w, `{"type":"log","level":"%s","component":"host","msg":"%s"}`+"\n", []string{"debug", "info", "warn", "error"}[r.IntN(4)], text(r, 60))
		case k < 94:
			fmt.Fprintf(w, `{"type":"metric","name":"run.duration_ms","value":%d.%d}`+"\n", r.IntN(100000), r.IntN(100))
		case k < 97:
			fmt.Fprintf(w, `{"type":"event","runId":%q,"seq":%d,"event":{"type":"completed","text":"%s","usage":{"inputTokens":%d,"outputTokens":%d}}}`+"\n", runID, seq, text(r, 80), r.IntN(200000), r.IntN(8000))
		default:
			fmt.Fprintf(w, `{"type":"run_done","id":"req-%d","runId":%q,"stopReason":"completed","events":%d,"usage":{"inputTokens":%d,"outputTokens":%d,"cache":{"read":%d,"write":%d}}}`+"\n", i, runID, seq, r.IntN(200000), r.IntN(8000), r.IntN(100000), r.IntN(5000))
			run++
			seq = 0
		}
	}
}

// Words for the dense profile: short, and about a third of them non-ASCII.
var denseWords = []string{
	"id", "ok", "err", "naïve", "日本", "テスト", "ü", "ß", "→", "✓", "λ", "Ω", "ж", "ψ", "é", "中文",
	"x", "y", "go", "ts", "js", "a/b", "k=v", "1.0", "ä", "ö", "ñ", "ç", "😀", "🚀",
}

// escapes are the \uXXXX forms the dense profile puts in every line.
var escapes = []string{`\u00e9`, `\u2028`, `\u2029`, `\ud83d\ude80`, `\ud83d\ude00`, `\u0041`, `\u001f`, `\u4e2d`, `\uD834\uDD1E`}

func short(r *rand.Rand) string {
	n := 1 + r.IntN(3)
	b := make([]byte, 0, 24)
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, denseWords[r.IntN(len(denseWords))]...)
	}
	return string(b)
}

func dense(w *bufio.Writer, r *rand.Rand, lines int) {
	types := []string{"span", "metric", "event", "log", "span", "event", "run_done"}
	for i := 0; i < lines; i++ {
		typ := types[r.IntN(len(types))]
		if r.IntN(25) != 0 && typ == "run_done" {
			typ = "span"
		}
		fmt.Fprintf(w, `{"type":"%s","i":%d,"a":"%s","b":"%s%s","c":%d,"d":"%s","e":{"f":"%s","g":%t,"h":"%s%s","i":[%d,"%s",null]},"j":"%s","k":%d.%d,"l":"%s","m":"%s%s","n":"%s"}`+"\n",
			typ, i, short(r), short(r), escapes[r.IntN(len(escapes))], r.IntN(1000), short(r),
			short(r), r.IntN(2) == 0, escapes[r.IntN(len(escapes))], short(r), r.IntN(100), short(r),
			short(r), r.IntN(1000), r.IntN(100), short(r), short(r), escapes[r.IntN(len(escapes))], short(r))
	}
}

// output is what a tool prints, as a JSON string's text: lines of code and
// listings, escaped newlines and tabs, quotes, backslashes, unicode.
func output(r *rand.Rand, n int) string {
	b := make([]byte, 0, n+64)
	for len(b) < n {
		switch r.IntN(6) {
		case 0:
			b = append(b, `\n`...)
		case 1:
			b = append(b, `\t`...)
		case 2:
			b = fmt.Appendf(b, `src/pkg%d/file_%d.go:%d:%d: `, r.IntN(20), r.IntN(100), r.IntN(900), r.IntN(80))
		case 3:
			b = append(b, unicode[r.IntN(len(unicode))]...)
		default:
			b = append(b, ascii[r.IntN(len(ascii))]...)
			b = append(b, ' ')
		}
	}
	return string(b)
}

// nest writes an object nested depth deep, each level with a key or two
// beside the next.
func nest(b []byte, r *rand.Rand, depth int) []byte {
	if depth == 0 {
		return fmt.Appendf(b, `{"leaf":%d,"ok":%t}`, r.IntN(1000), r.IntN(2) == 0)
	}
	b = fmt.Appendf(b, `{"kind":"level%d","n":%d,"child":`, depth, r.IntN(100))
	if r.IntN(3) == 0 {
		b = append(b, '[')
		b = nest(b, r, depth-1)
		b = append(b, ",null]"...)
	} else {
		b = nest(b, r, depth-1)
	}
	return append(b, '}')
}

// deep writes agent transcripts: assistant and user messages whose content
// is an array of parts, stream deltas, deeply nested tool inputs, wide
// arrays of numbers, and a run_done line ending each run.
func deep(w *bufio.Writer, r *rand.Rand, lines int) {
	run := 1
	var b []byte
	for i := 0; i < lines; i++ {
		runID := "run-" + strconv.Itoa(run)
		usage := fmt.Sprintf(`"usage":{"input_tokens":%d,"output_tokens":%d,"cache_read_input_tokens":%d}`, r.IntN(200000), r.IntN(8000), r.IntN(100000))
		b = b[:0]
		switch k := r.IntN(100); {
		case k < 35:
			b = fmt.Appendf(b, `{"type":"assistant","runId":%q,"seq":%d,"message":{"id":"msg_%016x","role":"assistant","model":"model-x","content":[{"type":"text","text":"%s"}`, runID, i, r.Uint64(), text(r, 200+r.IntN(1200)))
			if r.IntN(2) == 0 {
				b = fmt.Appendf(b, `,{"type":"tool_use","id":"toolu_%d","name":"Bash","input":{"command":"rg -n \"%s\" src/","description":"%s"}}`, r.IntN(1e9), ascii[r.IntN(len(ascii))], text(r, 60))
			}
			b = fmt.Appendf(b, `],"stop_reason":null,%s}}`, usage)
		case k < 60:
			n := 300 + r.IntN(1500)
			if r.IntN(20) == 0 {
				n = 8000 + r.IntN(8000) // a long listing
			}
			b = fmt.Appendf(b, `{"type":"user","runId":%q,"seq":%d,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":"%s","is_error":%t}]}}`, runID, i, r.IntN(1e9), output(r, n), r.IntN(10) == 0)
		case k < 75:
			b = fmt.Appendf(b, `{"type":"stream_event","runId":%q,"seq":%d,"event":{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":"%s"}}}`, runID, i, r.IntN(4), text(r, 10+r.IntN(60)))
		case k < 85:
			b = fmt.Appendf(b, `{"type":"embedding","runId":%q,"seq":%d,"dims":128,"vector":[`, runID, i)
			for d := 0; d < 128; d++ {
				if d > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendFloat(b, r.NormFloat64(), 'g', 8, 64)
			}
			b = append(b, "]}"...)
		case k < 97:
			b = fmt.Appendf(b, `{"type":"tool_input","runId":%q,"seq":%d,"message":{"content":[{"type":"tool_use","name":"Edit","input":`, runID, i)
			b = nest(b, r, 10+r.IntN(30))
			b = fmt.Appendf(b, `}],%s}}`, usage)
		default:
			b = fmt.Appendf(b, `{"type":"run_done","runId":%q,"seq":%d,"message":{"content":[{"type":"text","text":"%s"}],%s},"duration_ms":%d,"cost_usd":%.6f}`, runID, i, text(r, 80), usage, r.IntN(600000), r.Float64())
			run++
		}
		b = append(b, '\n')
		w.Write(b)
	}
}

// deltaEscapes are the escapes a streamed text delta carries.
var deltaEscapes = []string{`\n`, `\n\n`, `\"`, `\\`, `\t`, `\u2028`, `\u00e9`, `\ud83d\ude80`, `\u003c`, `\u003e`}

// delta is a streamed chunk of text: a few words, often with an escape.
func delta(r *rand.Rand) string {
	s := text(r, 8+r.IntN(60))
	if r.IntN(3) == 0 {
		s += deltaEscapes[r.IntN(len(deltaEscapes))]
	}
	return s
}

// traffic writes agent-host protocol v1 as a host and its daemon exchange
// it: runs of run_turn, run_started, deltas, tool calls and results,
// usage, permission requests and questions, completed and run_done.
func traffic(w *bufio.Writer, r *rand.Rand, lines int) {
	run, seq, req := 1, 0, 0
	tools := []string{"Bash", "Read", "Edit", "Grep", "WebFetch"}
	var b []byte
	for i := 0; i < lines; i++ {
		runID := fmt.Sprintf("run-%d", run)
		seq++
		b = b[:0]
		ev := func(format string, a ...any) {
			b = fmt.Appendf(b, `{"type":"event","runId":%q,"seq":%d,"event":`, runID, seq)
			b = fmt.Appendf(b, format, a...)
			b = append(b, '}')
		}
		switch k := r.IntN(1000); {
		case seq == 1:
			b = fmt.Appendf(b, `{"type":"run_turn","id":"t%d","runId":%q,"params":{"chatId":"chat-%d","prompt":"%s","workspace":"/home/user/src/repo-%d","model":"claude-sonnet-5","level":%d,"reasoningEffort":"medium","permissions":"ask","permissionTimeoutMs":30000,"options":{"maxTurns":%d}}}`, run, runID, run%50, text(r, 40+r.IntN(200)), run%7, r.IntN(4), 1+r.IntN(20))
		case seq == 2:
			ev(`{"type":"run_started","model":"claude-sonnet-5","sessionId":"%08x-%04x-4%03x-a%03x-%012x"}`, r.Uint32(), r.IntN(1<<16), r.IntN(1<<12), r.IntN(1<<12), r.Int64N(1<<48))
		case k < 520:
			ev(`{"type":"text_delta","text":"%s"}`, delta(r))
		case k < 600:
			ev(`{"type":"thinking","text":"%s"}`, text(r, 60+r.IntN(400)))
		case k < 670:
			name := tools[r.IntN(len(tools))]
			ev(`{"type":"tool_call","toolCallId":"toolu_%012d","name":%q,"input":{"command":"go test ./lib/... -run 'Test%d' -count=1","description":"%s","timeout":%d,"env":{"GOFLAGS":"-mod=mod","CI":"1"},"paths":["lib/a.go","lib/b_test.go","cmd/x/main.go"]}}`, r.Int64N(1e12), name, r.IntN(1000), text(r, 30), 1000*r.IntN(600))
		case k < 760:
			ev(`{"type":"tool_result","toolCallId":"toolu_%012d","output":"%s","isError":%t}`, r.Int64N(1e12), output(r, 80+r.IntN(900)), r.IntN(12) == 0)
		case k < 830:
			ev(`{"type":"usage","usage":{"inputTokens":%d,"outputTokens":%d,"cacheReadTokens":%d,"cacheWriteTokens":%d,"costUsd":%.6f,"durationMs":%d}}`, r.IntN(200000), r.IntN(8000), r.IntN(100000), r.IntN(5000), r.Float64(), r.IntN(60000))
		case k < 850:
			ev(`{"type":"plan","text":"%s","plan":[{"step":"%s","status":"completed"},{"step":"%s","status":"in_progress"},{"step":"%s","status":"pending"}]}`, text(r, 20), text(r, 15), text(r, 15), text(r, 15))
		case k < 870:
			req++
			b = fmt.Appendf(b, `{"type":"permission_request","runId":%q,"requestId":"p%d","tool":"Bash","input":{"command":"rm -rf build/ && make -j%d","description":"%s"},"description":"%s","choices":["allow","allow_session","deny"],"timeoutMs":30000}`, runID, req, 1+r.IntN(16), text(r, 20), text(r, 20))
		case k < 885:
			b = fmt.Appendf(b, `{"type":"permission_resolved","runId":%q,"requestId":"p%d","decision":%q,"by":"daemon"}`, runID, req, []string{"allow", "allow_session", "deny"}[r.IntN(3)])
		case k < 895:
			b = fmt.Appendf(b, `{"type":"answer_permission","id":"a%d","runId":%q,"requestId":"p%d","decision":"allow","input":{"command":"make -j4"}}`, i, runID, req)
		case k < 905:
			req++
			b = fmt.Appendf(b, `{"type":"question","runId":%q,"requestId":"q%d","toolCallId":"toolu_%d","questions":[{"id":"db","header":"Database","question":"%s?","options":[{"label":"Postgres","description":"%s"},{"label":"SQLite"}],"multiSelect":%t}],"timeoutMs":60000}`, runID, req, r.IntN(1e9), text(r, 30), text(r, 12), r.IntN(2) == 0)
		case k < 912:
			b = fmt.Appendf(b, `{"type":"answer_question","id":"a%d","runId":%q,"requestId":"q%d","answers":{"db":["Postgres"]}}`, i, runID, req)
		case k < 918:
			b = fmt.Appendf(b, `{"type":"question_resolved","runId":%q,"requestId":"q%d","answered":true,"by":"daemon"}`, runID, req)
		case k < 928:
			ev(`{"type":"denied","toolCallId":"toolu_%d","name":"Bash","denial":{"rule":"commands.deny \"git push*\" (policy.toml:%d)","match":"git push origin %s","verdict":"deny"}}`, r.IntN(1e9), 1+r.IntN(40), ascii[r.IntN(len(ascii))])
		case k < 950:
			b = fmt.Appendf(b, `{"type":"log","level":"%s","component":"host","runId":%q,"msg":"%s"}`, []string{"debug", "info", "warn", "error"}[r.IntN(4)], runID, text(r, 50))
		case k < 965:
			b = fmt.Appendf(b, `{"type":"metric","name":"run.duration_ms","value":%d.%d,"tags":{"backend":"claude","runId":%q}}`, r.IntN(100000), r.IntN(100), runID)
		case k < 970:
			b = fmt.Appendf(b, `{"type":"error","id":"a%d","error":{"code":"unknown_request","message":"run %s has no pending permission request p%d","retryable":false}}`, i, runID, req+1)
		case k < 975:
			b = fmt.Appendf(b, `{"type":"ping","id":"g%d"}`, i)
		case k < 980:
			b = fmt.Appendf(b, `{"type":"ok","id":"g%d"}`, i)
		case k < 985 || seq < 30:
			ev(`{"type":"text_delta","text":"%s"}`, delta(r))
		default:
			ev(`{"type":"completed","text":"%s","usage":{"inputTokens":%d,"outputTokens":%d,"cacheReadTokens":%d,"costUsd":%.6f,"durationMs":%d}}`, text(r, 60), r.IntN(200000), r.IntN(8000), r.IntN(100000), r.Float64(), r.IntN(600000))
			b = append(b, '\n')
			seq++
			b = fmt.Appendf(b, `{"type":"run_done","id":"t%d","runId":%q,"stopReason":"completed","events":%d,"usage":{"inputTokens":%d,"outputTokens":%d,"cacheReadTokens":%d,"costUsd":%.6f,"durationMs":%d}}`, run, runID, seq, r.IntN(200000), r.IntN(8000), r.IntN(100000), r.Float64(), r.IntN(600000))
			i++
			run++
			seq = 0
		}
		b = append(b, '\n')
		w.Write(b)
	}
}
