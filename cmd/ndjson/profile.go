//go:build ndjson_pprof

package main

import (
	"os"
	"runtime/pprof"
)

// Built with the tag ndjson_pprof (make pgo does), ndjson writes a CPU
// profile of its run to $NDJSON_CPUPROFILE: the runs make pgo merges into
// default.pgo, the profile the compiler optimizes ndjson with.
var profile *os.File

func init() {
	if path := os.Getenv("NDJSON_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			panic(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			panic(err)
		}
		profile = f
	}
}

func stopProfile() {
	if profile != nil {
		pprof.StopCPUProfile()
		profile.Close()
	}
}
