package cmdline

import "testing"

func TestLooksLongRunning(t *testing.T) {
	long := []string{
		"vite", "vite --port 5173", "npx vite", "next dev", "npx next start", "nuxt dev",
		"npm run dev", "npm start", "pnpm dev", "yarn serve", "bun run dev", "cd web && npm run dev",
		"PORT=3000 npm run dev", "webpack serve", "webpack --watch", "webpack-dev-server", "nodemon app.js",
		"tsc --watch", "tsc -w", "jest --watch", "vitest", "python -m http.server", "python3 -m http.server 8000",
		"uvicorn app:app --reload", "flask run", "rails s", "bundle exec rails server", "php -S localhost:8000",
		"hugo server", "docker compose up", "docker-compose up", "tail -f log.txt", "tail -F app.log",
		"redis-server", "watch -n1 date", "cargo watch -x run", "poetry run uvicorn main:app",
		"while true; do date; sleep 1; done", "until false; do npm run build; done",
		"sh -c 'while :; do date; sleep 5; done'", "nice -n 5 timeout 1h npm run dev", "sleep 1; tail -f x & wait",
	}
	short := []string{
		"npm run build", "npm test", "npm install", "npm run lint", "vite build", "next build", "tsc",
		"tsc -p .", "jest", "vitest run", "vitest --run", "python script.py", "python -m pytest",
		"docker compose up -d", "docker compose up --detach", "docker-compose up -d", "docker compose build",
		"tail -n 5 log.txt", "go test ./...", "go run .", "make", "cargo build", "ls -la", "echo vite",
		"rails db:migrate", "webpack", "nginx -t", "",
		"while read l; do echo $l; done", "for f in *.js; do node $f; done", "npm run build; echo done",
	}
	for _, c := range long {
		if !LooksLongRunning(c) {
			t.Errorf("%q should look long-running", c)
		}
	}
	for _, c := range short {
		if LooksLongRunning(c) {
			t.Errorf("%q should not look long-running", c)
		}
	}
}

func TestClassify(t *testing.T) {
	cases := map[string]Kind{
		"vite": Server, "npm run dev": Server, "postgres -D data": Server, "redis-server --port 7000": Server,
		"uvicorn app:app": Server, "gunicorn -w 3 app:app": Server, "nodemon app.js": Server, "python manage.py runserver": Server,
		"tail -f x.log": Watcher, "watch -n1 date": Watcher, "watchexec -e go make": Watcher, "entr make": Watcher,
		"inotifywait -m -r src": Watcher, "tsc --watch": Watcher, "esbuild app.ts --watch": Watcher, "esbuild --serve": Server,
		"celery -A proj worker": Watcher, "bundle exec sidekiq": Watcher, "rq worker": Watcher, "python manage.py rqworker": Watcher,
		"python -m celery -A proj worker": Watcher, "npm run watch": Watcher, "vitest": Watcher, "php artisan queue:work": Watcher,
		"inotifywait src": OneShot, "tail x.log": OneShot, "celery -A proj inspect ping": OneShot, "python manage.py migrate": OneShot,
		"sh -c watch -n 1 date": Watcher, "sh -c 'exec tail -f x.log'": Watcher, "bash -c \"cd web && npm run dev\"": Server,
		"sleep 600": OneShot, "sh -c 'sleep 1'": OneShot, "npm run build": OneShot,
		// the shell's syntax and plumbing, and wrappers, are read past
		"while :; do tail -f x; done": Watcher, "while true; do uvicorn app:app; done": Server,
		"while true; do date; sleep 1; done": OneShot, "while :; do node server.js; done": OneShot,
		"while read l; do echo $l; done":  OneShot,
		"for f in *.js; do node $f; done": OneShot, "if true; then exec redis-server; fi": Server,
		"npm run dev; echo done": Server, "{ npm run dev; }": Server, "( cd web && exec vite )": Server,
		"sleep 100 & wait": OneShot, "tail -f x & wait": Watcher, "nice -n 5 npm run dev": Server,
		"setpriv --reuid=nobody --regid=nogroup --clear-groups postgres -D d": Server,
		"timeout 100 tail -f x": Watcher, "taskset -c 0 redis-server": Server, "sudo -u www npm start": Server,
		"su -c 'exec redis-server' redis": Server, "stdbuf -oL tail -f x": Watcher, "setsid npm run dev": Server,
	}
	for c, want := range cases {
		if got := Classify(c); got != want {
			t.Errorf("Classify(%q) = %d, want %d", c, got, want)
		}
	}
}

func TestRunsAtOnce(t *testing.T) {
	cases := map[string]bool{
		"tail -f x.log": true, "npm run watch": true, "while true; do echo tick; sleep 0.5; done": true,
		`sh -c "while true; do echo tick; sleep 0.5; done"`: true, "while :; do curl -s localhost:3000/health; sleep 5; done": true,
		"while true; do date; sleep 1; done": true, "while :; do sleep 1; done": true, "while :; do node server.js; done": false,
		"while true; do uvicorn app:app; done": false, "npm run dev": false, "sleep 600": false,
		"python3 -m http.server": false, "for f in *.js; do node $f; done": false, "while read l; do echo $l; done": false,
	}
	for c, want := range cases {
		if got := RunsAtOnce(c); got != want {
			t.Errorf("RunsAtOnce(%q) = %v, want %v", c, got, want)
		}
	}
}
