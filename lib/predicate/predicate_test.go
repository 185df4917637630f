package predicate

import (
	"testing"
)

func TestMatch(t *testing.T) {
	line := []byte(`{"type":"event","seq":3,"ver":1.10,"big":12345678901234567890,"ok":false,"nil":null,"zero":0,"empty":"",` +
		`"text":"say \"hi\"\u0021","esc":"\u0041BC","ev":{"type":"text_delta","n":[1,2]},"friends":[{"age":44,"name":"Ann"},{"age":30,"name":"Bo"}]}`)
	cases := []struct {
		expr string
		want bool
	}{
		{"type==event", true}, {`type=="event"`, true}, {"type==run_done", false}, {"type!=run_done", true},
		{"seq==3", true}, {"seq==3.0", true}, {`seq=="3"`, false}, {"seq>2", true}, {"seq>=3", true}, {"seq<3", false}, {"seq<=3", true},
		{"ver==1.1", true}, {"big==12345678901234567890", true}, {"big==12345678901234567891", false}, {"big>12345678901234567889", true},
		{"ok==false", true}, {"ok", false}, {"!ok", true}, {"nil==null", true}, {"missing==null", true}, {"missing!=x", true},
		{"zero", true}, {"empty", true}, {"missing", false}, {"!missing", true}, {"nil", false},
		{`text==say "hi"!`, true}, {"esc==ABC", true}, {"esc<ABD", true}, {"esc>AB", true}, {"type<1", false},
		{"ev.type==text_delta", true}, {"ev.n==[1,2]", true}, {"ev.n==[1, 2]", true}, {"ev.n==[2,1]", false}, {`ev=={"type":"text_delta","n":[1,2]}`, true},
		{"text~^say", true}, {`text~"hi"`, true}, {"seq~^3$", true}, {"missing~.*", false},
		{"friends.#(age>40).name==Ann", true}, {"friends.#(age>50).name==Ann", false}, {"friends.#==2", true},
		{"type == event", true},
	}
	for _, c := range cases {
		p, err := Parse(c.expr)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.expr, err)
			continue
		}
		if got := p.Match(line); got != c.want {
			t.Errorf("%q on the line = %v, want %v", c.expr, got, c.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, e := range []string{"", "  ", "==x", "!", "a=b", "x~(", "<3"} {
		if _, err := Parse(e); err == nil {
			t.Errorf("Parse(%q) succeeded", e)
		}
	}
}

func TestSet(t *testing.T) {
	line := []byte(`{"a":1,"b":2}`)
	all, _ := ParseSet([]string{"a==1", "b==3"}, false)
	anyOf, _ := ParseSet([]string{"a==1", "b==3"}, true)
	if all.Match(line) || !anyOf.Match(line) {
		t.Errorf("all=%v any=%v", all.Match(line), anyOf.Match(line))
	}
}

// FuzzParse: parsing never panics, and what parses prints back to an
// expression that parses to the same predicate.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"type==event", "!a.b", "x~^a(b|c)$", "friends.#(age>40).name==Ann", `a\=b==c`, "n>=1e3", `k=={"a":[1]}`, "a=b"} {
		f.Add(s, []byte(`{"type":"event","a":{"b":1},"n":1000}`))
	}
	f.Fuzz(func(t *testing.T, expr string, line []byte) {
		p, err := Parse(expr)
		if err != nil {
			return
		}
		p.Match(line)
		q, err := Parse(p.String())
		if err != nil {
			t.Fatalf("%q printed as %q, which does not parse: %v", expr, p.String(), err)
		}
		if q.Path != p.Path || q.Op != p.Op || q.Value != p.Value {
			t.Fatalf("%q → %q → %+v, want %+v", expr, p.String(), q, p)
		}
	})
}

// An escaped space ends a path as part of it, and printing keeps apart
// what would otherwise read as another operator.
func TestEscapedSpaceAndPrinting(t *testing.T) {
	p, err := Parse(`a\ ==1`)
	if err != nil || p.Path != `a\ ` || !p.Match([]byte(`{"a ":1}`)) || p.Match([]byte(`{"a":1}`)) {
		t.Fatalf("%+v %v", p, err)
	}
	for expr, want := range map[string]string{`0< =`: `0 < =`, `a! ==1`: `a! == 1`, `type==event`: `type==event`} {
		p, err := Parse(expr)
		if err != nil || p.String() != want {
			t.Errorf("Parse(%q).String() = %q, %v; want %q", expr, p, err, want)
		}
	}
}
