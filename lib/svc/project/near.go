package project

import (
	"reflect"
	"slices"
	"strings"
)

// knownKeys are the keys svc.toml has at a depth of its key paths: 1 for
// the top ("services"), 3 for a service's own keys (services.NAME.KEY).
func knownKeys(depth int) []string {
	var t reflect.Type
	switch depth {
	case 1:
		t = reflect.TypeFor[tomlFile]()
	case 3:
		t = reflect.TypeFor[tomlService]()
	default:
		return nil
	}
	keys := make([]string, t.NumField())
	for i := range t.NumField() {
		keys[i] = t.Field(i).Tag.Get("toml")
	}
	return keys
}

// serviceAliases are a service's keys by the names other tools give
// them (docker compose, Procfile managers, systemd), which no edit
// distance finds: cmd is one letter from cwd, but meant command.
var serviceAliases = map[string]string{
	"cmd": "command", "exec": "command", "run": "command", "script": "command",
	"dir": "cwd", "workdir": "cwd", "working_dir": "cwd", "directory": "cwd",
	"environment": "env", "env_files": "env_file", "ports": "port",
	"needs": "depends_on", "after": "depends_on", "requires": "depends_on",
}

// suggestion is the key an unknown key path most likely meant at its
// first part svc.toml does not have, or "".
func suggestion(path []string) string {
	for i, k := range path {
		if known := knownKeys(i + 1); known != nil && !slices.Contains(known, k) {
			if a, ok := serviceAliases[k]; ok && i == 2 {
				return a
			}
			return closest(k, known)
		}
	}
	return ""
}

// closest is the known key a mistyped one most likely meant: within two
// edits of it, or one of them a prefix of the other; "" when none is, or
// when two are equally near.
func closest(typed string, known []string) string {
	best, bestDist, tie := "", 3, false
	for _, k := range known {
		d := editDistance(typed, k)
		if d > 2 && len(typed) >= 3 && (strings.HasPrefix(k, typed) || strings.HasPrefix(typed, k)) {
			d = 2
		}
		switch {
		case d < bestDist:
			best, bestDist, tie = k, d, false
		case d == bestDist:
			tie = true
		}
	}
	if tie {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, with a swap of two
// neighbouring letters counted as one edit (ready_ulr is one from
// ready_url).
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
