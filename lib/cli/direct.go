package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// An App marked Direct has one command that runs on every call of the
// program and whose run is itself a few milliseconds, where kong's model
// of it costs half a millisecond more each time: kong parses every tag
// and runs each help string through its interpolation regexp before it
// reads a word (runagent's run: 23 flags, ~1 ms of wall time in a fresh
// process). A line of that command made only of the plainest forms —
// "--name value", "--name=value", "-s value", a bool flag alone, words,
// "--" after the command's name — is read here, from the same struct
// tags, into the same values kong gives it (DirectDiffs and FuzzDirect
// hold the two to that). Anything else goes to kong, which gives the
// error or the help: a flag the command does not have (the global ones
// included), a value that does not decode, a repeated flag, a value
// (other than "-") or a word that starts with "-", a "~" path, a type,
// tag or hook method this does not know.

// runner is the Run method Run binds a context and an *Env into.
type runner interface {
	Run(context.Context, *Env) error
}

// directKind is how a flag's text becomes its value.
type directKind int

const (
	kindString directKind = iota
	kindBool
	kindInt
	kindFloat
	kindDuration
	kindPath
)

type directFlag struct {
	field  int
	kind   directKind
	envs   []string
	def    string
	hasDef bool
}

// directSpec is what the tags of one command struct say.
type directSpec struct {
	flags map[string]*directFlag // by "--name" and "-s"
	arg   int                    // the field of the optional []string words, or -1
	all   []*directFlag
}

// direct returns the command of args, parsed without kong, when app is
// Direct and args are a line it can read as kong would; ok is false
// otherwise.
func direct(app App, args []string) (cmd runner, ok bool) {
	if !app.Direct {
		return nil, false
	}
	_, field, name, ok := selectCommand(app.Grammar, args)
	if !ok {
		return nil, false
	}
	if name != "" {
		if !isCommandName(field, name) {
			return nil, false
		}
		args = args[1:]
	}
	target := reflect.New(field.Type).Elem()
	spec, ok := newDirectSpec(target.Type())
	if !ok {
		return nil, false
	}
	cmd, ok = target.Addr().Interface().(runner)
	if !ok || !spec.parse(target, args, name == "", field) {
		return nil, false
	}
	return cmd, true
}

// isCommandName reports whether word is kong's name for the command
// field f, or one of its aliases.
func isCommandName(f reflect.StructField, word string) bool {
	n := f.Tag.Get("name")
	if n == "" {
		n = kongName(f.Name)
	}
	if word == n {
		return true
	}
	a := f.Tag.Get("aliases")
	return a != "" && slices.Contains(strings.Split(a, ","), word)
}

// kongName is kong's default name for a field: its camel-case words in
// lower case joined by dashes ("ToolsURL" is tools-url). "" for a name
// that is not ASCII letters and digits, which kong may split otherwise.
func kongName(field string) string {
	class := func(c byte) int {
		switch {
		case 'a' <= c && c <= 'z':
			return 1
		case 'A' <= c && c <= 'Z':
			return 2
		case '0' <= c && c <= '9':
			return 3
		}
		return 0
	}
	var runs []string
	for i := 0; i < len(field); {
		c := class(field[i])
		if c == 0 {
			return ""
		}
		j := i + 1
		for j < len(field) && class(field[j]) == c {
			j++
		}
		runs = append(runs, field[i:j])
		i = j
	}
	// An upper-case run followed by a lower-case one gives it its last
	// letter: "URLs" is "UR", "Ls"; "PDFLoader" is "PDF", "Loader".
	for i := 0; i+1 < len(runs); i++ {
		if class(runs[i][0]) == 2 && class(runs[i+1][0]) == 1 {
			k := len(runs[i]) - 1
			runs[i+1] = runs[i][k:] + runs[i+1]
			runs[i] = runs[i][:k]
		}
	}
	runs = slices.DeleteFunc(runs, func(s string) bool { return s == "" })
	return strings.ToLower(strings.Join(runs, "-"))
}

// directTag reports whether this file knows what tag key k means; a field
// with any other (enum, required, sep, xor, negatable, hidden…) is left to
// kong.
func directTag(k string) bool {
	switch k {
	case "help", "placeholder", "name", "short", "env", "default", "type", "arg", "optional":
		return true
	}
	return false
}

// hasHook reports whether t has one of kong's hook methods, or decodes
// itself: such a command or value is kong's.
func hasHook(t reflect.Type) bool {
	for _, h := range [...]string{"BeforeReset", "BeforeResolve", "BeforeApply", "AfterApply", "AfterRun", "Validate", "Decode"} {
		if _, ok := t.MethodByName(h); ok {
			return true
		}
		if _, ok := reflect.PointerTo(t).MethodByName(h); ok {
			return true
		}
	}
	return false
}

// newDirectSpec reads the tags of command struct t; false when any of
// them is one this file does not read as kong does.
func newDirectSpec(t reflect.Type) (*directSpec, bool) {
	if t.Kind() != reflect.Struct || hasHook(t) {
		return nil, false
	}
	s := &directSpec{flags: map[string]*directFlag{}, arg: -1}
	buf := make(tagItems, 0, 8)
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Anonymous {
			return nil, false
		}
		tag, ok := readTag(f.Tag, buf)
		if !ok {
			return nil, false
		}
		buf = tag // its room, for the next field's
		if _, ok := tag.Lookup("arg"); ok {
			_, optional := tag.Lookup("optional")
			if s.arg >= 0 || !optional || f.Type != reflect.TypeFor[[]string]() || tag.Get("type") != "" ||
				tag.Get("env") != "" || tag.Get("default") != "" || i != t.NumField()-1 {
				return nil, false
			}
			s.arg = i
			continue
		}
		fl, ok := newDirectFlag(i, f, tag)
		if !ok {
			return nil, false
		}
		name := tag.Get("name")
		if name == "" {
			name = kongName(f.Name)
		}
		if name == "" || !s.add("--"+name, fl) {
			return nil, false
		}
		if short := tag.Get("short"); short != "" {
			if len(short) != 1 || !s.add("-"+short, fl) {
				return nil, false
			}
		}
		s.all = append(s.all, fl)
	}
	return s, true
}

// add names fl; false when the name is taken, or is one of kong's own.
func (s *directSpec) add(name string, fl *directFlag) bool {
	if _, taken := s.flags[name]; taken || name == "--help" || name == "-h" {
		return false
	}
	s.flags[name] = fl
	return true
}

// tagItems is a struct tag read once, its keys and their values still
// quoted, in order: reflect.StructTag reads the whole tag again for each
// key looked up, and the help strings make a command's tags long.
type tagItems []tagItem

type tagItem struct{ key, quoted string }

// readTag reads tag as kong's key:"value" pairs, into items' room; false
// when a key is one this file does not know, or the tag is not of that
// form.
func readTag(tag reflect.StructTag, items tagItems) (tagItems, bool) {
	items = items[:0]
	for rest := string(tag); ; {
		rest = strings.TrimLeft(rest, " ")
		if rest == "" {
			return items, true
		}
		k, v, ok := strings.Cut(rest, ":")
		if !ok || !directTag(k) || !strings.HasPrefix(v, `"`) {
			return nil, false
		}
		q, err := strconv.QuotedPrefix(v)
		if err != nil {
			return nil, false
		}
		items = append(items, tagItem{k, q})
		rest = v[len(q):]
	}
}

// Lookup is reflect.StructTag.Lookup: the first value of key.
func (t tagItems) Lookup(key string) (string, bool) {
	for _, it := range t {
		if it.key == key {
			v, err := strconv.Unquote(it.quoted)
			return v, err == nil
		}
	}
	return "", false
}

// Get is reflect.StructTag.Get.
func (t tagItems) Get(key string) string {
	v, _ := t.Lookup(key)
	return v
}

func newDirectFlag(i int, f reflect.StructField, tag tagItems) (*directFlag, bool) {
	fl := &directFlag{field: i}
	fl.def, fl.hasDef = tag.Lookup("default")
	if e := tag.Get("env"); e != "" {
		fl.envs = strings.Split(e, ",")
	}
	// The types themselves, not their kinds: a type of the command's own
	// may have a hook or a mapper.
	typ := tag.Get("type")
	switch {
	case typ == "path" && f.Type == reflect.TypeFor[string]():
		fl.kind = kindPath
	case typ != "":
		return nil, false
	case f.Type == reflect.TypeFor[time.Duration]():
		fl.kind = kindDuration
	case f.Type == reflect.TypeFor[string]():
		fl.kind = kindString
	case f.Type == reflect.TypeFor[bool]():
		fl.kind = kindBool
		if len(fl.envs) > 0 || fl.hasDef {
			return nil, false
		}
	case f.Type == reflect.TypeFor[int]():
		fl.kind = kindInt
	case f.Type == reflect.TypeFor[float64]():
		fl.kind = kindFloat
	default:
		return nil, false
	}
	return fl, true
}

// parse sets target from the environment, the defaults and args as kong
// would; false for a line it leaves to kong. byDefault says the command
// was not named, so a word naming it is kong's to read.
func (s *directSpec) parse(target reflect.Value, args []string, byDefault bool, cmd reflect.StructField) bool {
	for _, fl := range s.all {
		if !fl.reset(target.Field(fl.field)) {
			return false
		}
	}
	seen := map[*directFlag]bool{}
	// kong takes the words as one run: a word after a flag or a "--" that
	// followed words is an error, and so is an empty one (kong drops it).
	var words []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			// After a "--" kong still reads a command's name as the
			// command, where the default one was to run.
			if s.arg < 0 || len(words) > 0 || byDefault || slices.Contains(args[i+1:], "") {
				return false
			}
			words = append(words, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "-"):
			name, value, hasValue := a, "", false
			if strings.HasPrefix(a, "--") {
				name, value, hasValue = strings.Cut(a, "=")
			}
			fl := s.flags[name]
			if fl == nil || seen[fl] {
				return false
			}
			seen[fl] = true
			if fl.kind == kindBool {
				if hasValue {
					return false
				}
				target.Field(fl.field).SetBool(true)
				continue
			}
			if !hasValue {
				if i+1 == len(args) {
					return false
				}
				i++
				value = args[i]
			}
			if strings.HasPrefix(value, "-") && value != "-" || !fl.set(target.Field(fl.field), value) {
				return false
			}
		default:
			if s.arg < 0 || a == "" || len(words) > 0 || byDefault && isCommandName(cmd, a) {
				return false
			}
			words = append(words, a)
			for i+1 < len(args) && args[i+1] != "" && !strings.HasPrefix(args[i+1], "-") {
				i++
				if byDefault && isCommandName(cmd, args[i]) {
					return false
				}
				words = append(words, args[i])
			}
		}
	}
	if s.arg >= 0 && len(words) > 0 {
		target.Field(s.arg).Set(reflect.ValueOf(words))
	}
	return true
}

// reset is kong's Value.Reset: the first environment variable set (even
// to ""), else the default, else the zero value.
func (fl *directFlag) reset(v reflect.Value) bool {
	for _, e := range fl.envs {
		if val, ok := os.LookupEnv(e); ok {
			return fl.set(v, val)
		}
	}
	if fl.hasDef {
		return fl.set(v, fl.def)
	}
	return true
}

// set decodes text into v as kong's mapper for its kind does; false
// where kong would fail, or might read it otherwise.
func (fl *directFlag) set(v reflect.Value, text string) bool {
	switch fl.kind {
	case kindString:
		v.SetString(text)
	case kindPath:
		switch {
		case text == "" && fl.hasDef:
			v.SetString("")
		case text == "" || strings.HasPrefix(text, "~"):
			return false
		case text == "-" || filepath.IsAbs(text):
			v.SetString(text)
		default:
			abs, err := filepath.Abs(text)
			if err != nil {
				return false
			}
			v.SetString(abs)
		}
	case kindInt:
		n, err := strconv.ParseInt(text, 0, 64)
		if err != nil {
			return false
		}
		v.SetInt(n)
	case kindFloat:
		n, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return false
		}
		v.SetFloat(n)
	case kindDuration:
		d, err := time.ParseDuration(text)
		if err != nil {
			return false
		}
		v.SetInt(int64(d))
	default:
		return false
	}
	return true
}

// compareDirect parses args as Run would without kong and, when it reads
// them so, with the whole grammar, and tells how the two differ: a line
// kong refuses, another command, other values.
func compareDirect(app App, env *Env, args []string) (read bool, diff string) {
	cmd, ok := direct(app, args)
	if !ok {
		return false, ""
	}
	full := app
	full.Grammar = reflect.New(reflect.TypeOf(app.Grammar).Elem()).Interface()
	f, err := newParser(full, env)
	if err != nil {
		return true, "the whole grammar does not build: " + err.Error()
	}
	fc, err := f.Parse(args)
	if err != nil {
		return true, "read without kong, but kong refuses it: " + err.Error()
	}
	_, field, _, _ := selectCommand(app.Grammar, args)
	if !isCommandName(field, fc.Selected().Name) {
		return true, "commands differ: kong runs " + fc.Command()
	}
	if got, want := reflect.ValueOf(cmd).Elem().Interface(), selected(fc); !reflect.DeepEqual(got, want) {
		return true, fmt.Sprintf("values differ: without kong %+v, kong %+v", got, want)
	}
	return true, ""
}

// DirectDiffs is for the grammar test of a Direct binary: every way the
// values Run reads from samples without kong differ from kong's, and
// every sample it reads without kong, or leaves to kong, against read.
func DirectDiffs(app App, env *Env, samples [][]string, read bool) []string {
	var diffs []string
	for _, args := range samples {
		got, diff := compareDirect(app, env, args)
		switch {
		case diff != "":
			diffs = append(diffs, fmt.Sprintf("%q: %s", args, diff))
		case got && !read:
			diffs = append(diffs, fmt.Sprintf("%q: read without kong, want it left to kong", args))
		case !got && read:
			diffs = append(diffs, fmt.Sprintf("%q: left to kong, want it read without", args))
		}
	}
	return diffs
}
