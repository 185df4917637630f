package svccmd

import "testing"

func TestSuggestName(t *testing.T) {
	all := []string{"server", "shop/web", "shop/api", "blog/web", "db"}
	for _, c := range []struct{ name, proj, want string }{
		{"servr", "", "server"},
		{"web", "", "shop/web or blog/web"},
		{"wbe", "shop", "web"},  // this project's, by its bare name
		{"wbe", "", "shop/web"}, // elsewhere, by its full name
		{"shop/wen", "", "shop/web"},
		{"dx", "", "db"},
		{"postgres", "", ""},
		{"xyz", "", ""},
	} {
		if got := suggestName(c.name, c.proj, all); got != c.want {
			t.Errorf("suggestName(%q, %q) = %q, want %q", c.name, c.proj, got, c.want)
		}
	}
}
