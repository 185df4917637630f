// Command corpus writes a deterministic NDJSON corpus of agent-host v1
// traffic for make bench: mixed message types, long unicode text with
// escaped quotes, nested usage objects. Usage: corpus [-lines N]
// [-profile agent|dense] > file. The dense profile is shaped unlike the
// first, so that no code is tuned to one shape of data: more keys per
// object, short strings, about 15% non-ASCII bytes, and two or three
// \uXXXX escapes a line (surrogate pairs and \u2028 among them).
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
	profile := flag.String("profile", "agent", "agent: agent-host traffic; dense: short strings, many keys, more non-ASCII and escapes")
	flag.Parse()
	r := rand.New(rand.NewPCG(1, 2))
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	if *profile == "dense" {
		dense(w, r, *lines)
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
