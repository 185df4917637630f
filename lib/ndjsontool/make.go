package ndjsontool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/agentry/agentry/lib/ndjson"
)

// node is one value of an object under construction: an object (ordered),
// an array, or a finished JSON text.
type node struct {
	keys  []string
	kids  map[string]*node
	items []*node
	raw   []byte
	kind  byte // 'o' object, 'a' array, 'v' value
}

// Make builds one JSON object from KEY=VALUE (a string) and KEY:=JSON
// arguments and writes it as one line. Dots in a key nest objects
// (params.chatId=c1); a backslash escapes a dot or another backslash; a
// key ending in [] appends to an array (tags[]=a tags[]=b). A key given
// twice, or used both as a value and as an object, is an error.
func Make(out io.Writer, args []string) error {
	root := &node{kind: 'o', kids: map[string]*node{}}
	for _, a := range args {
		if err := root.set(a); err != nil {
			return &ArgError{Arg: a, msg: err.Error()}
		}
	}
	var b bytes.Buffer
	root.write(&b)
	b.WriteByte('\n')
	_, err := out.Write(b.Bytes())
	return err
}

func (root *node) set(arg string) error {
	key, val, isJSON, ok := splitArg(arg)
	if !ok {
		return fmt.Errorf("argument %q has no '=' or ':='", arg)
	}
	path, appendTo, err := splitKey(key)
	if err != nil {
		return fmt.Errorf("argument %q: %v", arg, err)
	}
	var raw []byte
	if isJSON {
		if p := ndjson.Check([]byte(val)); p != ndjson.Valid {
			return fmt.Errorf("argument %q: the value after := is not JSON (%s)", arg, p)
		}
		var c bytes.Buffer
		if err := json.Compact(&c, []byte(val)); err != nil {
			return fmt.Errorf("argument %q: %v", arg, err)
		}
		raw = c.Bytes()
	} else {
		raw = quote(val)
	}
	n := root
	for i, k := range path {
		last := i == len(path)-1
		child, exists := n.kids[k]
		switch {
		case last && appendTo:
			if !exists {
				child = &node{kind: 'a'}
				n.add(k, child)
			} else if child.kind != 'a' {
				return fmt.Errorf("argument %q: %q is already set, and not as an array", arg, strings.Join(path, "."))
			}
			child.items = append(child.items, &node{kind: 'v', raw: raw})
		case last:
			if exists {
				return fmt.Errorf("argument %q: %q is given twice", arg, strings.Join(path, "."))
			}
			n.add(k, &node{kind: 'v', raw: raw})
		default:
			if !exists {
				child = &node{kind: 'o', kids: map[string]*node{}}
				n.add(k, child)
			} else if child.kind != 'o' {
				return fmt.Errorf("argument %q: %q is already a value, not an object", arg, strings.Join(path[:i+1], "."))
			}
			n = child
		}
	}
	return nil
}

func (n *node) add(k string, child *node) {
	n.keys = append(n.keys, k)
	n.kids[k] = child
}

// splitArg splits at the first unescaped '=' (or ':=').
func splitArg(arg string) (key, val string, isJSON, ok bool) {
	for i := 0; i < len(arg); i++ {
		switch arg[i] {
		case '\\':
			i++
		case '=':
			if i > 0 && arg[i-1] == ':' && (i < 2 || arg[i-2] != '\\') {
				return arg[:i-1], arg[i+1:], true, true
			}
			return arg[:i], arg[i+1:], false, true
		}
	}
	return "", "", false, false
}

// splitKey splits a key at unescaped dots and notes a trailing [].
func splitKey(key string) (path []string, appendTo bool, err error) {
	if strings.HasSuffix(key, "[]") && !strings.HasSuffix(key, `\[]`) {
		key, appendTo = key[:len(key)-2], true
	}
	var cur strings.Builder
	for i := 0; i < len(key); i++ {
		switch c := key[i]; {
		case c == '\\' && i+1 < len(key):
			i++
			cur.WriteByte(key[i])
		case c == '.':
			path = append(path, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	path = append(path, cur.String())
	for _, p := range path {
		if p == "" {
			return nil, false, fmt.Errorf("empty key")
		}
	}
	return path, appendTo, nil
}

func quote(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'})
}

func (n *node) write(b *bytes.Buffer) {
	switch n.kind {
	case 'v':
		b.Write(n.raw)
	case 'a':
		b.WriteByte('[')
		for i, it := range n.items {
			if i > 0 {
				b.WriteByte(',')
			}
			it.write(b)
		}
		b.WriteByte(']')
	default:
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(quote(k))
			b.WriteByte(':')
			n.kids[k].write(b)
		}
		b.WriteByte('}')
	}
}
