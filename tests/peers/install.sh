#!/usr/bin/env bash
# Installs the real agent CLIs, pinned, into a cache folder outside the
# repository, for make test-peers. Fails loudly when it cannot.
set -euo pipefail
dir=${1:?usage: install.sh DIR}
claude="$dir/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
codex="$dir/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
want_claude="2.1.332"
want_codex="0.171.0"
if [ -x "$claude" ] && [ -x "$codex" ] &&
   "$claude" --version 2>/dev/null | grep -q "^$want_claude " &&
   "$codex" --version 2>/dev/null | grep -q " $want_codex$"; then
  exit 0
fi
command -v npm >/dev/null || { echo "test-peers: npm is not installed; the real CLIs come from the npm registry" >&2; exit 1; }
mkdir -p "$dir"
echo "test-peers: installing @anthropic-ai/claude-code@$want_claude and @openai/codex@$want_codex into $dir" >&2
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
  "@anthropic-ai/claude-code@$want_claude" "@openai/codex@$want_codex" >&2
for b in "$claude" "$codex"; do
  [ -x "$b" ] || { echo "test-peers: npm did not install $b" >&2; exit 1; }
done
"$claude" --version >&2
"$codex" --version >&2
