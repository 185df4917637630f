//go:build !linux

package ndjson

// populate is a no-op where the pages of a buffer cannot be mapped in at
// once: they fault in on first touch.
func populate([]byte) {}
