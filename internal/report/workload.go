package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"tilegen/internal/dispatch"
)

// WorkloadChart is the base name of the chart WriteWorkload draws (.png and .svg).
const WorkloadChart = "ratio"

// WriteWorkload draws the ratio of every corpus shape against its problem size (ratio.png/.svg)
// and writes summary.md into dir: the totals, the totals per regime class and the table of shapes,
// ready to go into BENCHMARKS.md.
func WriteWorkload(s *dispatch.Summary, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var flops, all, cv, best []float64
	for _, r := range s.Shapes {
		flops, all, cv, best = append(flops, r.Flops/1e9), append(all, r.Ratio), append(cv, r.RatioCV), append(best, r.BestRatio)
	}
	chart := Line{
		Title: fmt.Sprintf("tilegen / cuBLAS on %d workload shapes, %s (%d-fold cross-validation)", len(s.Shapes),
			plainTitle(s.GPU), s.Folds),
		XLabel: "problem size (GFLOP = 2·M·N·K / 1e9)", YLabel: "ratio = cuBLAS time / tilegen time",
		LogX: true, LogY: true, Points: true,
		// The held-out ratios, the headline, are drawn last, on top.
		Series: []Series{
			{Name: "fastest variant timed on the shape", X: flops, Y: best},
			{Name: "exported dispatch (fitted on every shape)", X: flops, Y: all},
			{Name: "held out: dispatch fitted without the shape's fold", X: flops, Y: cv},
		},
		HLines: []Ref{{Name: "cuBLAS (1.0)", Value: 1}, {Name: "0.9", Value: 0.9}},
	}
	png, err := chart.Draw(dir, WorkloadChart)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "summary.md"), []byte(WorkloadMarkdown(s, png)), 0o644)
}

// plainTitle keeps a chart title to one line of printable text.
func plainTitle(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// WorkloadMarkdown renders the summary as Markdown; chart is the chart's file name beside it ("" for none).
func WorkloadMarkdown(s *dispatch.Summary, chart string) string {
	var b strings.Builder
	op := ""
	if s.Op != "" && s.Op != "NN" {
		op = " (op " + mdText(s.Op) + ")"
	}
	fmt.Fprintf(&b, "## Workload: %d shapes%s on %s\n\n", len(s.Shapes), op, mdText(s.GPU))
	fmt.Fprintf(&b, "Ratio = cuBLAS time / tilegen time, both measured in the same run (above 1: faster than cuBLAS). "+
		"*Held out*: the dispatch fitted without the shape's fold (%d folds, %s), so the shape's measurements "+
		"were never used to fit it. *Exported*: the dispatch fitted on every shape, as `runner export --corpus` "+
		"writes it. *Fastest timed*: the best exportable variant measured on the shape. *Nearest tuned shape*: the dispatch "+
		"this one replaced (the fastest variant of the nearest shape of the other folds). %d exportable variants were timed.\n\n",
		s.Folds, s.FoldRule, s.Kernels)
	tot := func(name string, t dispatch.Totals) []string {
		return []string{name, fmt.Sprint(t.Count), f3(t.Geomean), f3(t.Min), f3(t.Median), fmt.Sprint(t.Below09)}
	}
	b.WriteString(Table([]string{"dispatch", "shapes", "geomean", "min", "median", "below 0.9×"}, [][]string{
		tot("held out (cross-validated)", s.Totals.RatioCV),
		tot("exported (fitted on all shapes)", s.Totals.Ratio),
		tot("fastest timed per shape", s.Totals.Best),
		tot("nearest tuned shape (the rule replaced), held out", s.Totals.NearestCV),
	}))
	b.WriteString("\n")
	var rows [][]string
	for _, r := range s.Regimes {
		rows = append(rows, []string{r.Regime, fmt.Sprint(r.Ratio.Count), f3(r.RatioCV.Geomean), f3(r.RatioCV.Min),
			f3(r.Ratio.Geomean), f3(r.Ratio.Min), f3(r.Best.Geomean), f3(r.NearestCV.Geomean)})
	}
	b.WriteString(Table([]string{"regime", "shapes", "held-out geomean", "held-out min", "exported geomean", "exported min",
		"fastest geomean", "nearest-shape held-out geomean"}, rows))
	b.WriteString("\n")
	if chart != "" {
		b.WriteString(Image("ratio against problem size", chart))
		b.WriteString("\n")
	}
	if bw := s.Bandwidth; bw != nil && len(bw.Shapes) > 0 {
		fmt.Fprintf(&b, "GEMV-like and tiny-output shapes whose compulsory traffic, 4·(MK + KN + MN) bytes, is at least "+
			"twice the L2 cache (%d MB): effective bandwidth of the exported dispatch's kernel and of cuBLAS, and their "+
			"fractions of the DRAM peak (%.0f GB/s: 2 × memory clock × bus width). Exported: median %.0f %%, min %.0f %%, "+
			"%d of %d at 85 %% or more; cuBLAS: median %.0f %%, %d at 85 %% or more.\n\n", bw.MinBytes/1000000, bw.PeakGBps,
			100*bw.Exported.Median, 100*bw.Exported.Min, bw.Exported.AtLeast85, bw.Exported.Count, 100*bw.Cublas.Median,
			bw.Cublas.AtLeast85)
		var brows [][]string
		for _, x := range bw.Shapes {
			brows = append(brows, []string{x.Shape, x.Regime, x.Variant, fmt.Sprintf("%.0f", float64(x.Bytes)/1e6),
				fmt.Sprintf("%.0f", x.GBps), fmt.Sprintf("%.0f %%", 100*x.Fraction), fmt.Sprintf("%.0f", x.CublasGBps),
				fmt.Sprintf("%.0f %%", 100*x.CublasFraction)})
		}
		b.WriteString(Table([]string{"shape", "regime", "exported variant", "MB", "GB/s", "of peak", "cuBLAS GB/s", "cuBLAS of peak"}, brows))
		b.WriteString("\n")
	}
	if h := s.Holdout; h != nil {
		fmt.Fprintf(&b, "### Holdout: %d shapes measured apart on %s\n\n", len(h.Shapes), mdText(h.GPU))
		fmt.Fprintf(&b, "The exported dispatch (fitted on every corpus shape above) judged on problems no corpus holds, "+
			"every exportable kernel timed on each next to cuBLAS in the same run (`--holdout`): what it launches there "+
			"against the fastest of its kernels. Shapes whose launched variant the holdout did not time (left out of the totals): %d.\n\n", h.Untimed)
		b.WriteString(Table([]string{"dispatch", "shapes", "geomean", "min", "median", "below 0.9×"}, [][]string{
			tot("exported", h.Ratio), tot("fastest timed per shape", h.Best)}))
		b.WriteString("\n")
		var hrows [][]string
		for _, x := range h.Shapes {
			name, ratio := x.Variant, f3(x.Ratio)
			if x.Untimed {
				name, ratio = name+" (untimed)", "–"
			}
			hrows = append(hrows, []string{x.Shape, mdText(x.Source), x.Regime, name, ratio, x.BestVariant, f3(x.BestRatio)})
		}
		b.WriteString(Table([]string{"shape", "source", "regime", "exported variant", "ratio", "fastest variant", "fastest"}, hrows))
		b.WriteString("\n")
	}
	rows = nil
	for _, r := range s.Shapes {
		cvName, allName := r.VariantCV, r.Variant // variant names are C identifiers
		if r.UntimedCV {
			cvName += " (untimed)"
		}
		if r.Untimed {
			allName += " (untimed)"
		}
		rows = append(rows, []string{r.Shape, mdText(r.Source), r.Regime, fmt.Sprint(r.Fold), cvName, f3(r.RatioCV),
			allName, f3(r.Ratio), f3(r.BestRatio)})
	}
	b.WriteString(Table([]string{"shape", "source", "regime", "fold", "held-out variant", "ratio_cv", "exported variant",
		"ratio", "fastest"}, rows))
	return b.String()
}

func f3(x float64) string { return fmt.Sprintf("%.3f", x) }

// mdText keeps text from an input file from breaking a Markdown table line or injecting markup: one
// line, with the characters that start emphasis, code, links or HTML escaped (Table escapes '|').
func mdText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f:
			b.WriteByte(' ')
		case strings.ContainsRune("\\`*_[]<>~", r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
