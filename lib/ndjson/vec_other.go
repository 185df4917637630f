//go:build !amd64

package ndjson

// fastUTF8 is false where there is no vector check: Check then marks
// lines eight bytes at a step and looks at UTF-8 as it walks the strings.
const fastUTF8 = false

func markUTF8(b []byte, stops Marks) bool { panic("no vector UTF-8 check on this platform") }
