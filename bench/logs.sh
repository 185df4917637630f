#!/usr/bin/env bash
# bench/logs.sh: issue 38's rows — ndjson on a corpus shaped like Claude
# Code's JSONL transcripts (bench/logcorpus), against jq doing the same:
# where --since against fromdateiso8601, stats --every 1h, schema against
# jq's per-path type counts, join 1M x 100k against jq's INDEX, and a .gz
# file read by ndjson against zcat | ndjson. Run from the repository root
# after make all; make bench runs it after the ndjson rows.
#   BENCH_DIR    where the corpus is kept (default /tmp/agentry-bench)
#   LOG_LINES    corpus lines (default 1000000, about 400 MB)
#   JQ_LINES     the lines jq is timed on, its time scaled to LOG_LINES
#                (default 100000: jq takes minutes on a million)
#   RUNS         ndjson runs per row, the median kept (default 3)
set -euo pipefail
BENCH_DIR=${BENCH_DIR:-/tmp/agentry-bench}
LOG_LINES=${LOG_LINES:-1000000}
JQ_LINES=${JQ_LINES:-100000}
RUNS=${RUNS:-3}
ND=${ND:-$PWD/bin/ndjson}
mkdir -p "$BENCH_DIR"
corpus=$BENCH_DIR/logs-$LOG_LINES.jsonl
small=$BENCH_DIR/logs-$JQ_LINES.jsonl
right=$BENCH_DIR/logs-right-$((LOG_LINES / 10)).jsonl
[ -s "$corpus" ] || go run ./bench/logcorpus -lines "$LOG_LINES" > "$corpus"
[ -s "$small" ] || head -n "$JQ_LINES" "$corpus" > "$small"
[ -s "$right" ] || go run ./bench/logcorpus -right -lines $((LOG_LINES / 10)) > "$right"
[ -s "$corpus.gz" ] || gzip -c "$corpus" > "$corpus.gz"
tiny=$BENCH_DIR/logs-1000.jsonl
[ -s "$tiny" ] || head -n 1000 "$corpus" > "$tiny"
scale=$(echo "$LOG_LINES / $JQ_LINES" | bc -l)

# check CMD: CMD prints something and fails not (a row that measured an
# error would be worth nothing).
check() {
  local n
  n=$(bash -c "set -o pipefail; $1" 2>&1 | wc -l) || { echo "bench: failed: $1" >&2; exit 2; }
  [ "$n" -gt 0 ] || { echo "bench: printed nothing: $1" >&2; exit 2; }
}

# secs CMD: the median wall time of RUNS runs of CMD (stdout discarded).
secs() {
  local n=$1 cmd=$2 t ts=()
  for _ in $(seq "$n"); do
    /usr/bin/time -f %e -o "$BENCH_DIR/time" bash -c "$cmd" > /dev/null 2>&1 || true
    t=$(tail -n 1 "$BENCH_DIR/time")
    ts+=("$t")
  done
  printf '%s\n' "${ts[@]}" | sort -n | sed -n "$(((n + 1) / 2))p"
}

fails=0
# row NAME NDJSON_CMD JQ_CMD MIN_X [ONCE]: JQ_CMD runs once on the small
# corpus ($in is the file each reads), its time scaled to the whole; with
# ONCE set, what JQ_CMD does once whatever its input (join's INDEX of the
# other side) is timed on an empty input and left out of the scaling.
row() {
  local name=$1 nd jq x fixed=0
  check "in=$tiny; $2"
  [ -n "${5:-}" ] || check "in=$tiny; $3" # (a ONCE row's jq takes minutes on any input)
  nd=$(secs "$RUNS" "in=$corpus; $2")
  [ -n "${5:-}" ] && fixed=$(secs 1 "in=/dev/null; $3")
  jq=$(secs 1 "in=$small; $3")
  # (a per-line part lost in the noise of the fixed one counts as none)
  jq=$(echo "d = $jq - $fixed; if (d < 0) d = 0; $fixed + d * $scale" | bc -l)
  x=$(echo "$jq / $nd" | bc -l)
  local verdict=met
  (($(echo "$x < $4" | bc -l))) && verdict=MISSED && fails=$((fails + 1))
  printf '%-26s ndjson %8.2f s   jq %9.1f s (scaled)   %7.1fx  target >= %sx: %s\n' "$name" "$nd" "$jq" "$x" "$4" "$verdict"
}

echo "corpus: $LOG_LINES lines, $(($(stat -c %s "$corpus") / 1000000)) MB; jq timed on $JQ_LINES lines and scaled; $(nproc) cores; $(jq --version)"
# Within the first lines, which the check and jq read: both select.
since=$(date -u -d @$((1796000000 + 1000)) +%Y-%m-%dT%H:%M:%SZ)
row "where --since" "$ND where --time timestamp --since $since -- \$in" \
  "jq -c 'select((.timestamp | sub(\"\\\\.[0-9]+Z\$\"; \"Z\") | fromdateiso8601) >= (\"$since\" | fromdateiso8601))' \$in" 20
row "stats --every 1h --by" "$ND stats message.usage.output_tokens --by message.model --time timestamp --every 1h -- \$in" \
  "jq -nc 'reduce inputs as \$l ({}; (((\$l.timestamp | sub(\"\\\\.[0-9]+Z\$\"; \"Z\") | fromdateiso8601 / 3600 | floor) | tostring) + \" \" + (\$l.message.model | tostring)) as \$k | .[\$k].count += 1 | .[\$k].sum += (\$l.message.usage.output_tokens // 0))' \$in" 20
row "schema" "$ND schema --json -- \$in" \
  "jq -c 'paths as \$p | [(\$p | map(if type == \"number\" then \"[]\" else . end) | join(\".\")), (getpath(\$p) | type)]' \$in | sort | uniq -c" 10
row "join 1M x 100k" "$ND join -k uuid $right -- \$in" \
  "jq -nc --slurpfile r $right 'INDEX(\$r[]; .uuid) as \$ix | inputs | select(\$ix[.uuid]) | . + \$ix[.uuid]' \$in" 10 once
gz=$(secs "$RUNS" "$ND count type -- $corpus.gz")
zc=$(secs "$RUNS" "zcat $corpus.gz | $ND count type")
verdict=met
(($(echo "$gz > 1.3 * $zc" | bc -l))) && verdict=MISSED && fails=$((fails + 1))
printf '%-26s ndjson %8.2f s   zcat | ndjson %6.2f s   %7.2fx  target <= 1.3x: %s\n' "count type -- .gz" "$gz" "$zc" "$(echo "$gz / $zc" | bc -l)" "$verdict"
exit $((fails > 0))
