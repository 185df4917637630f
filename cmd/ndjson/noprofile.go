//go:build !ndjson_pprof

package main

// stopProfile ends the CPU profile of a build for make pgo (profile.go);
// this build keeps none.
func stopProfile() {}
