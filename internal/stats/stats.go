// Package stats summarizes timing samples and decides whether two candidates' times differ: the
// runner ranks by medians and calls two variants tied when their medians' confidence intervals
// overlap.
package stats

import (
	"math"
	"sort"
)

// Summary describes a sample of times.
type Summary struct {
	N      int
	Median float64
	Min    float64
	Max    float64
	Mean   float64
	Std    float64
	// Lo and Hi bound the median with about 95 % confidence (order statistics; distribution-free).
	Lo, Hi float64
}

// Summarize computes a Summary; the input is not modified. An empty sample gives a zero Summary.
func Summarize(xs []float64) Summary {
	n := len(xs)
	if n == 0 {
		return Summary{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	var sum float64
	for _, x := range s {
		sum += x
	}
	mean := sum / float64(n)
	var ss float64
	for _, x := range s {
		ss += (x - mean) * (x - mean)
	}
	std := 0.0
	if n > 1 {
		std = math.Sqrt(ss / float64(n-1))
	}
	lo, hi := MedianCI(s)
	return Summary{N: n, Median: median(s), Min: s[0], Max: s[n-1], Mean: mean, Std: std, Lo: lo, Hi: hi}
}

// Median of xs (not modified).
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return median(s)
}

func median(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// MedianCI returns a ~95 % distribution-free confidence interval for the median of a sorted sample:
// the order statistics at n/2 ∓ 1.96·√n/2. With fewer than 6 samples it is the whole range.
func MedianCI(sorted []float64) (lo, hi float64) {
	n := len(sorted)
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	if n < 6 {
		return sorted[0], sorted[n-1]
	}
	h := 1.96 * math.Sqrt(float64(n)) / 2
	l := int(math.Floor(float64(n)/2 - h))
	u := int(math.Ceil(float64(n)/2+h)) - 1
	if l < 0 {
		l = 0
	}
	if u > n-1 {
		u = n - 1
	}
	return sorted[l], sorted[u]
}

// Separated reports whether two samples' median confidence intervals do not overlap, i.e. the
// difference between them is not a statistical tie.
func Separated(a, b Summary) bool {
	return a.Hi < b.Lo || b.Hi < a.Lo
}

// Geomean is the geometric mean of xs, computed as exp of the mean log (no overflow or underflow
// of a running product). It is NaN for an empty sample or one holding a value ≤ 0 or NaN: a ratio
// that is missing must be left out by the caller, never averaged in as zero.
func Geomean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	sum := 0.0
	for _, x := range xs {
		if !(x > 0) {
			return math.NaN()
		}
		sum += math.Log(x)
	}
	return math.Exp(sum / float64(len(xs)))
}
