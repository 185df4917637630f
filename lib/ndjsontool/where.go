package ndjsontool

import (
	"context"

	"github.com/agentry/agentry/lib/ndjson"
	"github.com/agentry/agentry/lib/predicate"
)

// Where passes through, byte for byte, every valid line the set selects.
// Every line is validated, selected or not, so that a malformed line is
// reported as every other verb reports it, never passed over in silence.
func Where(ctx context.Context, st *Stream, set *predicate.Set) error {
	sk, err := st.eachLine(ctx, func(out, line []byte) ([]byte, bool) {
		if ndjson.Check(line) != ndjson.Valid {
			return out, false
		}
		if set.Match(line) {
			out = append(out, line...)
			out = append(out, '\n')
		}
		return out, true
	})
	if err != nil {
		return err
	}
	return sk.report(st)
}
