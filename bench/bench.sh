#!/usr/bin/env bash
# make bench: ndjson against jq, with grep -F as the floor, on four corpora
# shaped unlike each other, in one run; then svc against nohup, pm2 and
# supervisord, and agent-host's ping throughput, latency and memory. Prints
# medians, throughput, ratios, peak RSS, and whether each target is met.
# Not a test: the numbers are for people.
#
#   BENCH_DIR   where the corpus is kept between runs (default /tmp/agentry-bench)
#   BENCH_LINES lines in each corpus (default 1000000, about 270 MB; the
#               deep corpus, whose lines are five times longer, gets a fifth)
#   RUNS        runs per measurement for ndjson and grep (default 7; jq gets 3)
#   BENCH_CORPORA the ndjson corpora (default "agent traffic dense deep")
#   BENCH_ONLY  ndjson: stop after ndjson's rows (no logs, svc or agent-host)
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C
BENCH_DIR=${BENCH_DIR:-/tmp/agentry-bench}
BENCH_LINES=${BENCH_LINES:-1000000}
RUNS=${RUNS:-7}
JQ_RUNS=${JQ_RUNS:-3}
ND="$PWD/bin/ndjson"
mkdir -p "$BENCH_DIR"

install_pkg() { # command package
  command -v "$1" >/dev/null && return
  echo "bench: installing $2" >&2
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq "$2" >/dev/null
  else sudo apt-get update -qq && sudo apt-get install -y -qq "$2" >/dev/null; fi
}
install_pkg jq jq
[ -x /usr/bin/time ] || install_pkg /usr/bin/time time

# Output goes to a file (never /dev/null, which grep notices and stops
# early for), in memory where the machine has a tmpfs: on a disk, the
# writeback of one run's output ran during the next, on the cores the tool
# measured then needs, and emptying the last run's output was timed too.
OUT_DIR=$BENCH_DIR
[ -d /dev/shm ] && [ -w /dev/shm ] && OUT_DIR=$(mktemp -d /dev/shm/agentry-bench.XXXXXX)
out="$OUT_DIR/out"
[ "$OUT_DIR" != "$BENCH_DIR" ] && trap 'rm -rf "$OUT_DIR"' EXIT
# once CMD: runs CMD (a shell string, stdin from the corpus, stdout to
# $out, emptied before the clock starts); prints "seconds max_rss_kb".
# The corpus is read into the page cache again before each run, untimed:
# the VMs this was measured on page out memory gone cold (DAMON's pageout
# scheme), and minutes after the bench had read the agent corpus only 5 MB
# of its 272 MB was still cached. A run after a long spell of other work
# would time the disk (reading it cold took 0.68 s, cached 0.06 s). When
# it is cached, the extra read changes nothing measured.
once() {
  local t0 t1
  cat "$corpus" > /dev/null
  : > "$out"
  t0=$EPOCHREALTIME
  /usr/bin/time -f %M -o "$BENCH_DIR/rss" bash -c "$1" < "$corpus" > "$out" || true
  t1=$EPOCHREALTIME
  echo "$(echo "$t1 - $t0" | bc -l) $(tail -1 "$BENCH_DIR/rss")"
}
# median: the median of the numbers on stdin.
median() { sort -g | awk '{a[NR]=$1} END {printf "%.4f\n", a[int((NR+1)/2)]}'; }
# measure N CMD [FLOOR_CMD]: runs CMD N times — alternating with FLOOR_CMD
# when given, so that a noisy spell on a shared machine falls on both —
# and prints "median_seconds max_rss_kb [floor_median_seconds
# median_pair_ratio]": the last is the median of CMD's time over the floor
# run's just before it, which a machine whose speed drifts during the run
# moves less than the ratio of the medians. CMD runs last, so $out holds
# its output.
measure() {
  local n=$1 cmd=$2 floor=${3:-} times=() ftimes=() ratios=() rss=0 t r ft
  for ((i = 0; i < n; i++)); do
    if [ -n "$floor" ]; then read -r ft _ < <(once "$floor"); ftimes+=("$ft"); fi
    read -r t r < <(once "$cmd")
    times+=("$t")
    [ -n "$floor" ] && ratios+=("$(echo "$t / $ft" | bc -l)")
    ((r > rss)) && rss=$r
  done
  echo "$(printf '%s\n' "${times[@]}" | median) $rss $([ -n "$floor" ] && echo "$(printf '%s\n' "${ftimes[@]}" | median) $(printf '%s\n' "${ratios[@]}" | median)")"
}
command -v bc >/dev/null || install_pkg bc bc
command -v mlr >/dev/null || install_pkg mlr miller || true # stats is measured against Miller's stats1

# corpus_for PROFILE: makes (once, kept in BENCH_DIR) the corpus of
# that profile, and sets $corpus, $bytes and $nonascii.
corpus_for() {
  lines=$BENCH_LINES
  [ "$1" = deep ] && lines=$((BENCH_LINES / 5))
  corpus="$BENCH_DIR/corpus-$1-$lines.ndjson"
  if [ ! -s "$corpus" ] || [ bench/corpus/main.go -nt "$corpus" ]; then
    echo "bench: generating $corpus" >&2
    go run ./bench/corpus -lines "$lines" -profile "$1" > "$corpus.tmp" && mv "$corpus.tmp" "$corpus"
  fi
  bytes=$(stat -c %s "$corpus")
  nonascii=$(LC_ALL=C tr -d '\000-\177' < "$corpus" | wc -c)
}

fails=0
# has_avx512: whether ndjson validates with AVX-512 here (lib/ndjson's
# wideUTF8: AVX-512 F and BW with VBMI and BMI2).
has_avx512() {
  local f
  for f in avx2 avx512f avx512bw avx512vbmi bmi2; do grep -qw "$f" /proc/cpuinfo 2>/dev/null || return 1; done
}
# row OP NDJSON_CMD JQ_CMD GREP_CMD MIN_X_JQ MAX_X_GREP
row() {
  local op=$1 ndc=$2 jqc=$3 grepc=$4 minjq=$5 maxgrep=$6
  local nd ndrss gt gx
  read -r nd ndrss gt gx < <(measure "$RUNS" "$ndc" "$grepc")
  local ndlines; ndlines=$(wc -l < "$out")
  # jq alternates with ndjson too: x jq is the median of those pairs' ratios.
  local jqt jqrss xjq
  read -r jqt jqrss _ xjq < <(measure "$JQ_RUNS" "$jqc" "$ndc")
  local jqlines; jqlines=$(wc -l < "$out")
  local mbs
  mbs=$(echo "$bytes / $nd / 1000000" | bc -l)
  printf '%-22s %-7s %9.3f %10.0f %9.1f %9s %8.1f\n' "$op" ndjson "$nd" "$mbs" "$xjq" \
    "$([ -n "$gt" ] && printf '%.2f' "$gx" || echo -)" "$(echo "$ndrss / 1024" | bc -l)"
  printf '%-22s %-7s %9.3f %10.0f %9s %9s %8.1f\n' "" jq "$jqt" "$(echo "$bytes / $jqt / 1000000" | bc -l)" 1.0 - "$(echo "$jqrss / 1024" | bc -l)"
  [ -n "$gt" ] && printf '%-22s %-7s %9.3f %10.0f %9s %9s %8s\n' "" grep-F "$gt" "$(echo "$bytes / $gt / 1000000" | bc -l)" - 1.00 -
  # A missed target says by how much: the share of the time ndjson would
  # have to lose to meet it.
  local verdict="met" by=()
  if (($(echo "$xjq < $minjq" | bc -l))); then
    verdict="MISSED"
    by+=("$(printf '%.1fx jq, %.0f%% short' "$xjq" "$(echo "100 * (1 - $xjq / $minjq)" | bc -l)")")
  fi
  if [ -n "$gt" ] && [ -n "$maxgrep" ] && (($(echo "$gx > $maxgrep" | bc -l))); then
    verdict="MISSED"
    by+=("$(printf '%.2fx grep -F, %.0f%% over' "$gx" "$(echo "100 * ($gx / $maxgrep - 1)" | bc -l)")")
  fi
  if ((ndrss > 32 * 1024)); then verdict="MISSED"; by+=("RSS over"); fi
  [ "${#by[@]}" -gt 0 ] && verdict="$verdict ($(IFS=';'; echo "${by[*]}" | sed 's/;/; /g'))"
  [ "$verdict" = met ] || fails=$((fails + 1))
  local lines_note=""
  [ "$ndlines" = "$jqlines" ] || lines_note=" (ndjson printed $ndlines lines, jq $jqlines)"
  printf '%-22s target: >= %sx jq%s, <= 32 MB RSS: %s%s\n\n' "" "$minjq" \
    "$([ -n "$maxgrep" ] && echo ", <= ${maxgrep}x grep -F")" "$verdict" "$lines_note"
}

# ndjson_rows PROFILE: every ndjson row on that profile's corpus. The
# targets hold on all four: agent (agent-host traffic, long texts, 7%
# non-ASCII), traffic (agent-host protocol v1 on the wire, every message
# kind: short text deltas with escapes, tool calls, usage, permission
# requests and questions), dense (many keys, short strings, 15% non-ASCII, \uXXXX
# escapes with surrogate pairs and U+2028 on every line) and deep (agent
# transcripts: 1.2 KB lines, content arrays, tool output full of escapes,
# objects nested 10 to 40 deep, arrays of 128 numbers).
ndjson_rows() {
  corpus_for "$1"
  # ndjson checks UTF-8 and scans strings with AVX2 where the CPU has it.
  vec="no AVX2: scalar validation"
  grep -qw avx2 /proc/cpuinfo 2>/dev/null && vec="AVX2 validation"
  has_avx512 && vec="AVX-512 validation"
  printf 'corpus %s: %s lines, %.1f MB, %.1f%% non-ASCII bytes; %d cores, %s; %s\n' \
    "$1" "$lines" "$(echo "$bytes / 1000000" | bc -l)" "$(echo "100 * $nonascii / $bytes" | bc -l)" "$(nproc)" "$vec" "$(jq --version)"
  printf 'medians of %d runs (jq: %d); ndjson alternates with grep -F and with jq, and x grep and x jq are medians of the pairs'"'"' ratios\n\n' "$RUNS" "$JQ_RUNS"
  printf '%-22s %-7s %9s %10s %9s %9s %8s\n' operation tool seconds MB/s "x jq" "x grep" "RSS MB"

  row "where type==run_done" "$ND where type==run_done" \
    "jq -c 'select(.type==\"run_done\")'" "grep -F '\"type\":\"run_done\"'" 25 1.25
  row "count type" "$ND count type" \
    "jq -n -r 'reduce inputs as \$l ({}; .[\$l.type|tostring] += 1) | to_entries[] | \"\\(.value)\\t\\(.key)\"'" \
    "grep -cF '\"type\":\"run_done\"'" 40 1.3
  # path is a string on most lines; jqpath is the same path as jq writes it.
  local path=event.text jqpath=.event.text
  [ "$1" = dense ] && path=e.h jqpath=.e.h # a short string with an escape in every line
  [ "$1" = deep ] && path=message.content.0.text jqpath='.message.content[0].text' # through an array
  row "get -r $path" "$ND get -r $path" "jq -r '$jqpath'" "" 20 ""
  row "check" "$ND check" "jq empty" "" 20 ""
  row "pick (3 fields)" "$ND pick --null type runId text=$path" "jq -c '{type, runId, text: $jqpath}'" "" 25 ""
  row "csv (3 fields)" "$ND csv --no-header type runId $path" "jq -r '[.type, .runId, $jqpath] | @csv'" "" 25 ""
  row "tsv (3 fields)" "$ND tsv --no-header type runId $path" "jq -r '[.type, .runId, $jqpath] | @tsv'" "" 25 ""
  row "uniq --by runId" "$ND uniq --by runId" \
    "jq -c -n 'foreach inputs as \$l ({}; (\$l.runId|tojson) as \$k | if .seen[\$k] then .out = null else .seen[\$k] = true | .out = \$l end; .out // empty)'" "" 20 ""
  local num=usage.outputTokens
  [ "$1" = dense ] && num=k
  [ "$1" = deep ] && num=message.usage.output_tokens
  row "stats $num --by type" "$ND stats --json $num --by type" \
    "jq -c -n 'reduce inputs as \$l ({}; (\$l.type|tostring) as \$g | \$l.$num as \$v | if (\$v|type) == \"number\" then .[\$g].count += 1 | .[\$g].sum += \$v | .[\$g].min = ([.[\$g].min // \$v, \$v] | min) | .[\$g].max = ([.[\$g].max // \$v, \$v] | max) else .[\$g].skipped += 1 end)'" "" 20 ""
  if command -v mlr >/dev/null; then
    read -r mt _ nt _ < <(measure "$JQ_RUNS" "mlr --ijsonl --ojsonl flatten then stats1 -a count,sum,min,max,mean -f $num -g type" "$ND stats --json $num --by type")
    verdict=met
    if (($(echo "$nt * 1.5 > $mt" | bc -l))); then verdict=MISSED; fails=$((fails + 1)); fi
    printf '%-22s %-7s %9.3f\n%-22s %-7s %9.3f\n%-22s target: >= 1.5x faster than Miller stats1: %s (%.1fx)\n\n' \
      "stats vs Miller" ndjson "$nt" "" mlr "$mt" "" "$verdict" "$(echo "$mt / $nt" | bc -l)"
  fi

  # sort holds the whole input (or spills it): against jq -s, which must,
  # one run each (jq -s takes tens of seconds and gigabytes); then under
  # --memory 64MiB, which must spill and stay small.
  local sk=$num
  read -r snd srss < <(measure 3 "$ND sort -k $sk")
  read -r sjq sjqrss < <(measure 1 "jq -s -c 'sort_by(.$sk)[]'")
  read -r ssp ssprss < <(measure 3 "TMPDIR=$BENCH_DIR $ND sort -k $sk --memory 64MiB")
  verdict=met
  if (($(echo "$sjq / $snd < 15" | bc -l))) || ((srss > 300 * 1024)) || ((ssprss > 120 * 1024)); then verdict=MISSED; fails=$((fails + 1)); fi
  printf '%-22s %-7s %9.3f %10.0f %9.1f %9s %8.1f\n' "sort -k $sk" ndjson "$snd" "$(echo "$bytes / $snd / 1000000" | bc -l)" "$(echo "$sjq / $snd" | bc -l)" - "$(echo "$srss / 1024" | bc -l)"
  printf '%-22s %-7s %9.3f %10.0f %9s %9s %8.1f\n' "" "jq -s" "$sjq" "$(echo "$bytes / $sjq / 1000000" | bc -l)" 1.0 - "$(echo "$sjqrss / 1024" | bc -l)"
  printf '%-22s %-7s %9.3f %10.0f %9.1f %9s %8.1f\n' "  --memory 64MiB" ndjson "$ssp" "$(echo "$bytes / $ssp / 1000000" | bc -l)" "$(echo "$sjq / $ssp" | bc -l)" - "$(echo "$ssprss / 1024" | bc -l)"
  printf '%-22s target: >= 15x jq -s, <= 300 MB RSS; --memory 64MiB <= 120 MB RSS: %s\n\n' "" "$verdict"

  # The vector and the scalar validator on the same corpus, runs alternating:
  # the AVX2 path must be the faster one. GODEBUG=cpu.avx2=off takes ndjson
  # down the scalar walk; where the CPU has the AVX-512 path, which ndjson
  # then takes, GODEBUG=cpu.avx512f=off takes it down the AVX2 one, and the
  # AVX-512 path must be no slower than that.
  if grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
    local avx2="$ND" op
    has_avx512 && avx2="GODEBUG=cpu.avx512f=off $ND"
    for op in check "count type"; do
      read -r vt _ st _ < <(measure "$RUNS" "$avx2 $op" "GODEBUG=cpu.avx2=off $ND $op")
      verdict=met
      if (($(echo "$vt >= $st" | bc -l))); then verdict=MISSED; fails=$((fails + 1)); fi
      printf '%-22s %-7s %9.3f %10.0f\n' "$op: vector/scalar" AVX2 "$vt" "$(echo "$bytes / $vt / 1000000" | bc -l)"
      printf '%-22s %-7s %9.3f %10.0f\n' "" scalar "$st" "$(echo "$bytes / $st / 1000000" | bc -l)"
      printf '%-22s target: the vector path faster than the scalar one: %s (%.2fx)\n\n' "" "$verdict" "$(echo "$st / $vt" | bc -l)"
      if has_avx512; then
        read -r wt _ at _ < <(measure "$RUNS" "$ND $op" "$avx2 $op")
        verdict=met
        if (($(echo "$wt > $at" | bc -l))); then verdict=MISSED; fails=$((fails + 1)); fi
        printf '%-22s %-7s %9.3f %10.0f\n' "$op: AVX-512/AVX2" AVX-512 "$wt" "$(echo "$bytes / $wt / 1000000" | bc -l)"
        printf '%-22s %-7s %9.3f %10.0f\n' "" AVX2 "$at" "$(echo "$bytes / $at / 1000000" | bc -l)"
        printf '%-22s target: the AVX-512 path no slower than the AVX2 one: %s (%.2fx)\n\n' "" "$verdict" "$(echo "$at / $wt" | bc -l)"
      fi
    done
  else
    echo "vector/scalar: no AVX2 on this CPU, so only the scalar path runs"
    echo
  fi

}

# startup_rows: ndjson's start-up, --version and where over a two-line
# input, the median of STARTUP_RUNS runs each (default 200; a run is a few
# milliseconds, nearly all of it the process starting), and the median
# peak RSS of 5; /bin/true is the floor, what starting any process costs
# here. What a program links pays its package init here, on every run:
# this is where a heavy dependency would show.
startup_rows() {
  local n=${STARTUP_RUNS:-200} tiny="$BENCH_DIR/tiny.ndjson" name cmd t0 t1 times rss i
  printf '{"type":"run_done","n":1}\n{"type":"event"}\n' > "$tiny"
  printf 'ndjson start-up: medians of %d runs, a two-line input\n' "$n"
  printf '%-28s %9s %8s\n' command ms "RSS MB"
  for name in "true" "ndjson --version" "ndjson where type==run_done"; do
    cmd="$ND ${name#ndjson }"
    [ "$name" = true ] && cmd=/bin/true
    times=()
    for ((i = 0; i < n; i++)); do
      t0=${EPOCHREALTIME/./}
      $cmd < "$tiny" > /dev/null
      t1=${EPOCHREALTIME/./}
      times+=($((t1 - t0)))
    done
    rss=$(for ((i = 0; i < 5; i++)); do /usr/bin/time -f %M $cmd < "$tiny" 2>&1 > /dev/null | tail -1; done | median)
    printf '%-28s %9.2f %8.1f\n' "$name" "$(echo "$(printf '%s\n' "${times[@]}" | median) / 1000" | bc -l)" "$(echo "$rss / 1024" | bc -l)"
  done
  echo
}


# version_rows: runagent's start-up against agent-host's, --version each,
# STARTUP_RUNS runs of both (default 200), alternating, which goes first
# swapped each run: runagent is to start no slower, by the median of the
# paired differences (the two medians are printed beside it).
version_rows() {
  local n=${STARTUP_RUNS:-200} i a b took ra=() ah=() d=() dm verdict=met
  # started PROG: PROG --version's wall time in microseconds, into took
  # (no subshell, which would be timed too).
  started() {
    local t0=${EPOCHREALTIME/./}
    "$PWD/bin/$1" --version > /dev/null
    took=$((${EPOCHREALTIME/./} - t0))
  }
  for ((i = 0; i < n; i++)); do
    if ((i % 2)); then
      started agent-host; b=$took; started runagent; a=$took
    else
      started runagent; a=$took; started agent-host; b=$took
    fi
    ra+=("$a") ah+=("$b") d+=($((a - b)))
  done
  dm=$(printf '%s\n' "${d[@]}" | median)
  if (($(echo "$dm > 0" | bc -l))); then verdict=MISSED; fails=$((fails + 1)); fi
  printf 'runagent --version %.2f ms, agent-host --version %.2f ms (medians of %d runs each, alternating), runagent %+.2f ms (the paired differences'"'"' median; target: no slower): %s\n\n' \
    "$(echo "$(printf '%s\n' "${ra[@]}" | median) / 1000" | bc -l)" "$(echo "$(printf '%s\n' "${ah[@]}" | median) / 1000" | bc -l)" "$n" "$(echo "$dm / 1000" | bc -l)" "$verdict"
}

startup_rows
for profile in ${BENCH_CORPORA:-agent traffic dense deep}; do ndjson_rows "$profile"; done
if [ "${BENCH_ONLY:-}" = ndjson ]; then
  if ((fails > 0)); then echo "bench: $fails target(s) missed"; else echo "bench: every target met"; fi
  exit 0
fi

echo
version_rows
# The verbs for the logs agents leave (where --since, stats --every,
# schema, join, compressed files) on a corpus shaped like Claude Code's
# transcripts, against jq doing the same.
BENCH_DIR="$BENCH_DIR" RUNS=3 bash bench/logs.sh | tee "$BENCH_DIR/logs.txt" || true
fails=$((fails + $(grep -c MISSED "$BENCH_DIR/logs.txt" || true)))

echo
# svc against nohup, pm2 (npm), supervisord and foreman (Debian), installed here
# when missing; a failed install is reported by svcbench as "not measured".
command -v pm2 >/dev/null || { echo "bench: installing pm2" >&2; npm install -g pm2@5 >/dev/null 2>&1 || true; }
command -v supervisord >/dev/null || install_pkg supervisord supervisor || true
command -v foreman >/dev/null || install_pkg foreman ruby-foreman || true # svc up against foreman start
go build -o "$BENCH_DIR/svcbench" ./bench/svcbench
"$BENCH_DIR/svcbench" -svc "$PWD/bin/svc" -ndjson "$PWD/bin/ndjson" | tee "$BENCH_DIR/svc.txt"
fails=$((fails + $(grep -c MISSED "$BENCH_DIR/svc.txt" || true)))
echo
go build -o "$BENCH_DIR/hostbench" ./bench/hostbench
"$BENCH_DIR/hostbench" -bin "$PWD/bin/agent-host" | tee "$BENCH_DIR/host.txt"
fails=$((fails + $(grep -c MISSED "$BENCH_DIR/host.txt" || true)))
echo
# agent-host over the real claude, and runagent over both CLIs, when make
# test-peers has installed them.
peers=${PEERS_DIR:-$HOME/.cache/agentry-peers}
if [ -x "$peers/node_modules/@anthropic-ai/claude-code-linux-x64/claude" ]; then
  AGENTRY_PEERS_BENCH=1 AGENTRY_PEERS="$peers" AGENTRY_BIN="$PWD/bin" go test -count=1 -timeout 40m -v -run 'TestBenchHostOverhead|TestBenchRunagentOverhead|TestBenchCodexAppServer|TestBenchACP|TestBenchRunagentACPx' ./tests/peers/ |
    grep "agent-host over\|runagent over\|runagent.s own cost\|codex turn\|codex interrupt\|^ACP " | tee "$BENCH_DIR/peers.txt"
  fails=$((fails + $(grep -c MISSED "$BENCH_DIR/peers.txt" || true)))
else
  echo "agent-host over a claude turn, runagent over a run: not measured (make test-peers installs the CLIs into $peers)"
fi
echo
if ((fails > 0)); then echo "bench: $fails target(s) missed"; else echo "bench: every target met"; fi
