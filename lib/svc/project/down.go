package project

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agentry/agentry/lib/svc"
)

// Stopped is what svc down did with one service.
type Stopped struct {
	Name   string
	Report *svc.StopReport
	Err    error
}

// Down stops the live services of the project (names: only those, by
// their names within the project) in reverse dependency order, dependents
// first, those of one level in parallel. The order comes from what each
// service recorded when svc up started it, so it holds after the file
// has changed or gone. report is called as each stop ends; calls never
// overlap.
func Down(home, project string, names []string, grace time.Duration, report func(Stopped)) error {
	defs, err := recorded(home, project)
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for _, n := range names {
		if !hasDef(defs, n) {
			return fmt.Errorf("project %s has no service called %s", project, n)
		}
		want[n] = true
	}
	var mu sync.Mutex
	levels := Levels(defs, NeedNames)
	for i := len(levels) - 1; i >= 0; i-- {
		var wg sync.WaitGroup
		for _, d := range levels[i] {
			if len(want) > 0 && !want[d.Name] {
				continue
			}
			dir := svc.Dir{Home: home, Name: project + "/" + d.Name}
			if l, err := svc.Look(dir); err != nil || !l.Status.Live() {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				rep, err := svc.Stop(dir, grace)
				mu.Lock()
				defer mu.Unlock()
				report(Stopped{Name: dir.Name, Report: rep, Err: err})
			}()
		}
		wg.Wait()
	}
	return nil
}

// recorded is every service of the project as svc up recorded it: its
// name within the project and what it depends on.
func recorded(home, project string) ([]*Def, error) {
	all, err := svc.List(home)
	if err != nil {
		return nil, err
	}
	var defs []*Def
	for _, name := range all {
		short, ok := strings.CutPrefix(name, project+"/")
		if !ok {
			continue
		}
		d := &Def{Name: short}
		if s, err := svc.ReadState(svc.Dir{Home: home, Name: name}); err == nil && s.Spec.Project != nil {
			for _, dep := range s.Spec.Project.DependsOn {
				d.Needs = append(d.Needs, Need{Name: dep})
			}
		}
		defs = append(defs, d)
	}
	return defs, nil
}

func hasDef(defs []*Def, name string) bool {
	for _, d := range defs {
		if d.Name == name {
			return true
		}
	}
	return false
}
