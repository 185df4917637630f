//go:build !amd64

package ndjson

// fastUTF8 is false where there is no vector check: Check then looks at
// UTF-8 as it walks the strings.
const fastUTF8 = false

func validUTF8(b []byte) bool { panic("no vector UTF-8 check on this platform") }

func scanString(b []byte, i int) int { panic("no vector string scan on this platform") }

func markUTF8(b []byte, stops Marks) bool { panic("no vector UTF-8 check on this platform") }
