#!/usr/bin/env bash
# make pgo: gathers cmd/ndjson/default.pgo, the CPU profile the Go compiler
# optimizes ndjson with (profile-guided optimization: inlining and layout
# of the hot paths). ndjson built with the tag ndjson_pprof runs the verbs
# make bench times over its four corpora, and their profiles are merged.
# Run it again when the hot paths change; builds use whatever is there.
#
#   BENCH_DIR, BENCH_LINES   as for make bench (the corpora are shared)
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/agentry-bench}
BENCH_LINES=${BENCH_LINES:-1000000}
mkdir -p "$BENCH_DIR"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -pgo=off -tags ndjson_pprof -o "$tmp/ndjson" ./cmd/ndjson
n=0
for profile in agent traffic dense deep; do
  lines=$BENCH_LINES
  [ "$profile" = deep ] && lines=$((BENCH_LINES / 5)) # as make bench has it
  corpus="$BENCH_DIR/corpus-$profile-$lines.ndjson"
  if [ ! -s "$corpus" ] || [ bench/corpus/main.go -nt "$corpus" ]; then
    echo "pgo: generating $corpus" >&2
    go run ./bench/corpus -lines "$lines" -profile "$profile" > "$corpus.tmp" && mv "$corpus.tmp" "$corpus"
  fi
  path=event.text num=usage.outputTokens
  [ "$profile" = dense ] && path=e.h num=k
  [ "$profile" = deep ] && path=message.content.0.text num=message.usage.output_tokens
  while read -r args; do
    n=$((n + 1))
    NDJSON_CPUPROFILE="$tmp/$n.prof" "$tmp/ndjson" $args < "$corpus" > /dev/null
  done <<VERBS
where type==run_done
count type
get -r $path
check
pick --null type runId text=$path
csv --no-header type runId $path
uniq --by runId
stats --json $num --by type
sort -k $num
VERBS
done
go tool pprof -proto "$tmp"/*.prof > cmd/ndjson/default.pgo
echo "pgo: cmd/ndjson/default.pgo from $n runs ($(stat -c %s cmd/ndjson/default.pgo) bytes)"
