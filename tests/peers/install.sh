#!/usr/bin/env bash
# Installs the real agent CLIs, pinned, into a cache folder outside the
# repository, for make test-peers. Fails loudly when it cannot.
set -euo pipefail
dir=${1:?usage: install.sh DIR}
claude="$dir/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
codex="$dir/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
want_claude="2.1.332"
want_codex="0.171.0"
command -v npm >/dev/null || { echo "test-peers: npm is not installed; the real CLIs come from the npm registry" >&2; exit 1; }
# The ACP side, in a prefix of its own so that it never disturbs the CLIs:
# the official ACP client SDK, which the agent-host --acp tests drive it
# with, the two reference adapters the bench measures beside it (and
# agent-host --backend acp runs), and Qwen Code, an agent that speaks ACP
# itself (qwen --acp), pointed at a fake chat-completions API; and acpx,
# the headless ACP client make bench sets runagent --agent acp beside.
acp="$dir/acp"
want_sdk="2.4.0"
want_claude_acp="0.23.1"
want_codex_acp="0.16.0"
want_qwen="0.24.4"
want_acpx="0.19.1"
acp_has() { grep -qs "\"version\": \"$2\"" "$acp/node_modules/$1/package.json"; }
if ! acp_has @agentclientprotocol/sdk "$want_sdk" || ! acp_has @zed-industries/claude-agent-acp "$want_claude_acp" ||
   ! acp_has @zed-industries/codex-acp "$want_codex_acp" || ! acp_has @qwen-code/qwen-code "$want_qwen" || ! acp_has acpx "$want_acpx"; then
  mkdir -p "$acp"
  echo "test-peers: installing @agentclientprotocol/sdk@$want_sdk, the ACP adapters, Qwen Code and acpx into $acp" >&2
  npm install --prefix "$acp" --no-audit --no-fund --loglevel=error "@agentclientprotocol/sdk@$want_sdk" \
    "@zed-industries/claude-agent-acp@$want_claude_acp" "@zed-industries/codex-acp@$want_codex_acp" \
    "@qwen-code/qwen-code@$want_qwen" "acpx@$want_acpx" >&2
  acp_has @agentclientprotocol/sdk "$want_sdk" || { echo "test-peers: npm did not install the ACP SDK" >&2; exit 1; }
fi
if [ -x "$claude" ] && [ -x "$codex" ] &&
   "$claude" --version 2>/dev/null | grep -q "^$want_claude " &&
   "$codex" --version 2>/dev/null | grep -q " $want_codex$"; then
  exit 0
fi
mkdir -p "$dir"
echo "test-peers: installing @anthropic-ai/claude-code@$want_claude and @openai/codex@$want_codex into $dir" >&2
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
  "@anthropic-ai/claude-code@$want_claude" "@openai/codex@$want_codex" >&2
for b in "$claude" "$codex"; do
  [ -x "$b" ] || { echo "test-peers: npm did not install $b" >&2; exit 1; }
done
"$claude" --version >&2
"$codex" --version >&2
