#!/usr/bin/env bash
# make demo: the suite end to end, on the binaries in ./bin.
# Each binary that lands adds its part here.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/bin:$PATH"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold= plain=; fi
say() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }
show() { printf '$ %s\n' "$*"; bash -c "$*"; }

say "ndjson make: build agent-host traffic from the shell"
{
  ndjson make type=hello id=h1 protocol:=1 daemon=demo
  for run in 1 2 3; do
    ndjson make type=event runId=r$run seq:=1 event.type=run_started
    for word in "Reading" " main.go" " — naïve café" " and fixing" ' the "quoted" bug'; do
      ndjson make type=event runId=r$run seq:=2 event.type=text_delta event.text="$word"
    done
    ndjson make type=event runId=r$run seq:=3 event.type=usage event.usage.inputTokens:=$((run * 1200)) event.usage.outputTokens:=$((run * 80))
    ndjson make type=run_done id=t$run runId=r$run stopReason=completed events:=3
  done
  echo '{"type":"event","runId":"r9","event":{"type":"text_delta","text":"torn'
  printf '{"type":"log","level":"warn","msg":"invalid \xff byte"}\n'
  ndjson make type=metric name=run.duration_ms value:=5230.5
} > "$work/traffic.ndjson"
show "wc -l < $work/traffic.ndjson"

say "ndjson check: every line validated; two bad ones reported by line number"
show "ndjson check --protocol agent-host < $work/traffic.ndjson || echo \"(exit \$?)\""

say "ndjson where + get: the text of run r2, as it streamed"
show "ndjson where runId==r2 event.type==text_delta < $work/traffic.ndjson | ndjson get -r event.text | tr -d '\n'; echo"

say "ndjson count: messages by type (the bad lines are skipped and counted, never miscounted)"
show "ndjson count type < $work/traffic.ndjson"

say "ndjson where: numbers compare as numbers"
show "ndjson where 'event.usage.inputTokens>=2400' < $work/traffic.ndjson | ndjson get runId event.usage"

say "ndjson fmt: one message, pretty"
show "ndjson where type==metric < $work/traffic.ndjson | ndjson fmt"

say "agent-host: a turn with the echo backend, requests built by ndjson make"
show "{ ndjson make type=hello id=h1 protocol:=1 daemon=demo
  ndjson make type=run_turn id=t1 runId=r1 params.chatId=c1 'params.prompt=Hello from a sidecar — naïve café'
  ndjson make type=session_info id=s1 chatId=c1
} | agent-host > $work/host.ndjson; ndjson where type==event < $work/host.ndjson | ndjson get -r seq event.type event.text"
show "ndjson where type==run_done < $work/host.ndjson | ndjson fmt"
show "ndjson check --protocol agent-host < $work/host.ndjson"

say "agent-host: an interrupt ends a slow turn; a backend panic ends only its run"
show "{ ndjson make type=hello id=h1 protocol:=1
  ndjson make type=run_turn id=t1 runId=r1 params.chatId=c1 \"params.prompt=\$(printf '!slow=200ms\\none two three four')\"
  ndjson make type=run_turn id=t2 runId=r2 params.chatId=c2 'params.prompt=!panic'
  ndjson make type=interrupt id=i1 chatId=c1
} | agent-host | ndjson where type==run_done | ndjson get -r runId stopReason events"

say "agent-host --backend exec: any command is a backend (here, ndjson itself)"
show "{ ndjson make type=hello id=h1 protocol:=1
  ndjson make type=run_turn id=t1 runId=r1 params.chatId=c1 'params.prompt={\"answer\":42}'
} | agent-host --backend exec -- ndjson get answer | ndjson where event.type==completed | ndjson get -r event.text"

say "svc: a real server in the background, ready as soon as it listens"
export SVC_HOME="$work/svc"
if command -v python3 >/dev/null; then
  show "svc start --name web --cwd $work -- python3 -m http.server 0 --bind 127.0.0.1"
  url=$(ndjson get -r url < "$SVC_HOME/web/state.json")
  show "svc ls"
  if command -v curl >/dev/null; then show "curl -s -o /dev/null -w '%{http_code}\n' $url"; fi
  show "svc tail web"
  show "svc stop web"
else
  echo "(python3 is not installed: starting a shell server instead)"
  show "svc start --name web -- 'echo listening on port 1; exec sleep 600'"
  show "svc stop web"
fi

say "svc: a crash is reported in milliseconds, with the log's tail"
show "svc start --name crashy -- 'echo loading config; echo \"fatal: config.yaml not found\" >&2; exit 2' || echo \"(exit \$?)\""

say "svc: stop gets everything, even what double-forked out of the process group"
show "svc start --name forker --settle 200ms -- '(setsid sleep 600 &); exec sleep 601'"
show "svc stop --json forker | ndjson fmt"
show "svc ls --json | ndjson get -r name status"

say "runagent: what each permission level grants, and the exact argv of a run (nothing started)"
show "runagent grants | head -4"
show "runagent --agent codex -l 2 --tools-url http://127.0.0.1:7000/run/r1 --print-args"
if command -v claude >/dev/null; then
  show "echo 'In one sentence: what is a process group?' | runagent -l 1 || echo \"(exit \$?)\""
  say "agent-host --backend claude: a real Claude Code turn through the sidecar"
  show "{ ndjson make type=hello id=h1 protocol:=1 config.claude.level:=1
  ndjson make type=run_turn id=t1 runId=r1 params.chatId=c1 'params.prompt=Say hello in five words.'
} | agent-host --backend claude | ndjson where type==event event.type==completed | ndjson get -r event.text"
else
  echo "(claude is not installed: npm install -g @anthropic-ai/claude-code@2.1.332, then make demo runs a real level 1 turn; make test-peers runs one offline)"
fi
