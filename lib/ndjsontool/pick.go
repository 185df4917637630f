package ndjsontool

import (
	"context"
	"encoding/json"
	"strings"
)

// PickOptions are the options of pick.
type PickOptions struct {
	// Fields are PATH or KEY=PATH: the output key is KEY, or the path's
	// last key.
	Fields []string
	// Null writes null for a missing path instead of leaving the key out.
	Null bool
}

// pickField is one field of the objects pick builds.
type pickField struct {
	key  []byte // the key as JSON text, with its colon: "text":
	path string
	fp   fastPath
}

// parsePick reads the fields: KEY=PATH names the key, a plain PATH is
// named by its last key. Two fields with one key, an empty path, or a path
// with gjson syntax and no name are usage errors.
func parsePick(verb string, fields []string) ([]pickField, error) {
	if len(fields) == 0 {
		return nil, &OptionError{Option: "Fields", Reason: "must hold at least one path"}
	}
	var out []pickField
	seen := map[string]bool{}
	for _, f := range fields {
		key, path, named := cutKey(f)
		if path == "" {
			return nil, argError(f, ErrEmptyPath, "%s %q: the path is empty", verb, f)
		}
		fp := parseFastPath(path)
		if !named {
			if fp == nil {
				return nil, argError(f, ErrNeedsName, "%s %q: a path with gjson syntax needs a name", verb, f)
			}
			key = fp[len(fp)-1]
		}
		if seen[key] {
			return nil, argError(f, ErrSameName, "%s: two fields named %q", verb, key)
		}
		seen[key] = true
		k, _ := json.Marshal(key)
		out = append(out, pickField{key: append(k, ':'), path: path, fp: fp})
	}
	return out, nil
}

// cutKey splits KEY=PATH. The text before the first '=' is a key only
// when it holds none of gjson's path syntax, so that a query such as
// items.#(id=="x").name stays a path.
func cutKey(f string) (key, path string, named bool) {
	k, p, ok := strings.Cut(f, "=")
	if !ok || k == "" || strings.ContainsAny(k, `.#()|@*?\"!<>~`) {
		return "", f, false
	}
	return k, p, true
}

// Pick prints, for every valid line, an object of the fields given, in
// their order, each value copied byte for byte.
func Pick(ctx context.Context, st *Stream, o PickOptions) error {
	fields, err := parsePick("pick", o.Fields)
	if err != nil {
		return err
	}
	ps := newPaths(fieldPaths(fields))
	sk, err := st.eachLine(ctx, finding{paths: ps.fps}, func(out, line []byte, lv lineView) []byte {
		var buf [8]value
		vals := ps.vals(&buf)
		ps.getAll(line, lv, vals)
		return append(appendPicked(out, fields, vals, o.Null), '\n')
	})
	if err != nil {
		return err
	}
	return sk.report(st)
}

// fieldPaths lists the fields' paths, in order.
func fieldPaths(fields []pickField) []string {
	ps := make([]string, len(fields))
	for i, f := range fields {
		ps[i] = f.path
	}
	return ps
}

// appendPicked appends the object of fields, whose values are vals.
func appendPicked(out []byte, fields []pickField, vals []value, null bool) []byte {
	out = append(out, '{')
	first := true
	for i, f := range fields {
		v := vals[i]
		if !v.ok && !null {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, f.key...)
		if v.ok {
			out = append(out, v.raw...)
		} else {
			out = append(out, "null"...)
		}
	}
	return append(out, '}')
}
