package cli

import (
	"encoding/json"
	"io"
)

// PrintJSON writes v to w as one line of JSON: the shape of every --json
// report in the suite.
func PrintJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
