package cmdline

import (
	"slices"
	"strings"
	"testing"
)

// name is Name as svc makes a service's name of it: its letters, digits,
// '.', '_' and '-', "service" when none are left.
func name(argv []string, cwd string) string {
	n := strings.TrimLeft(strings.Map(func(r rune) rune {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return r
		}
		return -1
	}, Name(argv, cwd)), ".-")
	if n == "" {
		return "service"
	}
	return n
}

// The names svc(1)'s table shows, and the cases around them: each line
// is a shell line (the single-string form); where the argv form can say
// the same, it is checked to give the same name.
func TestName(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		// package managers: the script
		{"npm run dev", "dev"},
		{"npm run dev -- --host 127.0.0.1", "dev"},
		{"npm run-script build:watch", "build-watch"},
		{"npm --prefix web run dev", "dev"},
		{"npm -w web run dev", "dev"},
		{"npm run --silent dev", "dev"},
		{"npm start", "start"},
		{"npm test", "test"},
		{"npm install", "npm"},
		{"npm run", "npm"},
		{"pnpm run dev", "dev"},
		{"pnpm dev", "dev"},
		{"pnpm --filter web dev", "dev"},
		{"pnpm install", "pnpm"},
		{"yarn dev", "dev"},
		{"yarn run serve", "serve"},
		{"yarn workspace web dev", "web"},
		{"yarn", "yarn"},
		{"bun run dev", "dev"},
		{"bun run server.ts", "server"},
		{"bun server.ts", "server"},
		{"bun --port 3000 server.ts", "bun"},
		{"bun --hot server.ts", "server"},
		{"deno task dev", "dev"},
		{"deno run -A main.ts", "main"},
		// the tool of npx and its kin
		{"npx vite", "vite"},
		{"npx vite --port 5199 --strictPort", "vite"},
		{"npx -y create-vite@latest app", "create-vite"},
		{"npx --package=@angular/cli ng serve", "ng"},
		{"npx -p @angular/cli ng serve", "ng"},
		{"npx @angular/cli@17 serve", "cli"},
		{"bunx vite", "vite"},
		{"pnpm dlx vite", "vite"},
		{"pnpm exec vite", "vite"},
		{"yarn dlx vite", "vite"},
		{"npm exec -- vite", "vite"},
		{"./node_modules/.bin/vite --port 5173", "vite"},
		// interpreters: the module or the script
		{"python -m http.server 8000", "http.server"},
		{"python3 -m uvicorn app:app --port 8000", "uvicorn"},
		{"python3 -u -m flask run", "flask"},
		{"python3 -mhttp.server", "http.server"},
		{"python3.12 app.py", "app"},
		{"python3 -W ignore manage.py runserver", "manage"},
		{"python3 -c 'import time; time.sleep(9)'", "python3"},
		{"node server.js", "server"},
		{"/usr/bin/node --inspect -r dotenv/config dist/index.js", "index"},
		{"node -e 'setInterval(()=>{},1e3)'", "node"},
		{"node .", "node"},
		{"nodemon app.js", "app"},
		{"ruby app.rb", "app"},
		{"php -S localhost:8000 -t public", "php"},
		{"go run ./cmd/api", "api"},
		{"go run -race .", "shop"},
		{"go run .", "shop"},
		{"go run ./ --port 8080", "shop"},
		{"cd web && go run .", "shop"},
		{"go run main.go", "main"},
		// sh -c, env, wrappers, chains
		{"sh -c 'npm run dev'", "dev"},
		{`bash -lc "cd web && exec npx vite"`, "vite"},
		{"sh start.sh", "start"},
		{"env FOO=1 BAR=2 redis-server --port 7000", "redis-server"},
		{"env -i PATH=/bin sleep 600", "sleep"},
		{"PORT=3000 npm run dev", "dev"},
		{"cd web && npm run dev", "dev"},
		{"npm run dev 2>&1 | tee dev.log", "dev"},
		{"exec nohup sleep 600", "sleep"},
		{"bundle exec rails server", "rails"},
		{"uv run uvicorn main:app", "uvicorn"},
		// the shell's own syntax is not a command, nor is its plumbing
		{"while true; do date; sleep 1; done", "date"},
		{"while :; do tail -f x.log; done", "tail"},
		{"if true; then exec sleep 100; fi", "sleep"},
		{"sleep 100 &\nwait", "sleep"},
		{"sleep 100 & wait", "sleep"},
		{"{ sleep 100; }", "sleep"},
		{"( cd web && npm run dev )", "dev"},
		{"npm run dev; echo done", "dev"},
		{"trap 'kill 0' EXIT; npm run api & npm run dev & wait", "dev"},
		{"set -e\n# the app\ncd web\nexec npm run dev\n", "dev"},
		{"for i in 1 2 3; do node worker.js; done", "worker"},
		{"until false; do redis-server; done", "redis-server"},
		{"case $1 in a) exec vite;; *) exit 1;; esac", "vite"},
		{"f() { sleep 1; }; npx vite", "vite"},
		{"! npm run dev", "dev"},
		{"exec >log 2>&1; npm run dev", "dev"},
		{"echo hello", "echo"},
		{"true", "true"},
		{"echo 'done'", "echo"},
		{"'done'", "done"},
		// wrappers and their options
		{"setpriv --reuid=nobody --regid=nogroup --clear-groups postgres -D d", "postgres"},
		{"nice -n 5 npm run dev", "dev"},
		{"nice npm run dev", "dev"},
		{"timeout 100 sleep 100", "sleep"},
		{"timeout -s INT 600 node server.js", "server"},
		{"setpriv --reuid=nobody postgres -D data", "postgres"},
		{"runuser -u redis -- redis-server", "redis-server"},
		{"sleep 600 & wait", "sleep"},
		{"timeout -s INT -k 5 10 node server.js", "server"},
		{"setsid npm run dev", "dev"},
		{"ionice -c3 npm run dev", "dev"},
		{"ionice -c 3 -n 7 npm run dev", "dev"},
		{"chrt -f 10 redis-server", "redis-server"},
		{"taskset -c 0 redis-server", "redis-server"},
		{"taskset 0x3 redis-server", "redis-server"},
		{"stdbuf -oL npm run dev", "dev"},
		{"stdbuf -o L -e L uvicorn app:app", "uvicorn"},
		{"runuser -u postgres -- postgres -D d", "postgres"},
		{"sudo -u www-data -E npm start", "start"},
		{"sudo -i", "sudo"},
		{"su -c 'redis-server --port 7000' redis", "redis-server"},
		{"su - postgres -c 'cd /srv && exec postgres -D d'", "postgres"},
		{"su postgres", "su"},
		{"env -u HOME -C /tmp nice -n 5 timeout 60 npm run dev", "dev"},
		{"bash -lc 'npm run dev'", "dev"},
		{"bash -e -o pipefail -c 'npm run dev | tee log'", "dev"},
		// the program
		{"sleep 600", "sleep"},
		{"busybox httpd -f -p 8080", "httpd"},
		{"redis-server --port 0", "redis-server"},
		{"postgres -D /tmp/pg -p 5433", "postgres"},
		{"uvicorn app:app --workers 2", "uvicorn"},
		{"gunicorn -w 3 app:app", "gunicorn"},
		{"vite --port 5199 --strictPort", "vite"},
		{"/usr/sbin/nginx -g 'daemon off;'", "nginx"},
		{"./weird name!", "weird"},
		{"'my server' --port 1", "my-server"},
		{"", "service"},
		{"--port 5", "service"},
	} {
		if got := name([]string{c.line}, "/src/shop"); got != c.want {
			t.Errorf("name(%q) = %q, want %q", c.line, got, c.want)
		}
		if got := name([]string{"sh", "-c", c.line}, "/src/shop"); got != c.want && c.line != "" && c.line != "--port 5" {
			t.Errorf("name(sh -c %q) = %q, want %q", c.line, got, c.want)
		}
		cmds := shellCommands(c.line)
		if len(cmds) == 1 && len(cmds[0].words) > 1 {
			if got := name(cmds[0].words, "/src/shop"); got != c.want {
				t.Errorf("name(%q) = %q, want %q (argv form)", cmds[0].words, got, c.want)
			}
		}
	}
	// go run . without a known directory: go.
	if got := name([]string{"go", "run", "."}, ""); got != "go" {
		t.Errorf("go run . in no directory: %q", got)
	}
}

func TestShellCommands(t *testing.T) {
	for line, want := range map[string]string{
		`a b`:                              `[[a b]]`,
		`a 'b c' "d \"e\" $f" g\ h`:        `[[a b c d "e" $f g h]]`,
		`a && b || c; d | e & f`:           `[[a] [b] [c] [d] [e] [f]]`,
		`a 2>&1 &>x`:                       `[[a 2>&1 &>x]]`,
		`a ''`:                             `[[a ]]`,
		`'unterminated`:                    `[[unterminated]]`,
		`a $'b\nc\'d' $(e f) ` + "`g h`":   "[[a b\nc'd $(e f) `g h`]]",
		`if a; then b; elif c; else d; fi`: `[[a] [b] [c] [d]]`,
		`while a; do b; done; until c; do d; done`: `[[a] [b] [c] [d]]`,
		`for x in a b; do c $x; done`:              `[[c $x]]`,
		`select x in a b; do c; done`:              `[[c]]`,
		`case $x in a|b) c;; (d) e;; esac; f`:      `[[c] [e] [f]]`,
		`{ a; } && ( b ) || ! c`:                   `[[a] [b] [c]]`,
		`function f { a; }; g() { b; }; f`:         `[[a] [b] [f]]`,
		"a # comment\n'done' b":                    `[[a] [done b]]`,
	} {
		var words [][]string
		for _, c := range shellCommands(line) {
			words = append(words, c.words)
		}
		if got := fmtWords(words); got != want {
			t.Errorf("shellCommands(%q) = %s, want %s", line, got, want)
		}
	}
}

func fmtWords(cmds [][]string) string {
	s := "["
	for i, c := range cmds {
		if i > 0 {
			s += " "
		}
		s += "["
		for j, w := range c {
			if j > 0 {
				s += " "
			}
			s += w
		}
		s += "]"
	}
	return s + "]"
}

func TestShellLine(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"printf", ""}, "printf ''"},
		{[]string{"printf", "%s\n", "a b"}, `printf $'%s\n' 'a b'`},
		{[]string{"echo", "it's"}, `echo 'it'\''s'`},
		{[]string{"sh", "-c", "npm run dev"}, "sh -c 'npm run dev'"},
		{[]string{"npm run dev -- --host 127.0.0.1"}, "npm run dev -- --host 127.0.0.1"},
		{[]string{"node", "--port=5", "a/b.js", "$HOME", "*"}, "node --port=5 a/b.js '$HOME' '*'"},
		{[]string{"sh", "-c", "sleep 100 &\nwait"}, `sh -c $'sleep 100 &\nwait'`},
		{[]string{"printf", "it's\t\\\x1b"}, `printf $'it\'s\t\\\x1b'`},
	} {
		if got := ShellLine(c.argv); got != c.want {
			t.Errorf("ShellLine(%q) = %q, want %q", c.argv, got, c.want)
		}
		// What ShellLine quotes, shellCommands reads back.
		if len(c.argv) > 1 {
			if cmds := shellCommands(ShellLine(c.argv)); len(cmds) != 1 || !slices.Equal(cmds[0].words, c.argv) {
				t.Errorf("shellCommands(ShellLine(%q)) = %v", c.argv, cmds)
			}
		}
	}
	// A table shows a shell line of one word on one line.
	if got, want := DisplayLine([]string{"sleep 100 &\nwait"}), `$'sleep 100 &\nwait'`; got != want {
		t.Errorf("DisplayLine = %q, want %q", got, want)
	}
	if got := DisplayLine([]string{"npm run dev"}); got != "npm run dev" {
		t.Errorf("DisplayLine of a plain line = %q", got)
	}
}

// lastCommand reads quotes and pipelines as the shell does: the command
// of a pipeline is its first, and an operator inside quotes is a word.
func TestLastCommand(t *testing.T) {
	for line, want := range map[string]string{
		"tail -f app.log | grep ERROR":     "tail -f app.log",
		"cd web && npm run dev | tee log":  "npm run dev",
		`echo "a && vite"`:                 "echo a && vite",
		"npx -y vite --port 5":             "vite --port 5",
		"env -i A=1 exec nohup sleep 9":    "sleep 9",
		"a; b & c":                         "c",
		"nice -n 5 sh -c 'exec tail -f x'": "tail -f x",
		"while :; do tail -f x; done":      "tail -f x",
	} {
		if got := strings.Join(lastCommand(line), " "); got != want {
			t.Errorf("lastCommand(%q) = %q, want %q", line, got, want)
		}
	}
	if !LooksLongRunning("tail -f app.log | grep ERROR") || LooksLongRunning(`echo "npm run dev"`) {
		t.Error("a pipeline's first command, or a quoted word, misread")
	}
}
