package project

import (
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// keyLines maps each table and key of a TOML document ("services.api",
// "services.api.depends_on") to the line it is on, so that an error found
// after decoding still names its line. A document that does not parse
// gives what was read before the error; the decoder reports the error.
func keyLines(b []byte) map[string]int {
	lines := map[string]int{}
	var p unstable.Parser
	p.Reset(b)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = keyParts(e)
			lines[strings.Join(table, ".")] = keyLine(&p, e)
		case unstable.KeyValue:
			path := append(append([]string(nil), table...), keyParts(e)...)
			line := keyLine(&p, e)
			// A dotted key names its parent tables too, where they are
			// not named elsewhere (services.db.command = … names
			// services.db).
			for i := len(table) + 1; i <= len(path); i++ {
				k := strings.Join(path[:i], ".")
				if _, ok := lines[k]; !ok || i == len(path) {
					lines[k] = line
				}
			}
			elementLines(&p, e.Value(), strings.Join(path, "."), lines)
		}
	}
	return lines
}

// elementLines records the line of each element of an array value
// ("services.api.depends_on[1]") and of each key of an inline table
// ("services.web.depends_on.api").
func elementLines(p *unstable.Parser, v *unstable.Node, path string, lines map[string]int) {
	switch v.Kind {
	case unstable.Array:
		it := v.Children()
		for i := 0; it.Next(); i++ {
			if r := it.Node().Raw; r.Length > 0 {
				lines[path+"["+strconv.Itoa(i)+"]"] = p.Shape(r).Start.Line
			}
		}
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			kv := it.Node()
			if kv.Kind == unstable.KeyValue {
				lines[path+"."+strings.Join(keyParts(kv), ".")] = keyLine(p, kv)
			}
		}
	}
}

func keyParts(e *unstable.Node) []string {
	var parts []string
	it := e.Key()
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return parts
}

// keyLine is the line of a table's or key-value's first key.
func keyLine(p *unstable.Parser, e *unstable.Node) int {
	it := e.Key()
	if it.Next() {
		if r := it.Node().Raw; r.Length > 0 {
			return p.Shape(r).Start.Line
		}
	}
	return 0
}
