# runagent.1's examples: claude is a stand-in that replays a recorded run
# (lib/grant/testdata), with a structured answer where it is asked for one
# (--json-schema); and the files the examples read.
rec="$EXAMPLES_DATA/../../../lib/grant/testdata/claude/level1-mcp-echo.stdout"
sed '$s/^{/{"structured_output":{"verdict":"approve"},/' "$rec" > "$HOME/structured.stdout"
cat > "$HOME/.local/bin/claude" <<SH
#!/bin/sh
cat >/dev/null
for a; do [ "\$a" = --json-schema ] && exec cat "$HOME/structured.stdout"; done
exec cat "$rec"
SH
chmod +x "$HOME/.local/bin/claude"
printf -- '--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n' > diff.patch
echo 'Review the change in x.' > review-prompt.md
echo '{"type":"object","properties":{"verdict":{"type":"string"}},"required":["verdict"]}' > verdict.schema.json
