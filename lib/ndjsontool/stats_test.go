package ndjsontool

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The sketch's quantiles are within 1% of a value of the right rank, for
// values of either sign over many orders of magnitude.
func TestSketchQuantiles(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, gen := range []func() float64{
		func() float64 { return float64(r.IntN(8000)) },
		func() float64 { return math.Exp(r.NormFloat64() * 5) },
		func() float64 { return r.NormFloat64() * 1e6 },
	} {
		s := newSketch()
		var xs []float64
		for range 50000 {
			x := gen()
			xs = append(xs, x)
			s.add(x)
		}
		slices.Sort(xs)
		for _, q := range []float64{0, 0.5, 0.95, 1} {
			want := xs[int(math.Round(q*float64(len(xs)-1)))]
			got := s.quantile(q)
			if math.Abs(got-want) > 0.011*math.Abs(want)+1e-9 {
				t.Errorf("q%.2f: %g, want %g (within 1%%)", q, got, want)
			}
		}
	}
}
