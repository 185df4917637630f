package ndjsontool

import (
	"context"

	"github.com/agentry/agentry/lib/ndjson"
	"github.com/agentry/agentry/lib/predicate"
)

// Where passes through, byte for byte, every valid line the set selects.
// Only the selected lines need validating, which keeps where at the speed
// of a plain scan; under Strict every line is validated, so that every
// malformed line is counted.
func Where(ctx context.Context, st *Stream, set *predicate.Set) error {
	sk, err := st.eachLine(ctx, func(out, line []byte) ([]byte, bool) {
		if st.Strict && ndjson.Check(line) != ndjson.Valid {
			return out, false
		}
		if !set.Match(line) {
			return out, true
		}
		if !st.Strict && ndjson.Check(line) != ndjson.Valid {
			return out, false
		}
		out = append(out, line...)
		return append(out, '\n'), true
	})
	if err != nil {
		return err
	}
	return sk.report(st)
}
