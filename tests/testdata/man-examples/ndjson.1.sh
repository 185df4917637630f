# ndjson.1's examples: agent-host traffic, a capture with a bad line, and
# Claude Code transcripts and stream-json runs, some compressed.
{
	ndjson make type=hello id=h1 protocol:=1
	ndjson make type=run_turn id=t1 runId=r1 params.chatId=c1 params.prompt='fix the build'
	ndjson make type=run_turn id=t2 runId=r2 params.chatId=c2 params.prompt='and the tests'
} > requests.ndjson
agent-host --backend echo < requests.ndjson > traffic.ndjson
ndjson make type=metric name=run.duration_ms value:=7200 >> traffic.ndjson
{ cat traffic.ndjson; echo '{"type":"bogus"}'; echo 'not json'; } > capture.ndjson
gzip -c traffic.ndjson > capture.ndjson.gz

now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
mkdir -p "$HOME/.claude/projects/shop" "$HOME/old" runs
for m in claude-opus-5-5 claude-sonnet-5; do
	ndjson make type=assistant timestamp="$now" costUSD:=0.01 message.model=$m message.usage.output_tokens:=120
done > "$HOME/.claude/projects/shop/session.jsonl"
ndjson make type=assistant timestamp=2026-01-02T10:00:00Z costUSD:=0.02 message.model=claude-opus-5-5 \
	message.usage.output_tokens:=300 | gzip > "$HOME/old/session.jsonl.gz"
cp "$EXAMPLES_DATA/run.ndjson.zst" runs/
