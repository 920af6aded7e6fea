// Package shapes decides which tuned shape a problem M×N×K is nearest to. The runner's
// `--variant best` (outofcore, hybrid) runs the variant that was fastest on the nearest tuned
// shape: AbsLog, distances within 1e-12 tied, ties broken by the caller (the faster median, then
// the smaller variant name). internal/dispatch cross-validates the exported dispatch it replaced —
// the fastest variant of the nearest tuned shape by SquaredLog, ties to the first — as the
// baseline of `runner workload`; the exports themselves carry internal/dispatch's fitted table.
// The package imports nothing of tilegen, so any package can use it without pulling in CUDA or the
// orchestrator.
package shapes

import "math"

// Metric is a distance between two shapes, on the logarithms of their extents, so that 2048 is
// as far from 1024 as 4096 from 2048.
type Metric int

const (
	// AbsLog is |ln(M/Mc)| + |ln(N/Nc)| + |ln(K/Kc)|: the runner's --variant best.
	AbsLog Metric = iota
	// SquaredLog is ln²(M/Mc) + ln²(N/Nc) + ln²(K/Kc): the export's dispatch before it was fitted,
	// now the baseline runner workload compares the fitted rule with.
	SquaredLog
)

// Distance is the metric's distance from m×n×k to the candidate cm×cn×ck.
func (d Metric) Distance(m, n, k, cm, cn, ck int) float64 {
	switch d {
	case SquaredLog:
		dm := math.Log(float64(m) / float64(cm))
		dn := math.Log(float64(n) / float64(cn))
		dk := math.Log(float64(k) / float64(ck))
		return dm*dm + dn*dn + dk*dk
	default:
		l := func(a, b int) float64 { return math.Abs(math.Log(float64(a) / float64(b))) }
		return l(cm, m) + l(cn, n) + l(ck, k)
	}
}

// Rule is a nearest-shape rule: a metric and the width of a tie.
type Rule struct {
	Metric Metric
	// Tie: candidates whose distances differ by at most Tie are tied (0: only equal distances).
	Tie float64
}

// Best is the runner's --variant best rule (see the package doc).
var Best = Rule{Metric: AbsLog, Tie: 1e-12}

// Nearest returns the index of the candidate nearest to m×n×k under r, or −1 when there is none
// (no candidates, or none at a finite distance). shape(i) is candidate i's M, N and K, for i in
// [0, count). A candidate tied with the nearest so far replaces it only when better(i, best)
// says so; with better nil the first of tied candidates wins.
func Nearest(r Rule, m, n, k, count int, shape func(i int) (cm, cn, ck int), better func(i, best int) bool) int {
	best, bestD := -1, math.Inf(1)
	for i := range count {
		cm, cn, ck := shape(i)
		d := r.Metric.Distance(m, n, k, cm, cn, ck)
		if d < bestD-r.Tie || (best >= 0 && better != nil && math.Abs(d-bestD) <= r.Tie && better(i, best)) {
			best, bestD = i, d
		}
	}
	return best
}
