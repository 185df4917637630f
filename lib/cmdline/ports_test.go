package cmdline

import (
	"slices"
	"testing"
)

func TestPorts(t *testing.T) {
	cases := map[string][]int{
		"python3 -m http.server 8000":                     {8000},
		"python3 -m http.server --bind 127.0.0.1 8000":    {8000},
		"python3 -m http.server -d 8000 9000":             {9000},
		"python3 -m http.server":                          nil,
		"python manage.py runserver 0.0.0.0:8001":         {8001},
		"python manage.py runserver 8002":                 {8002},
		"redis-server --port 7000 --save ''":              {7000},
		"vite --port=5173":                                {5173},
		"rails s -p 3000":                                 {3000},
		"gunicorn -b 0.0.0.0:8080 app:app":                {8080},
		"gunicorn --bind=127.0.0.1:8081 app:app":          {8081},
		"php -S localhost:8082":                           {8082},
		"PORT=3000 npm run dev":                           {3000},
		"env PORT=3001 node server.js":                    {3001},
		"sh -c 'PORT=3002 exec node server.js'":           {3002},
		"bash -lc 'cd web && npm run dev -- --port 3003'": {3003},
		"go run . -addr :8083":                            {8083},
		"redis-cli -p 6379 monitor":                       nil,
		"psql -p 5432":                                    nil,
		"curl http://localhost:8000/":                     nil,
		"node server.js --db postgres://localhost:5432/x": nil,
		"uvicorn app:app":                                 nil,
		"mkdir -p build":                                  nil,
		"redis-server --port {port}":                      nil,
		"tail -f x.log":                                   nil,
		"npm run dev -- --port 99999":                     nil,
		"./migrate --redis 127.0.0.1:6379":                nil,
		"app --db=localhost:5432":                         nil,
		"caddy file-server --listen :8084":                {8084},
		"prometheus --web.listen-address=:9090":           {9090},
		"server :8085":                                    {8085},
	}
	for c, want := range cases {
		if got := Ports(c); !slices.Equal(got, want) {
			t.Errorf("Ports(%q) = %v, want %v", c, got, want)
		}
	}
}
