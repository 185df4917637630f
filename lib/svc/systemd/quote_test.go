package systemd

import "testing"

func TestUnitName(t *testing.T) {
	for _, c := range []struct {
		parts []string
		want  string
	}{
		{[]string{"shop", "web"}, "shop-web.service"},
		{[]string{"shop", "my-api"}, "shop-my-api.service"},
		{[]string{"a b", "x@y"}, `a\x20b-x\x40y.service`}, // as systemd-escape 'a b' 'x@y'
		{[]string{".hidden"}, `\x2ehidden.service`},
		{[]string{"é"}, `\xc3\xa9.service`},
	} {
		if got := UnitName("service", c.parts...); got != c.want {
			t.Errorf("UnitName(%q) = %s, want %s", c.parts, got, c.want)
		}
	}
}

func TestExecWords(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"/bin/echo", "a b"}, `"/bin/echo" "a b"`},
		{[]string{"/bin/echo", "$HOME", "${X}"}, `"/bin/echo" "$$HOME" "$${X}"`},
		{[]string{"/bin/echo", "100%", "%n"}, `"/bin/echo" "100%%" "%%n"`},
		{[]string{"/bin/echo", `say "hi"`, `a\b`, "it's"}, `"/bin/echo" "say \"hi\"" "a\\b" "it's"`},
		{[]string{"/bin/echo", ";", ""}, `"/bin/echo" ";" ""`},
		{[]string{"/bin/echo", "a\nb\tc\x01"}, `"/bin/echo" "a\nb\tc\x01"`},
	} {
		if got := ExecWords(c.argv); got != c.want {
			t.Errorf("ExecWords(%q) = %s, want %s", c.argv, got, c.want)
		}
	}
}

func TestEnvFileLine(t *testing.T) {
	if got, want := envFileLine("K", "a \"b\" $c `d` \\e %f"), "K=\"a \\\"b\\\" \\$c \\`d\\` \\\\e %f\"\n"; got != want {
		t.Errorf("envFileLine = %q, want %q", got, want)
	}
}
