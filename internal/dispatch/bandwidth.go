package dispatch

import (
	"fmt"
	"sort"
)

// Bandwidth is the memory-bound view of the GEMV-like and tiny-output shapes of a workload summary:
// such a product moves about its compulsory traffic, 4·(MK + KN + MN) bytes, and does little
// arithmetic on it, so it is judged as a fraction of the device's DRAM bandwidth as well as against
// cuBLAS.
type Bandwidth struct {
	// PeakGBps is the device's DRAM bandwidth in GB/s: 2 × memory clock × bus width (double data rate).
	PeakGBps float64 `json:"peak_gbps"`
	// MinBytes: only shapes whose compulsory traffic is at least twice the L2 cache are listed, so that
	// their operands stream from DRAM.
	MinBytes int64            `json:"min_bytes"`
	Shapes   []BandwidthShape `json:"shapes"`
	// Exported and Cublas summarize the fractions of the peak of the exported dispatch's kernel and of
	// cuBLAS over Shapes.
	Exported BandwidthTotals `json:"exported"`
	Cublas   BandwidthTotals `json:"cublas"`
}

// BandwidthShape is one shape of Bandwidth: the exported dispatch's variant (as Summary's shape), its
// effective bandwidth and cuBLAS's, in GB/s and as fractions of the peak.
type BandwidthShape struct {
	Shape          string  `json:"shape"`
	Regime         string  `json:"regime"`
	Variant        string  `json:"variant"`
	Bytes          int64   `json:"bytes"`
	GBps           float64 `json:"gbps"`
	CublasGBps     float64 `json:"cublas_gbps"`
	Fraction       float64 `json:"fraction"`
	CublasFraction float64 `json:"cublas_fraction"`
}

// BandwidthTotals are the median and minimum fraction of the peak and how many shapes reach 85 % of it.
type BandwidthTotals struct {
	Count     int     `json:"count"`
	Median    float64 `json:"median"`
	Min       float64 `json:"min"`
	AtLeast85 int     `json:"at_least_0_85"`
}

// AddBandwidth sets s.Bandwidth from the GEMV-like and tiny-output shapes (an output dimension of at
// most 16, whatever their class: a tiny output over a deep K is classed deep-k) whose compulsory
// traffic is at least twice l2Bytes, on a device of peakGBps (nothing when peakGBps is not
// positive: the records did not say).
func (s *Summary) AddBandwidth(peakGBps float64, l2Bytes int64) {
	if !(peakGBps > 0) {
		return
	}
	bw := &Bandwidth{PeakGBps: peakGBps, MinBytes: 2 * l2Bytes}
	var ours, theirs []float64
	for _, r := range s.Shapes {
		var m, n, k int64
		if _, err := fmt.Sscanf(r.Shape, "%dx%dx%d", &m, &n, &k); err != nil || min(m, n) > gemvMax {
			continue
		}
		bytes := 4 * (m*k + k*n + m*n)
		if bytes < bw.MinBytes || !(r.CublasMS > 0) || !(r.Ratio > 0) {
			continue
		}
		oursMS := r.CublasMS / r.Ratio
		x := BandwidthShape{Shape: r.Shape, Regime: r.Regime, Variant: r.Variant, Bytes: bytes,
			GBps: float64(bytes) / oursMS / 1e6, CublasGBps: float64(bytes) / r.CublasMS / 1e6}
		x.Fraction, x.CublasFraction = x.GBps/peakGBps, x.CublasGBps/peakGBps
		bw.Shapes = append(bw.Shapes, x)
		ours, theirs = append(ours, x.Fraction), append(theirs, x.CublasFraction)
	}
	sort.SliceStable(bw.Shapes, func(i, j int) bool { return bw.Shapes[i].Fraction < bw.Shapes[j].Fraction })
	bw.Exported, bw.Cublas = bandwidthTotals(ours), bandwidthTotals(theirs)
	s.Bandwidth = bw
}

func bandwidthTotals(f []float64) BandwidthTotals {
	t := BandwidthTotals{Count: len(f)}
	if len(f) == 0 {
		return t
	}
	g := append([]float64(nil), f...)
	sort.Float64s(g)
	t.Min, t.Median = g[0], medianSorted(g)
	for _, x := range g {
		if x >= 0.85 {
			t.AtLeast85++
		}
	}
	return t
}
