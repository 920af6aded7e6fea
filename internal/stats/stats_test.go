package stats

import (
	"math"
	"testing"
)

func TestSummarize(t *testing.T) {
	s := Summarize([]float64{5, 1, 4, 2, 3})
	if s.N != 5 || s.Median != 3 || s.Min != 1 || s.Max != 5 || s.Mean != 3 {
		t.Fatalf("got %+v", s)
	}
	if math.Abs(s.Std-math.Sqrt(2.5)) > 1e-12 {
		t.Fatalf("std %v", s.Std)
	}
	if e := Summarize([]float64{4, 1, 3, 2}); e.Median != 2.5 {
		t.Fatalf("even median %v", e.Median)
	}
	if z := Summarize(nil); z.N != 0 {
		t.Fatalf("empty: %+v", z)
	}
}

func TestSeparated(t *testing.T) {
	var a, b, c []float64
	for i := 0; i < 50; i++ {
		a = append(a, 1.0+0.001*float64(i%7))
		b = append(b, 1.0+0.001*float64(i%5))
		c = append(c, 2.0+0.001*float64(i%3))
	}
	sa, sb, sc := Summarize(a), Summarize(b), Summarize(c)
	if Separated(sa, sb) {
		t.Errorf("overlapping samples reported separated: %+v %+v", sa, sb)
	}
	if !Separated(sa, sc) || !Separated(sc, sa) {
		t.Errorf("distinct samples reported tied: %+v %+v", sa, sc)
	}
	if lo, hi := MedianCI([]float64{1, 2, 3}); lo != 1 || hi != 3 {
		t.Errorf("small-sample CI %v %v", lo, hi)
	}
}

func TestGeomean(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{4}, 4},
		{[]float64{1, 4}, 2},
		{[]float64{0.5, 2, 1}, 1},
		{[]float64{2, 8, 4}, 4},
		// A product of these overflows float64; the mean log does not.
		{[]float64{1e300, 1e300, 1e-300, 1e-300}, 1},
	} {
		if got := Geomean(c.xs); math.Abs(got-c.want) > 1e-12*c.want {
			t.Errorf("Geomean(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
	for _, xs := range [][]float64{nil, {1, 0}, {2, -1}, {math.NaN()}} {
		if got := Geomean(xs); !math.IsNaN(got) {
			t.Errorf("Geomean(%v) = %v, want NaN", xs, got)
		}
	}
}
