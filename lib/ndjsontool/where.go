package ndjsontool

import (
	"context"

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
	find := finding{paths: fps} // the check finds every path on its one walk
	sk, err := st.eachLine(ctx, find, func(out, line []byte, lv lineView) []byte {
		if set.MatchBy(func(i int, path string) ([]byte, bool) {
			v := lv.foundAt(i, line, path, fps[i])
			return v.raw, v.ok
		}) {
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
