# svc.toml.5's examples: what the svc.toml and the Procfile run — a
# migration, an API, a dev server, a worker — in a project each.
. "$EXAMPLES_DATA/npm-standin.sh"
mkdir toml procfile
for d in toml procfile; do
	cat > $d/migrate <<'SH'
#!/bin/sh
# ./migrate [--redis HOST:PORT]: a migration; with --redis, of that store.
if [ "$1" = --redis ]; then
	exec redis-cli -h "${2%:*}" -p "${2##*:}" set schema 1
fi
echo migrated
SH
	chmod +x $d/migrate
	cp "$EXAMPLES_DATA/devserver.js" $d/server.js
	cat > $d/package.json <<'JSON'
{"name": "web", "private": true, "scripts": {"dev": "node server.js"}}
JSON
done
cat > toml/api.py <<'PY'
import http.server, os
os.environ["DB_PORT"] and os.environ["API_KEY"]
http.server.HTTPServer(("127.0.0.1", int(os.environ["PORT"])), http.server.SimpleHTTPRequestHandler).serve_forever()
PY
echo API_KEY=dev > toml/.env
cat > procfile/worker.py <<'PY'
import signal
signal.pause()
PY
# The watch example: an API over src/ and a worker.
mkdir -p watch/src
touch watch/src/app.py
cp procfile/worker.py watch/worker.py
