// Command corpus writes a deterministic NDJSON corpus of agent-host v1
// traffic for make bench: mixed message types, long unicode text with
// escaped quotes, nested usage objects. Usage: corpus [-lines N] > file
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
	flag.Parse()
	r := rand.New(rand.NewPCG(1, 2))
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
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
