package study

import (
	"fmt"
	"math"
	"strings"

	"tilegen/internal/orchestrator"
	"tilegen/internal/protocol"
	"tilegen/internal/report"
	"tilegen/internal/results"
)

var (
	seedNs = []int{512, 1024, 2048, 4096}
	seedWs = []int{4, 8, 16, 32}
)

// simpleFor is the naive ("simple") kernel the compare study pairs with tile width W: the seed
// launched it on W×W blocks; the catalog has naive 16×16 and 32×32 blocks, so W < 16 uses 16×16
// (a naive kernel's work per thread does not depend on W).
func simpleFor(w int) string {
	if w >= 16 {
		return fmt.Sprintf("naive_%dx%d", w, w)
	}
	return "naive_16x16"
}

// coalescedFor: the catalog has no coalesced W=4 (a 4×4 block is below a warp); "" marks it.
func coalescedFor(w int) string {
	if w < 8 {
		return ""
	}
	return fmt.Sprintf("coalesced_w%d", w)
}

func sharedFor(w int) string { return fmt.Sprintf("shared_w%d_pad0", w) }

func compareStudy() Study {
	kernels := []struct {
		label string
		of    func(int) string
	}{{"simple", simpleFor}, {"coalesced", coalescedFor}, {"shared A+B", sharedFor}}
	return Study{
		Name: "compare",
		Doc:  "simple vs coalesced vs shared A+B kernels for C(N×N) = A(N×W)·B(W×N) (seed 000)",
		Pairs: func() []orchestrator.Pair {
			var out []orchestrator.Pair
			for _, n := range seedNs {
				for _, w := range seedWs {
					for _, k := range kernels {
						if v := k.of(w); v != "" {
							out = append(out, orchestrator.Pair{Variant: v, Shape: sq(n, w)})
						}
					}
				}
			}
			return out
		},
		Render: func(b *strings.Builder, s *report.Set, out string) error {
			t := timesOf(s)
			b.WriteString("Simple = naive kernel (naive_16x16 for W < 16, naive_WxW otherwise); coalesced has no W = 4 " +
				"variant (a 4×4 block is half a warp), shown as n/a. K = W: each product is one tile deep.\n\n")
			for _, n := range seedNs {
				fmt.Fprintf(b, "### N = %d\n\n", n)
				var tr, sr, gr [][]string
				for _, w := range seedWs {
					sh := sq(n, w)
					base := t.ms(simpleFor(w), sh)
					trow, srow, grow := []string{fmt.Sprint(w)}, []string{fmt.Sprint(w)}, []string{fmt.Sprint(w)}
					for _, k := range kernels {
						v := k.of(w)
						ms := t.ms(v, sh)
						if v == "" || ms == 0 {
							trow, srow, grow = append(trow, "n/a"), append(srow, "n/a"), append(grow, "n/a")
							continue
						}
						trow = append(trow, report.MSf(ms))
						srow = append(srow, report.F(base/ms, 2)+"×")
						grow = append(grow, report.F(gflops(sh, ms), 1))
					}
					tr, sr, gr = append(tr, trow), append(sr, srow), append(gr, grow)
				}
				h := []string{"W", "simple ms", "coalesced ms", "shared A+B ms"}
				b.WriteString("Time (median ms):\n\n" + report.Table(h, tr) + "\n")
				b.WriteString("Speedup vs simple:\n\n" + report.Table([]string{"W", "simple", "coalesced", "shared A+B"}, sr) + "\n")
				b.WriteString("GFLOP/s:\n\n" + report.Table([]string{"W", "simple", "coalesced", "shared A+B"}, gr) + "\n")
			}
			b.WriteString("### Time over (N, W) per kernel\n\n")
			for _, k := range kernels {
				l := report.Line{Title: "compare: " + k.label + " kernel, C(N×N) = A(N×W)·B(W×N); whiskers: 95 % CI of the median",
					XLabel: "N (log scale)", YLabel: "median time (ms, log scale)", LogX: true, LogY: true, XTicks: itoa(seedNs)}
				for _, w := range seedWs {
					v := k.of(w)
					if v == "" {
						continue
					}
					sr := report.Series{Name: fmt.Sprintf("W=%d (%s)", w, v)}
					for _, n := range seedNs {
						t.add(&sr, float64(n), v, sq(n, w), false)
					}
					l.Series = append(l.Series, sr)
				}
				file, err := l.Draw(out, "time_"+strings.ReplaceAll(strings.ReplaceAll(k.label, " ", "_"), "+", ""))
				if err != nil {
					return err
				}
				b.WriteString(report.Image(k.label+" time", file) + "\n")
			}
			return nil
		},
	}
}

func squareStudy() Study {
	return Study{
		Name: "square", Doc: "shared A+B tiles on square N×N·N×N for W ∈ {4, 8, 16, 32} (seed 000/003)", Cublas: true,
		Pairs: func() []orchestrator.Pair {
			var names []string
			for _, w := range seedWs {
				names = append(names, sharedFor(w))
			}
			var shapes []protocol.Shape
			for _, n := range seedNs {
				shapes = append(shapes, sq(n, n))
			}
			return pairs(names, shapes)
		},
		Render: func(b *strings.Builder, s *report.Set, out string) error {
			t := timesOf(s)
			h := []string{"N"}
			for _, w := range seedWs {
				h = append(h, fmt.Sprintf("W=%d", w))
			}
			var tr, gr, sr, best [][]string
			var prevBest float64
			for _, n := range seedNs {
				sh := sq(n, n)
				trow, grow, srow := []string{fmt.Sprint(n)}, []string{fmt.Sprint(n)}, []string{fmt.Sprint(n)}
				base := t.ms(sharedFor(4), sh)
				bw, bms := 0, math.Inf(1)
				for _, w := range seedWs {
					ms := t.ms(sharedFor(w), sh)
					trow = append(trow, report.MSf(ms))
					grow = append(grow, report.F(gflops(sh, ms), 1))
					sp := "–"
					if ms > 0 && base > 0 {
						sp = report.F(base/ms, 2) + "×"
					}
					srow = append(srow, sp)
					if ms > 0 && ms < bms {
						bw, bms = w, ms
					}
				}
				tr, gr, sr = append(tr, trow), append(gr, grow), append(sr, srow)
				growth := "–"
				if prevBest > 0 && bw > 0 {
					growth = report.F(bms/prevBest, 2) + "× (work ×8)"
				}
				cub := t.ms(results.CublasName, sh)
				best = append(best, []string{fmt.Sprint(n), fmt.Sprint(bw), report.MSf(bms), report.F(gflops(sh, bms), 1),
					growth, report.MSf(cub), report.Ratio(cub, bms)})
				prevBest = bms
			}
			b.WriteString("### Time (median ms)\n\n" + report.Table(h, tr) + "\n")
			b.WriteString("### GFLOP/s\n\n" + report.Table(h, gr) + "\n")
			b.WriteString("### Speedup vs W = 4, per N\n\n" + report.Table(h, sr) + "\n")
			b.WriteString("### Across N at the best W\n\nTime growth from the previous N (the work grows 8× per doubling; " +
				"less than 8× means the larger problem uses the GPU better); ratio = cuBLAS ms / ms (> 1: faster than cuBLAS).\n\n")
			b.WriteString(report.Table([]string{"N", "best W", "ms", "GFLOP/s", "time vs previous N", "cuBLAS ms", "ratio"}, best) + "\n")
			for _, c := range []struct {
				base, ylabel string
				gflops, logY bool
			}{
				{"time", "median time (ms, log scale)", false, true},
				{"gflops", "GFLOP/s", true, false},
			} {
				l := report.Line{Title: "square: shared A+B tiles, N×N·N×N; whiskers: 95 % CI of the median", XLabel: "N (log scale)",
					YLabel: c.ylabel, LogX: true, LogY: c.logY, XTicks: itoa(seedNs)}
				for _, w := range append(seedWs, 0) {
					v, name := sharedFor(w), fmt.Sprintf("W=%d", w)
					if w == 0 {
						v, name = results.CublasName, "cuBLAS"
					}
					sr := report.Series{Name: name}
					for _, n := range seedNs {
						t.add(&sr, float64(n), v, sq(n, n), c.gflops)
					}
					l.Series = append(l.Series, sr)
				}
				file, err := l.Draw(out, c.base)
				if err != nil {
					return err
				}
				b.WriteString(report.Image("square "+c.base, file) + "\n")
			}
			return nil
		},
	}
}

var rectShapes = []protocol.Shape{{M: 224, N: 256, K: 192}, {M: 200, N: 256, K: 100}, {M: 1041, N: 1247, K: 139},
	{M: 535, N: 792, K: 414}}

var rectVariants = []string{"naive_16x16", "coalesced_w32", "shared_w16_pad0", "shared_w32_pad0", "micro1d_t64_r16",
	"coarse_w32_g4_pf1"}

func rectStudy() Study {
	return Study{
		Name: "rect", Doc: "rectangular M×N×K and arbitrary sizes with boundary handling, verified (seeds 001/003)", Cublas: true,
		Pairs: func() []orchestrator.Pair { return pairs(rectVariants, rectShapes) },
		Render: func(b *strings.Builder, s *report.Set, out string) error {
			t := timesOf(s)
			b.WriteString("Shapes are M×N×K: A is M×K, B is K×N (200×256×100 is the seed's 200×100·100×256). None but " +
				"224×256×192 is a multiple of the tiles, so every kernel runs its boundary code. Verification: the β = 0 " +
				"check and a sub-matrix check (random α, β ≠ 0, padded leading dimensions, sentinel padding).\n\n")
			verified := map[string]map[protocol.Shape]string{}
			for _, r := range s.Records {
				if verified[r.Variant] == nil {
					verified[r.Variant] = map[protocol.Shape]string{}
				}
				switch {
				case r.Status == results.StatusOK:
					worst := 0.0
					for _, v := range r.Verify {
						worst = math.Max(worst, v.NormRel)
					}
					verified[r.Variant][r.Shape] = fmt.Sprintf("pass (%d checks, ‖ΔC‖/‖C‖ ≤ %.1e)", len(r.Verify), worst)
				default:
					verified[r.Variant][r.Shape] = r.Status + ": " + r.Reason
				}
			}
			names := append(append([]string{}, rectVariants...), results.CublasName)
			h := []string{"shape"}
			h = append(h, names...)
			var tr, gr, vr [][]string
			bars := gflopsBars("rect: GFLOP/s per shape", rectShapes, names, t)
			for _, sh := range rectShapes {
				ss := results.ShapeString(sh)
				trow, grow := []string{ss}, []string{ss}
				for _, v := range names {
					trow = append(trow, report.MSf(t.ms(v, sh)))
					grow = append(grow, report.F(gflops(sh, t.ms(v, sh)), 1))
					if v != results.CublasName {
						vr = append(vr, []string{ss, v, verified[v][sh]})
					}
				}
				tr, gr = append(tr, trow), append(gr, grow)
			}
			b.WriteString("### Time (median ms)\n\n" + report.Table(h, tr) + "\n")
			b.WriteString("### GFLOP/s\n\n" + report.Table(h, gr) + "\n")
			file, err := bars.Draw(out, "gflops")
			if err != nil {
				return err
			}
			b.WriteString(report.Image("rect GFLOP/s", file) + "\n")
			b.WriteString("### Verification\n\n" + report.Table([]string{"shape", "variant", "result"}, vr) + "\n")
			return nil
		},
	}
}

var granNs = []int{1000, 2000, 4096}

type granCfg struct {
	label string
	of    func(w int) string
}

var granCfgs = []granCfg{
	{"1 col", sharedFor},
	{"2 cols", func(w int) string { return fmt.Sprintf("coarse_w%d_g2_pf0", w) }},
	{"2 cols + prefetch", func(w int) string { return fmt.Sprintf("coarse_w%d_g2_pf1", w) }},
	{"4 cols", func(w int) string { return fmt.Sprintf("coarse_w%d_g4_pf0", w) }},
	{"4 cols + prefetch", func(w int) string { return fmt.Sprintf("coarse_w%d_g4_pf1", w) }},
}

var granWs = []int{8, 16, 32}

func granularityStudy() Study {
	return Study{
		Name: "granularity", Doc: "1, 2 and 4 output columns per thread, with and without register prefetch (seed 001)", Cublas: true,
		Pairs: func() []orchestrator.Pair {
			var names []string
			for _, w := range granWs {
				for _, c := range granCfgs {
					names = append(names, c.of(w))
				}
			}
			var shapes []protocol.Shape
			for _, n := range granNs {
				shapes = append(shapes, sq(n, n))
			}
			return pairs(names, shapes)
		},
		Render: func(b *strings.Builder, s *report.Set, out string) error {
			t := timesOf(s)
			b.WriteString("A W×W block computes a W × G·W tile: each thread G columns, reusing its A value G times; " +
				"prefetch loads the next tiles into registers while the current ones are used. 1 col = shared_wW_pad0.\n\n")
			h := []string{"W"}
			for _, c := range granCfgs {
				h = append(h, c.label)
			}
			for _, n := range granNs {
				sh := sq(n, n)
				var tr, sr [][]string
				for _, w := range granWs {
					trow, srow := []string{fmt.Sprint(w)}, []string{fmt.Sprint(w)}
					base := t.ms(sharedFor(w), sh)
					for _, c := range granCfgs {
						ms := t.ms(c.of(w), sh)
						trow = append(trow, report.MSf(ms))
						sp := "–"
						if ms > 0 && base > 0 {
							sp = report.F(base/ms, 2) + "×"
						}
						srow = append(srow, sp)
					}
					tr, sr = append(tr, trow), append(sr, srow)
				}
				fmt.Fprintf(b, "### N = %d (cuBLAS %s ms)\n\nTime (median ms):\n\n%s\nSpeedup vs 1 column:\n\n%s\n",
					n, report.MSf(t.ms(results.CublasName, sh)), report.Table(h, tr), report.Table(h, sr))
			}
			for _, w := range granWs {
				l := report.Line{Title: fmt.Sprintf("granularity: W=%d, columns per thread; whiskers: 95 %% CI of the median", w), XLabel: "N (log scale)",
					YLabel: "GFLOP/s", LogX: true, XTicks: itoa(granNs)}
				for _, c := range granCfgs {
					sr := report.Series{Name: c.label + " (" + c.of(w) + ")"}
					for _, n := range granNs {
						t.add(&sr, float64(n), c.of(w), sq(n, n), true)
					}
					l.Series = append(l.Series, sr)
				}
				file, err := l.Draw(out, fmt.Sprintf("gflops_w%d", w))
				if err != nil {
					return err
				}
				b.WriteString(report.Image(fmt.Sprintf("granularity W=%d", w), file) + "\n")
			}
			return nil
		},
	}
}

var microShapes = []protocol.Shape{sq(1024, 1024), sq(2048, 2048), sq(4096, 4096), sq(1000, 1000), sq(2000, 2000),
	{M: 1041, N: 1247, K: 139}}

type microPair struct{ block, naive, micro string }

var microPairs = []microPair{{"32×8", "naive_32x8", "micro1d_t32_r4"}, {"64×4", "naive_64x4", "micro1d_t64_r16"}}

var microSquare = []string{"shared_w16_pad0", "shared_w32_pad0"}

func microtileStudy() Study {
	return Study{
		Name: "microtile", Doc: "square blocks vs 32×8 and 64×4 blocks with 1D micro-tiles vs the naive kernel on the same blocks (seed 002)", Cublas: true,
		Pairs: func() []orchestrator.Pair {
			names := append([]string{}, microSquare...)
			for _, p := range microPairs {
				names = append(names, p.naive, p.micro)
			}
			return pairs(names, microShapes)
		},
		Render: func(b *strings.Builder, s *report.Set, out string) error {
			t := timesOf(s)
			b.WriteString("micro1d_t32_r4 runs a 32×32 tile on a 32×8 block (4 rows per thread), micro1d_t64_r16 a 64×64 tile " +
				"on a 64×4 block (16 rows per thread); naive_32x8 and naive_64x4 use the same block shapes with one output " +
				"per thread. 1000, 2000 and 1041×1247×139 are not multiples of any tile.\n\n")
			names := append([]string{}, microSquare...)
			for _, p := range microPairs {
				names = append(names, p.naive, p.micro)
			}
			names = append(names, results.CublasName)
			h := append([]string{"shape"}, names...)
			var tr, sr [][]string
			for _, sh := range microShapes {
				ss := results.ShapeString(sh)
				trow := []string{ss}
				for _, v := range names {
					trow = append(trow, report.MSf(t.ms(v, sh)))
				}
				srow := []string{ss}
				for _, p := range microPairs {
					a, m := t.ms(p.naive, sh), t.ms(p.micro, sh)
					sp := "–"
					if a > 0 && m > 0 {
						sp = report.F(a/m, 2) + "×"
					}
					srow = append(srow, sp)
				}
				tr, sr = append(tr, trow), append(sr, srow)
			}
			b.WriteString("### Time (median ms)\n\n" + report.Table(h, tr) + "\n")
			b.WriteString("### Micro-tile speedup over naive on the same block\n\n" +
				report.Table([]string{"shape", "32×8 block", "64×4 block"}, sr) + "\n")
			bars := gflopsBars("microtile: GFLOP/s per shape", microShapes, names, t)
			file, err := bars.Draw(out, "gflops")
			if err != nil {
				return err
			}
			b.WriteString(report.Image("microtile GFLOP/s", file) + "\n")
			return nil
		},
	}
}
