package svc

import (
	"sync"
	"testing"
)

// Starts at once that hash to the same port each get another, while each
// holds its port's lock: none waits for the others to finish.
func TestPickPortConcurrent(t *testing.T) {
	home := t.TempDir()
	const n = 16
	ports := make([]int, n)
	releases := make([]func(), n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One name and directory: the same first choice for all.
			p, release, err := pickPort(Dir{Home: home, Name: "web"}, PortAuto, "/src")
			if err != nil {
				t.Error(err)
				return
			}
			ports[i], releases[i] = p, release
		}()
	}
	wg.Wait()
	seen := map[int]bool{}
	for _, p := range ports {
		if p == 0 || seen[p] {
			t.Fatalf("ports %v: not distinct", ports)
		}
		seen[p] = true
	}
	for _, r := range releases {
		r()
	}
	// Released and never recorded: the first choice is free again.
	p, release, err := pickPort(Dir{Home: home, Name: "web"}, PortAuto, "/src")
	if err != nil || !seen[p] {
		t.Errorf("after release: %d %v", p, err)
	}
	release()
}
