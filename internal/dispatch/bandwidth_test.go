package dispatch

import (
	"math"
	"testing"
)

// TestAddBandwidth: only the GEMV-like and tiny-output shapes whose traffic is at least twice the L2
// are listed, each with bytes 4·(MK + KN + MN) over its time (the exported kernel's is cuBLAS's time
// over the ratio), sorted by fraction of the peak, with the totals of both; no peak, no section.
func TestAddBandwidth(t *testing.T) {
	s := &Summary{Shapes: []ShapeResult{
		{Shape: "1x25000x4000", Regime: "gemv-m", Variant: "a", CublasMS: 0.2, Ratio: 1.25}, // 400.1 MB in 0.16 ms
		{Shape: "25000x1x4000", Regime: "gemv-n", Variant: "b", CublasMS: 0.16, Ratio: 0.8}, // in 0.2 ms
		{Shape: "4x4x6250000", Regime: "tiny", Variant: "c", CublasMS: 0.09, Ratio: 1},      // 200 MB in 0.09 ms
		{Shape: "1x1000x1000", Regime: "gemv-m", Variant: "d", CublasMS: 0.01, Ratio: 1},    // 4 MB: in L2
		{Shape: "4096x4096x4096", Regime: "large", Variant: "e", CublasMS: 2.7, Ratio: 1},   // not GEMV-like
		{Shape: "64x100000x1000", Regime: "skinny", Variant: "f", CublasMS: 0.3, Ratio: 1},  // not GEMV-like
	}}
	s.AddBandwidth(3000, 50<<20)
	bw := s.Bandwidth
	if bw == nil || bw.PeakGBps != 3000 || bw.MinBytes != 100<<20 || len(bw.Shapes) != 3 {
		t.Fatalf("bandwidth %+v: want 3 shapes, peak 3000, min bytes %d", bw, 100<<20)
	}
	bytes, tiny := float64(4*(25000*4000+4000+25000)), float64(4*(4*6250000+6250000*4+16))
	want := []struct {
		shape     string
		gbps, cub float64
	}{
		{"25000x1x4000", bytes / 0.2 / 1e6, bytes / 0.16 / 1e6},
		{"4x4x6250000", tiny / 0.09 / 1e6, tiny / 0.09 / 1e6},
		{"1x25000x4000", bytes / 0.16 / 1e6, bytes / 0.2 / 1e6},
	}
	for i, w := range want {
		x := bw.Shapes[i]
		if x.Shape != w.shape || math.Abs(x.GBps-w.gbps) > 1e-6*w.gbps || math.Abs(x.CublasGBps-w.cub) > 1e-6*w.cub ||
			math.Abs(x.Fraction-w.gbps/3000) > 1e-9 {
			t.Errorf("shape %d: %+v, want %s at %.1f GB/s (cuBLAS %.1f)", i, x, w.shape, w.gbps, w.cub)
		}
	}
	if e := bw.Exported; e.Count != 3 || math.Abs(e.Median-tiny/0.09/1e6/3000) > 1e-9 || math.Abs(e.Min-bytes/0.2/1e6/3000) > 1e-9 || e.AtLeast85 != 0 {
		t.Errorf("exported totals %+v", e)
	}
	if c := bw.Cublas; c.Count != 3 || c.AtLeast85 != 0 || math.Abs(c.Median-tiny/0.09/1e6/3000) > 1e-9 {
		t.Errorf("cuBLAS totals %+v", c)
	}
	s2 := &Summary{Shapes: s.Shapes}
	s2.AddBandwidth(0, 50<<20)
	if s2.Bandwidth != nil {
		t.Error("a bandwidth section without a peak")
	}
}
