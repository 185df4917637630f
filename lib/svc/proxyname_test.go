package svc

import (
	"maps"
	"reflect"
	"testing"
)

func TestNameProxied(t *testing.T) {
	main := func(slug string) *WorktreeTag { return &WorktreeTag{Slug: slug, Main: true} }
	linked := func(slug string) *WorktreeTag { return &WorktreeTag{Slug: slug, Slot: 1} }
	type svc struct {
		name string
		wt   *WorktreeTag
	}
	for _, c := range []struct {
		what   string
		rows   []svc
		hosts  map[string]string
		shared map[string][]string
	}{
		{"one project's web keeps the short name",
			[]svc{{"shop/web", main("shop")}, {"shop/db", main("shop")}, {ProxyName, nil}},
			map[string]string{"shop/web": "web.localhost", "shop/db": "db.localhost"}, map[string][]string{}},
		{"two projects' web: each its project's, the short name shared",
			[]svc{{"shop/web", main("shop")}, {"blog/web", nil}, {"blog/api", nil}},
			map[string]string{"shop/web": "web.shop.localhost", "blog/web": "web.blog.localhost", "blog/api": "api.localhost"},
			map[string][]string{"web.localhost": {"blog/web", "shop/web"}}},
		{"a worktree's names stay, the main checkout's too",
			[]svc{{"repo/web", main("repo")}, {"feat/web", linked("feat")}, {"slow", linked("feat")}},
			map[string]string{"repo/web": "web.localhost", "feat/web": "web.feat.localhost", "slow": "slow.feat.localhost"}, map[string][]string{}},
		{"a plain service has its own name: the project's goes to its project's",
			[]svc{{"web", nil}, {"shop/web", main("shop")}},
			map[string]string{"web": "web.localhost", "shop/web": "web.shop.localhost"}, map[string][]string{}},
		{"a worktree whose slug is another project's name",
			[]svc{{"x/web", linked("shop")}, {"shop/web", main("shop")}},
			map[string]string{"x/web": "web.x.localhost", "shop/web": "web.localhost"}, map[string][]string{}},
		{"names that are one host name: neither has it",
			[]svc{{"a_b", nil}, {"A-b", nil}},
			map[string]string{}, map[string][]string{"a-b.localhost": {"A-b", "a_b"}}},
	} {
		var rows []*Listing
		for _, s := range c.rows {
			rows = append(rows, &Listing{State: State{Name: s.name, Spec: Spec{Worktree: s.wt}}})
		}
		n := NameProxied(rows)
		hosts := map[string]string{}
		for _, s := range c.rows {
			if h := n.Host(s.name); h != "" {
				hosts[s.name] = h
			}
		}
		if !maps.Equal(hosts, c.hosts) || !reflect.DeepEqual(n.Shared(), c.shared) {
			t.Errorf("%s: %v %v, want %v %v", c.what, hosts, n.Shared(), c.hosts, c.shared)
		}
	}
}
