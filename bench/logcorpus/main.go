// Command logcorpus writes a corpus shaped like Claude Code's JSONL
// transcripts (assistant lines with a model, usage and cost, user lines
// with tool results, each with an RFC 3339 timestamp, a few seconds
// apart), for bench/logs.sh: logcorpus [-lines N] > file; or, with
// -right, N lines keyed by the corpus's uuid (every tenth), for join.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"
)

func main() {
	lines := flag.Int("lines", 1000000, "lines to write")
	right := flag.Bool("right", false, "write join's other side: lines keyed by every tenth uuid")
	flag.Parse()
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	if *right {
		for i := range *lines {
			fmt.Fprintf(w, `{"uuid":"u%08d","label":"L%d","weight":%d}`+"\n", i*10, i, i%97)
		}
		return
	}
	r := rand.New(rand.NewPCG(7, 7))
	models := []string{"claude-opus-4-5", "claude-sonnet-4-5", "claude-haiku-4-5"}
	t0 := time.Unix(1796000000, 0).UTC()
	for i := range *lines {
		ts := t0.Add(time.Duration(i*3)*time.Second + time.Duration(r.IntN(3000))*time.Millisecond).Format("2006-01-02T15:04:05.000Z")
		session := fmt.Sprintf("s%05d", i/500)
		if r.IntN(10) < 6 {
			fmt.Fprintf(w, `{"parentUuid":"p%08d","isSidechain":false,"userType":"external","cwd":"/home/u/src/proj","sessionId":"%s","version":"2.1.3","type":"assistant","message":{"id":"msg_%d","type":"message","role":"assistant","model":"%s","content":[{"type":"text","text":"%s"}],"usage":{"input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":%d}},"costUSD":%.6f,"uuid":"u%08d","timestamp":"%s"}`+"\n",
				i, session, i, models[r.IntN(3)], strings.Repeat("word ", 1+r.IntN(30)), 1+r.IntN(5000), r.IntN(100000), 1+r.IntN(2000), r.Float64()*0.05, i, ts)
			continue
		}
		fmt.Fprintf(w, `{"parentUuid":"p%08d","isSidechain":false,"type":"user","sessionId":"%s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":"%s"}]},"uuid":"u%08d","timestamp":"%s"}`+"\n",
			i, session, i, strings.Repeat("ok ", 1+r.IntN(20)), i, ts)
	}
}
