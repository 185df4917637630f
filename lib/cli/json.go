package cli

import (
	"encoding/json"
	"io"
)

// PrintJSON writes v to w as one line of JSON: the shape of every --json
// report in the suite. <, > and & are written as they are (encoding/json
// escapes them for HTML, which a shell line's `2>&1` read as \u003e\u00261).
func PrintJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
