package ndjsontool

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
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
			if got := s.quantile(q); math.Abs(got-want) > 0.0051*math.Abs(want)+1e-9 {
				t.Errorf("q%.2f: %g, want %g (within 0.5%%)", q, got, want)
			}
			got := s.shown(q, xs[0], xs[len(xs)-1])
			if math.Abs(got-want) > 0.0101*math.Abs(want)+1e-9 {
				t.Errorf("shown q%.2f: %g, want %g (within 1%%)", q, got, want)
			}
			if sig := strconv.FormatFloat(math.Abs(got), 'e', -1, 64); len(strings.TrimRight(strings.Split(sig, "e")[0], "0")) > 4 {
				t.Errorf("shown q%.2f: %g has more than three significant digits", q, got)
			}
		}
	}
}

// Over whole numbers below 100, what is shown is the exact value of the
// rank; above, three significant digits, whole (2490, not 2470.2816).
func TestSketchShownWhole(t *testing.T) {
	s := newSketch()
	for i := 1; i <= 99; i++ {
		s.add(float64(i))
	}
	if got := s.shown(0.5, 1, 99); got != 50 {
		t.Errorf("p50 of 1..99 = %g, want 50", got)
	}
	s = newSketch()
	for range 9 {
		s.add(2490)
	}
	if got := s.shown(0.5, 2490, 2490); got != 2490 {
		t.Errorf("p50 of 2490s = %g, want 2490", got)
	}
}
