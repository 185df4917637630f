# svc.1's examples: a node project whose npm run dev is a dev server, and
# the project "shop" of a store, a migration and an API.
. "$EXAMPLES_DATA/npm-standin.sh"
cp "$EXAMPLES_DATA/devserver.js" server.js
cat > package.json <<'JSON'
{"name": "dev-example", "private": true, "scripts": {"dev": "node server.js"}}
JSON
mkdir shop
cat > shop/svc.toml <<'TOML'
[services.db]
command = ["redis-server", "--port", "{port}", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
port = "auto"

[services.migrate]
command = "redis-cli -p {port:db} set schema 1"
oneshot = true
depends_on = ["db"]

[services.api]
command = ["node", "-e", "require('http').createServer((q, r) => r.end('ok')).listen(process.env.PORT, '127.0.0.1')"]
port = "auto"
depends_on = ["db", "migrate"]
TOML
