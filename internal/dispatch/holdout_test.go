package dispatch

import (
	"fmt"
	"math"
	"testing"
)

// TestHoldout judges a rule fitted on one synthetic corpus on shapes drawn apart: each shape gets
// the variant Rule.Dispatch launches and that variant's measured ratio, the fastest timed kernel is
// at least as fast, a shape whose launched variant was not timed is counted and left out of the
// totals, and malformed samples are refused.
func TestHoldout(t *testing.T) {
	d := synthData(synthCorpus(80, 7))
	r, err := Fit(d, nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	apart := synthData(synthCorpus(30, 99))
	var samples []HoldoutSample
	for i, s := range apart.Samples {
		samples = append(samples, HoldoutSample{Shape: s.Shape, Source: fmt.Sprint("drawn ", i), CublasMS: s.CublasMS,
			Times: append([]float64(nil), apart.Times[i]...)})
	}
	// The first sample's launched variant untimed.
	s0 := samples[0].Shape
	lda, ldb, ldc := s0.Dense()
	j0 := r.Dispatch(s0.M, s0.N, s0.K, Vec(s0.M, s0.N, lda, ldb, ldc), func(j int) bool { return d.Kernels[j].Supports(s0.M, s0.N, s0.K) },
		func(j int) bool { return d.Kernels[j].Fits(s0.M, s0.N) })
	samples[0].Times[j0] = 0
	h, err := d.Holdout(r, samples)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Shapes) != len(samples) || h.Untimed < 1 {
		t.Fatalf("%d shapes of %d, %d untimed", len(h.Shapes), len(samples), h.Untimed)
	}
	byShape := map[string]HoldoutSample{}
	for _, s := range samples {
		byShape[fmt.Sprintf("%dx%dx%d", s.Shape.M, s.Shape.N, s.Shape.K)] = s
	}
	var got, best []float64
	for i, x := range h.Shapes {
		s, ok := byShape[x.Shape]
		if !ok {
			t.Fatalf("shape %s not a sample", x.Shape)
		}
		if i > 0 && h.Shapes[i-1].Flops > x.Flops {
			t.Errorf("shapes not by size at %s", x.Shape)
		}
		sh := s.Shape
		lda, ldb, ldc := sh.Dense()
		j := r.Dispatch(sh.M, sh.N, sh.K, Vec(sh.M, sh.N, lda, ldb, ldc), func(j int) bool { return d.Kernels[j].Supports(sh.M, sh.N, sh.K) },
			func(j int) bool { return d.Kernels[j].Fits(sh.M, sh.N) })
		if x.Variant != d.Kernels[j].Name || x.Source != s.Source || x.CublasMS != s.CublasMS {
			t.Errorf("%s: %s (%q), want %s (%q)", x.Shape, x.Variant, x.Source, d.Kernels[j].Name, s.Source)
		}
		if s.Times[j] == 0 {
			if !x.Untimed || x.Ratio != 0 {
				t.Errorf("%s: untimed variant, got %+v", x.Shape, x)
			}
			continue
		}
		if want := s.CublasMS / s.Times[j]; x.Untimed || math.Abs(x.Ratio-want) > 1e-12 || x.BestRatio < x.Ratio || x.BestVariant == "" {
			t.Errorf("%s: %+v, want ratio %g", x.Shape, x, want)
		}
		got, best = append(got, x.Ratio), append(best, x.BestRatio)
	}
	if h.Ratio != Summarize(got) || h.Best != Summarize(best) || h.Ratio.Count != len(samples)-h.Untimed {
		t.Errorf("totals %+v %+v", h.Ratio, h.Best)
	}
	bad := samples[1]
	bad.Times = bad.Times[1:]
	if _, err := d.Holdout(r, []HoldoutSample{bad}); err == nil {
		t.Error("a sample with too few times was accepted")
	}
	bad = samples[1]
	bad.CublasMS = 0
	if _, err := d.Holdout(r, []HoldoutSample{bad}); err == nil {
		t.Error("a sample without a cuBLAS time was accepted")
	}
}
