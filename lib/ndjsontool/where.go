package ndjsontool

import (
	"context"

	"github.com/agentry/agentry/lib/ndjson"
	"github.com/agentry/agentry/lib/predicate"
)

// Where passes through, byte for byte, every valid line the set selects.
// Every line is validated, selected or not, so that a malformed line is
// reported as every other verb reports it, never passed over in silence.
//
// The values are found as get finds them (a plain path by the fast
// lookup on the validated line, else gjson), so selecting costs little
// next to validating.
func Where(ctx context.Context, st *Stream, set *predicate.Set) error {
	fps := make([]fastPath, len(set.Preds))
	for i, p := range set.Preds {
		fps[i] = parseFastPath(p.Path)
	}
	sk, err := st.eachLine(ctx, func(out, line []byte, marks ndjson.Marks) []byte {
		if set.MatchBy(func(i int, path string) ([]byte, bool) { v := get(line, marks, path, fps[i]); return v.raw, v.ok }) {
			out = append(out, line...)
			out = append(out, '\n')
		}
		return out
	})
	if err != nil {
		return err
	}
	return sk.report(st)
}
