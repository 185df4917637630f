# npm's stand-in, in $HOME/.local/bin: npm run dev as npm runs it, for the
# package.json the examples' dev server has ("dev": "node server.js"),
# without npm's second of start-up, which under load can outlast svc
# start's settle time; and npm is not among what make test needs.
cat > "$HOME/.local/bin/npm" <<'SH'
#!/bin/sh
if [ "$1" = run ] && [ "$2" = dev ] && [ -f package.json ]; then
	exec node server.js
fi
echo "npm (the examples' stand-in): only npm run dev" >&2
exit 1
SH
chmod +x "$HOME/.local/bin/npm"
