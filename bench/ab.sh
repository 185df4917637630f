#!/usr/bin/env bash
# make bench-ab: ndjson (./bin/ndjson) against one or more baseline ndjson
# binaries, interleaved on the same machine, per verb and corpus: on a
# shared machine absolute times drift, and the ratio of runs made one
# right after the other drifts less. Each round runs every binary once, in
# an order that rotates from round to round (so that no binary always goes
# first, or always after the same one), and the ratio printed is the median
# over rounds of ./bin/ndjson's time over the baseline's in that round.
#
#   AB_NEW     the binary measured (default ./bin/ndjson)
#   AB_BASES   baseline binaries, space-separated (default /tmp/ndjson-b58,
#              built from b58df31: git worktree add /tmp/b58 b58df31 &&
#              (cd /tmp/b58 && go build -o /tmp/ndjson-b58 ./cmd/ndjson))
#   AB_PAIRS   rounds per verb and corpus (default 7)
#   AB_CORPORA corpora (default "agent traffic dense deep")
#   AB_VERBS   verbs to run, a |-separated list of names from the table below
#              (default all)
#   AB_MODES   how the binaries validate: native (what the CPU has), avx2
#              (GODEBUG=cpu.avx512f=off), scalar (GODEBUG=cpu.avx2=off);
#              default "native"
#   BENCH_DIR, BENCH_LINES as for make bench (the corpora are shared)
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C
BENCH_DIR=${BENCH_DIR:-/tmp/agentry-bench}
BENCH_LINES=${BENCH_LINES:-1000000}
AB_BASES=${AB_BASES:-/tmp/ndjson-b58}
AB_PAIRS=${AB_PAIRS:-7}
AB_CORPORA=${AB_CORPORA:-agent traffic dense deep}
AB_MODES=${AB_MODES:-native}
ND=${AB_NEW:-$PWD/bin/ndjson}
mkdir -p "$BENCH_DIR"
read -r -a bases <<<"$AB_BASES"
for b in "${bases[@]}"; do [ -x "$b" ] || { echo "bench-ab: no baseline binary $b (see bench/ab.sh)" >&2; exit 2; }; done
out_dir=$(mktemp -d "${TMPDIR:-/tmp}/agentry-ab.XXXXXX")
[ -d /dev/shm ] && [ -w /dev/shm ] && { rmdir "$out_dir"; out_dir=$(mktemp -d /dev/shm/agentry-ab.XXXXXX); }
trap 'rm -rf "$out_dir"' EXIT

# corpus_for PROFILE: as make bench's.
corpus_for() {
  lines=$BENCH_LINES
  [ "$1" = deep ] && lines=$((BENCH_LINES / 5))
  corpus="$BENCH_DIR/corpus-$1-$lines.ndjson"
  if [ ! -s "$corpus" ] || [ bench/corpus/main.go -nt "$corpus" ]; then
    echo "bench-ab: generating $corpus" >&2
    go run ./bench/corpus -lines "$lines" -profile "$1" > "$corpus.tmp" && mv "$corpus.tmp" "$corpus"
  fi
}

# once ENV BIN ARGS: "wall cpu", the seconds BIN ARGS takes over the
# corpus and the CPU seconds (user and system) it spends, output to a file
# in memory (never /dev/null, which some tools notice). On a machine others
# load, the CPU time moves less than the wall time: both are shown.
once() {
  local envs=$1 bin=$2 t0 t1
  shift 2
  : > "$out_dir/out"
  t0=$EPOCHREALTIME
  env $envs /usr/bin/time -f '%U %S' -o "$out_dir/cpu" "$bin" "$@" < "$corpus" > "$out_dir/out" 2>/dev/null || true
  t1=$EPOCHREALTIME
  echo "$(echo "$t1 - $t0" | bc -l) $(awk '{print $1 + $2}' "$out_dir/cpu")"
}
median() { sort -g | awk '{a[NR]=$1} END {printf "%.4f\n", a[int((NR+1)/2)]}'; }

verbs() { # PROFILE: name|args lines
  local path=event.text num=usage.outputTokens
  [ "$1" = dense ] && path=e.h num=k
  [ "$1" = deep ] && path=message.content.0.text num=message.usage.output_tokens
  cat <<VERBS
where|where type==run_done
count|count type
get -r|get -r $path
check|check
pick|pick --null type runId text=$path
csv|csv --no-header type runId $path
tsv|tsv --no-header type runId $path
uniq|uniq --by runId
stats|stats --json $num --by type
sort|sort -k $num
VERBS
}

printf 'bench-ab: %s against %s; medians of %d interleaved rounds; %d cores, load %s\n' \
  "$ND" "${bases[*]}" "$AB_PAIRS" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
head=$(printf '%-8s %-8s %-7s %8s' corpus verb mode new_s)
for b in "${bases[@]}"; do
  nm=$(basename "$b" | sed 's/^ndjson-//')
  head+=$(printf ' %8s %8s %8s' "${nm}_s" "x$nm" "cpu_x$nm")
done
echo "$head"
for mode in $AB_MODES; do
  envs=""
  case $mode in
  avx2) envs=GODEBUG=cpu.avx512f=off ;;
  scalar) envs=GODEBUG=cpu.avx2=off ;;
  esac
  for prof in $AB_CORPORA; do
    corpus_for "$prof"
    cat "$corpus" > /dev/null
    while IFS='|' read -r name args; do
      [ -n "${AB_VERBS:-}" ] && ! grep -qxF "$name" <<<"${AB_VERBS//|/$'\n'}" && continue
      read -r -a argv <<<"$args"
      bins=("$ND" "${bases[@]}")
      nb=${#bins[@]}
      declare -A times=() cpus=()
      for ((r = 0; r < AB_PAIRS; r++)); do
        for ((k = 0; k < nb; k++)); do
          j=$(((k + r) % nb))
          read -r "times[$j,$r]" "cpus[$j,$r]" < <(once "$envs" "${bins[$j]}" "${argv[@]}")
        done
      done
      line=$(printf '%-8s %-8s %-7s %8.3f' "$prof" "$name" "$mode" "$(for ((r = 0; r < AB_PAIRS; r++)); do echo "${times[0,$r]}"; done | median)")
      for ((j = 1; j < nb; j++)); do
        bt=$(for ((r = 0; r < AB_PAIRS; r++)); do echo "${times[$j,$r]}"; done | median)
        ratio=$(for ((r = 0; r < AB_PAIRS; r++)); do echo "${times[0,$r]} / ${times[$j,$r]}" | bc -l; done | median)
        cratio=$(for ((r = 0; r < AB_PAIRS; r++)); do echo "${cpus[0,$r]} / ${cpus[$j,$r]}" | bc -l; done | median)
        line+=$(printf ' %8.3f %8.3f %8.3f' "$bt" "$ratio" "$cratio")
      done
      echo "$line"
      unset times cpus
    done < <(verbs "$prof")
  done
done
echo "x: ./bin/ndjson's wall time over the baseline's, the median of the rounds' ratios (below 1: ./bin/ndjson is faster); cpu_x: the same for CPU time (user + system)"
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
