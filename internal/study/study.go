// Package study is the seeds' experiments as one-command studies. Each study is a plan of
// (variant, shape) measurements over the generated seed families, run through the orchestrator's
// workers, cache, verification and timing (orchestrator.Session), and a renderer that turns the
// results into the seed's tables (Markdown) and charts (PNG and SVG, gonum.org/v1/plot):
//
//	compare      simple vs coalesced vs shared A+B on C(N×N) = A(N×W)·B(W×N)
//	square       shared tiles on square N×N·N×N for W = 4..32
//	rect         rectangular and arbitrary sizes (boundary handling), verified
//	granularity  1, 2 and 4 output columns per thread, with and without register prefetch
//	microtile    32×8 and 64×4 blocks with 1D micro-tiles vs the naive kernel on the same blocks
//	cpu-gpu      CPU naive and blocked-parallel vs three GPU kernels end to end (allocation,
//	             copies, compute), mean ± standard deviation over runs
//
// A study directory holds results.jsonl/csv, device.json (and breakdown.jsonl for cpu-gpu), the
// report.md the renderer writes and its charts; Render works offline from those files.
package study

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"tilegen/internal/orchestrator"
	"tilegen/internal/protocol"
	"tilegen/internal/report"
	"tilegen/internal/results"
	"tilegen/internal/resultsdir"
)

// Options tune the studies that take them.
type Options struct {
	// Runs is the number of end-to-end repetitions of each cpu-gpu point.
	Runs int
	// CPUNaiveMax and CPUBlockedMax are the largest N the CPU kernels run at in cpu-gpu.
	CPUNaiveMax, CPUBlockedMax int
	// CPUBudgetMS bounds one CPU point's total time: fewer runs (at least 3) above it.
	CPUBudgetMS float64
	// Workers for the blocked CPU kernel (0: GOMAXPROCS).
	Workers int
}

// DefaultOptions are the flags' defaults.
func DefaultOptions() Options {
	return Options{Runs: 32, CPUNaiveMax: 1024, CPUBlockedMax: 2048, CPUBudgetMS: 10000}
}

// Study is one experiment.
type Study struct {
	Name string
	Doc  string
	// Pairs are the GPU measurements; Cublas adds cuBLAS on each shape.
	Pairs  func() []orchestrator.Pair
	Cublas bool
	// Extra runs after the pairs (cpu-gpu's breakdowns and CPU timings) and writes its own files.
	Extra func(sess *orchestrator.Session, out string, opt Options, log func(string)) error
	// Render writes the study's sections.
	Render func(b *strings.Builder, s *report.Set, out string) error
}

// All lists the studies in the seeds' order.
func All() []Study {
	return []Study{compareStudy(), squareStudy(), rectStudy(), granularityStudy(), microtileStudy(), cpuGPUStudy()}
}

// Lookup finds a study by name.
func Lookup(name string) (Study, error) {
	var names []string
	for _, s := range All() {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return Study{}, fmt.Errorf("no study %q (have %s)", name, strings.Join(names, ", "))
}

// Run measures the study into out (results files) and renders its report.
func Run(st Study, sess *orchestrator.Session, out string, opt Options, log func(string)) error {
	recs, err := sess.Measure(st.Pairs(), st.Cublas)
	if err != nil {
		return err
	}
	if err := resultsdir.WriteResults(out, recs, sess.Info()); err != nil {
		return err
	}
	if st.Extra != nil {
		if err := st.Extra(sess, out, opt, log); err != nil {
			return err
		}
	}
	return Render(st, out)
}

// Render reads the study's results from out and writes out/report.md with its charts.
func Render(st Study, out string) error {
	s, err := report.Load(out)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Study `%s`: %s\n\n", st.Name, st.Doc)
	fmt.Fprintf(&b, "Device: %s. Peaks (%s): %.0f GFLOP/s FP32, %.0f GB/s DRAM. Times are medians of verified runs "+
		"(each variant passed the float64-reference check on the shape before it was timed).\n\n",
		s.Device(), s.Peaks.Source, s.Peaks.GFLOPS, s.Peaks.GBps)
	if err := st.Render(&b, s, out); err != nil {
		return fmt.Errorf("study %s: %w", st.Name, err)
	}
	analysisSection(&b, s)
	return os.WriteFile(filepath.Join(out, "report.md"), []byte(b.String()), 0o644)
}

// analysisSection lists every timed record with the analysis columns.
func analysisSection(b *strings.Builder, s *report.Set) {
	rows := s.Analyze()
	if len(rows) == 0 {
		return
	}
	b.WriteString("## Analysis: modelled traffic, roofline, waves\n\n")
	b.WriteString("Model: naive reads 2·M·N·K elements; a BM×BN tile reads M·K·⌈N/BN⌉ + K·N·⌈M/BM⌉ " +
		"(= M·N·K·(1/BN + 1/BM) for multiples); coalesced reads A per block column and B per output; " +
		"cuBLAS is given the compulsory M·K + K·N; all write M·N. GB/s above the DRAM peak means the caches " +
		"served part of the modelled traffic. A wave note marks a last wave under half full.\n\n")
	header := append([]string{"shape", "variant", "median ms"}, report.AnalysisHeader...)
	var table [][]string
	for _, r := range rows {
		table = append(table, append([]string{results.ShapeString(r.Rec.Shape), r.Rec.Variant, report.MSf(r.MS())},
			report.AnalysisCells(r)...))
	}
	b.WriteString(report.Table(header, table) + "\n")
	var bad []string
	for _, r := range s.Records {
		if r.Status != results.StatusOK {
			bad = append(bad, fmt.Sprintf("- %s on %s: %s (%s)", r.Variant, results.ShapeString(r.Shape), r.Status, r.Reason))
		}
	}
	if len(bad) > 0 {
		b.WriteString("Not timed:\n\n" + strings.Join(bad, "\n") + "\n\n")
	}
}

// times indexes a set's timings by (variant, shape).
type times map[string]map[protocol.Shape]*protocol.TimingResult

func timesOf(s *report.Set) times {
	t := times{}
	for _, r := range s.Records {
		if r.Status != results.StatusOK || r.Timing == nil || r.Timing.MedianMS <= 0 {
			continue
		}
		if t[r.Variant] == nil {
			t[r.Variant] = map[protocol.Shape]*protocol.TimingResult{}
		}
		t[r.Variant][r.Shape] = r.Timing
	}
	return t
}

// ms is the median time of a variant on a shape, 0 when it was not measured.
func (t times) ms(v string, sh protocol.Shape) float64 {
	if r := t[v][sh]; r != nil {
		return r.MedianMS
	}
	return 0
}

// point is a chart point: the median time, or its GFLOP/s with gflops set, and the 95 % interval of
// the median; NaN when the pair was not measured.
func (t times) point(v string, sh protocol.Shape, asGFLOPS bool) (y, lo, hi float64) {
	r := t[v][sh]
	if r == nil {
		return math.NaN(), math.NaN(), math.NaN()
	}
	lo, hi = report.TimingCI(r)
	if !asGFLOPS {
		return r.MedianMS, lo, hi
	}
	return gflops(sh, r.MedianMS), gflops(sh, hi), gflops(sh, lo)
}

// add appends the point of (v, sh) at x to a series.
func (t times) add(s *report.Series, x float64, v string, sh protocol.Shape, asGFLOPS bool) {
	y, lo, hi := t.point(v, sh, asGFLOPS)
	s.X, s.Y, s.Lo, s.Hi = append(s.X, x), append(s.Y, y), append(s.Lo, lo), append(s.Hi, hi)
}

// gflops is 2·M·N·K over a median time; NaN without one (a table shows "–").
func gflops(sh protocol.Shape, ms float64) float64 {
	if ms <= 0 {
		return math.NaN()
	}
	return results.Flops(sh) / (ms * 1e6)
}

func sq(n, k int) protocol.Shape { return protocol.Shape{M: n, N: n, K: k} }

// pairs makes the cross product of variant names and shapes.
func pairs(names []string, shapes []protocol.Shape) []orchestrator.Pair {
	var out []orchestrator.Pair
	for _, sh := range shapes {
		for _, n := range names {
			out = append(out, orchestrator.Pair{Variant: n, Shape: sh})
		}
	}
	return out
}

func itoa(xs []int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// gflopsBars is a grouped bar chart of GFLOP/s with each median's 95 % interval: one band per
// shape (in order, the first at the top), one bar per variant.
func gflopsBars(title string, shapes []protocol.Shape, names []string, t times) report.Bars {
	bars := report.Bars{Title: title, XLabel: "GFLOP/s (higher is better; whiskers: 95 % CI of the median)"}
	for _, sh := range shapes {
		bars.Labels = append(bars.Labels, results.ShapeString(sh))
	}
	for _, v := range names {
		g := report.Series{Name: v}
		if v == results.CublasName {
			g.Name = "cuBLAS"
		}
		for i, sh := range shapes {
			t.add(&g, float64(i), v, sh, true)
		}
		bars.Groups = append(bars.Groups, g)
	}
	return bars
}
