package study

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"tilegen/internal/cpugemm"
	"tilegen/internal/orchestrator"
	"tilegen/internal/protocol"
	"tilegen/internal/report"
	"tilegen/internal/verify"
)

var cpuGPUNs = []int{32, 64, 128, 256, 512, 1024, 2048, 4096}

// The GPU kernels of cpu-gpu: the seed's naive kernel, shared A+B tiles, and 4 outputs per thread
// (a 16×16 block computing a 16×64 tile).
var cpuGPUKernels = []struct{ label, variant string }{
	{"GPU naive", "naive_16x16"}, {"GPU shared", "shared_w16_pad0"}, {"GPU 4 outputs/thread", "coarse_w16_g4_pf0"},
}

// CPU kernel names in breakdown.jsonl.
const (
	cpuNaive   = "cpu_naive"
	cpuBlocked = "cpu_blocked"
)

func cpuGPUStudy() Study {
	return Study{
		Name: "cpu-gpu",
		Doc:  "CPU naive and blocked-parallel vs GPU naive, shared and 4-outputs-per-thread, N = 32…4096, end to end (seed 004)",
		Pairs: func() []orchestrator.Pair {
			var names []string
			for _, k := range cpuGPUKernels {
				names = append(names, k.variant)
			}
			var shapes []protocol.Shape
			for _, n := range cpuGPUNs {
				shapes = append(shapes, sq(n, n))
			}
			return pairs(names, shapes)
		},
		Cublas: true,
		Extra:  cpuGPUExtra,
		Render: cpuGPURender,
	}
}

// cpuGPUExtra times the GPU kernels end to end through the worker and the CPU kernels in this
// process, and writes breakdown.jsonl.
func cpuGPUExtra(sess *orchestrator.Session, out string, opt Options, log func(string)) error {
	var bds []report.Breakdown
	for _, n := range cpuGPUNs {
		sh := sq(n, n)
		for _, k := range cpuGPUKernels {
			resp, err := sess.Breakdown(k.variant, sh, opt.Runs)
			if err != nil {
				return err
			}
			bds = append(bds, report.Breakdown{Name: k.variant, Shape: sh, Where: "gpu", Phase: *resp.Breakdown})
		}
		log(fmt.Sprintf("cpu-gpu: GPU breakdowns at N=%d done", n))
	}
	for _, n := range cpuGPUNs {
		for _, c := range []struct {
			name  string
			limit int
			run   func(a, b, c []float32)
		}{
			{cpuNaive, opt.CPUNaiveMax, func(a, b, c []float32) { cpugemm.Naive(n, n, n, a, n, b, n, c, n) }},
			{cpuBlocked, opt.CPUBlockedMax, func(a, b, c []float32) { cpugemm.Blocked(n, n, n, a, n, b, n, c, n, opt.Workers) }},
		} {
			if n > c.limit {
				continue
			}
			bd := cpuBreakdown(c.name, n, opt, c.run)
			bds = append(bds, bd)
			log(fmt.Sprintf("cpu-gpu: %s N=%d: %d runs, mean %.3g ms", c.name, n, bd.Phase.Runs, report.Mean(bd.Phase.KernelMS)))
		}
	}
	f, err := os.Create(filepath.Join(out, "breakdown.jsonl"))
	if err != nil {
		return fmt.Errorf("breakdown: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, bd := range bds {
		if err := enc.Encode(bd); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// cpuBreakdown times allocation (make of A, B, C) and compute of a CPU kernel. Runs shrink (to
// at least 3) when --runs of them would exceed the per-point budget; the note says so.
func cpuBreakdown(name string, n int, opt Options, run func(a, b, c []float32)) report.Breakdown {
	bd := report.Breakdown{Name: name, Shape: sq(n, n), Where: "cpu"}
	r := verify.Rand(uint64(n))
	runs := opt.Runs
	for i := 0; i < runs; i++ {
		t := time.Now()
		a, b, c := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
		bd.Phase.AllocMS = append(bd.Phase.AllocMS, msSince(t))
		verify.Uniform(r, a)
		verify.Uniform(r, b)
		t = time.Now()
		run(a, b, c)
		ms := msSince(t)
		bd.Phase.KernelMS = append(bd.Phase.KernelMS, ms)
		if i == 0 && opt.CPUBudgetMS > 0 && ms*float64(runs) > opt.CPUBudgetMS {
			runs = max(3, int(opt.CPUBudgetMS/ms))
			if runs < opt.Runs {
				bd.Note = fmt.Sprintf("%d runs (of %d: the point's time budget)", runs, opt.Runs)
			}
		}
	}
	bd.Phase.Runs = len(bd.Phase.KernelMS)
	return bd
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Nanoseconds()) / 1e6 }

// column is one kernel of the cpu-gpu tables.
type column struct{ label, name string }

func cpuGPUColumns() []column {
	cols := []column{{"CPU naive", cpuNaive}, {"CPU blocked", cpuBlocked}}
	for _, k := range cpuGPUKernels {
		cols = append(cols, column{k.label, k.variant})
	}
	return cols
}

// phases of a breakdown as tables and charts show them; transfer is both copies, total every phase.
var cpuGPUPhases = []struct {
	name, title string
	of          func(p protocol.BreakdownResult, i int) float64
}{
	{"compute", "compute time", func(p protocol.BreakdownResult, i int) float64 { return p.KernelMS[i] }},
	{"alloc", "allocation time", func(p protocol.BreakdownResult, i int) float64 { return at(p.AllocMS, i) }},
	{"transfer", "transfer time (host→device + device→host)", func(p protocol.BreakdownResult, i int) float64 {
		return at(p.HtoDMS, i) + at(p.DtoHMS, i)
	}},
	{"total", "total time (alloc + transfers + compute + free)", func(p protocol.BreakdownResult, i int) float64 {
		return at(p.AllocMS, i) + at(p.HtoDMS, i) + p.KernelMS[i] + at(p.DtoHMS, i) + at(p.FreeMS, i)
	}},
}

func at(xs []float64, i int) float64 {
	if i < len(xs) {
		return xs[i]
	}
	return 0
}

func cpuGPURender(b *strings.Builder, s *report.Set, out string) error {
	bd := map[string]map[int]report.Breakdown{}
	runs := 0
	for _, x := range s.Breakdowns {
		if bd[x.Name] == nil {
			bd[x.Name] = map[int]report.Breakdown{}
		}
		bd[x.Name][x.Shape.M] = x
		if x.Where == "gpu" {
			runs = x.Phase.Runs
		}
	}
	fmt.Fprintf(b, "Square N×N·N×N. Each cell is the mean ± sample standard deviation over %d end-to-end runs (GPU) "+
		"or the runs noted (CPU). GPU runs: cuMemAlloc of A, B and C; copy A and B to the device from pageable host "+
		"memory; the kernel (event-timed); copy C back; free. Compute is the kernel alone. CPU: allocation is the "+
		"make of A, B and C; compute runs internal/cpugemm (naive: one goroutine, the textbook i-j-k loop; blocked: "+
		"32×128 tiles of C over 128-deep panels of B on every core); the CPU has no transfers. CPU naive runs up to "+
		"N = %d and CPU blocked up to N = %d: beyond, one point would take minutes (naive in Go reaches well under "+
		"1 GFLOP/s once B's columns fall out of cache), shown as *skipped*.\n\n",
		runs, maxN(bd[cpuNaive]), maxN(bd[cpuBlocked]))
	cols := cpuGPUColumns()
	h := []string{"N"}
	for _, c := range cols {
		h = append(h, c.label+" ms")
	}
	for _, ph := range cpuGPUPhases {
		var rows [][]string
		l := report.Line{Title: "cpu-gpu: " + ph.title + ", mean; whiskers: ± one standard deviation", XLabel: "N (log scale)",
			YLabel: ph.name + " (ms, log scale)", LogX: true, LogY: true, XTicks: itoa(cpuGPUNs)}
		for _, n := range cpuGPUNs {
			row := []string{fmt.Sprint(n)}
			for _, c := range cols {
				x, ok := bd[c.name][n]
				switch {
				case !ok:
					row = append(row, "skipped")
				case x.Where == "cpu" && ph.name == "transfer":
					row = append(row, "n/a")
				default:
					m, sd := meanStd(x.Phase, ph.of)
					cell := report.Sig(m, 3) + " ± " + report.Sig(sd, 2)
					if x.Note != "" {
						cell += " (" + x.Note + ")"
					}
					row = append(row, cell)
				}
			}
			rows = append(rows, row)
		}
		for _, c := range cols {
			sr := report.Series{Name: c.label}
			for _, n := range cpuGPUNs {
				x, ok := bd[c.name][n]
				if !ok || (x.Where == "cpu" && ph.name == "transfer") {
					continue
				}
				m, sd := meanStd(x.Phase, ph.of)
				sr.X, sr.Y, sr.Lo, sr.Hi = append(sr.X, float64(n)), append(sr.Y, m), append(sr.Lo, m-sd), append(sr.Hi, m+sd)
			}
			if len(sr.X) > 0 {
				l.Series = append(l.Series, sr)
			}
		}
		fmt.Fprintf(b, "### %s\n\n%s\n", strings.ToUpper(ph.title[:1])+ph.title[1:], report.Table(h, rows))
		file, err := l.Draw(out, ph.name)
		if err != nil {
			return err
		}
		b.WriteString(report.Image(ph.title, file) + "\n")
	}
	// Where the time goes at the largest N each kernel ran.
	st := report.Stacked{Title: "cpu-gpu: where the time goes (mean per run, largest N each kernel ran; total in brackets)",
		XLabel: "share of the run (%)", Phases: []string{"alloc", "host→device", "compute", "device→host", "free"},
		Percent: true, Unit: "ms"}
	st.Values = make([][]float64, len(st.Phases))
	for _, c := range cols {
		n := maxN(bd[c.name])
		if n == 0 {
			continue
		}
		p := bd[c.name][n].Phase
		st.Labels = append(st.Labels, fmt.Sprintf("%s N=%d", c.label, n))
		for i, xs := range [][]float64{p.AllocMS, p.HtoDMS, p.KernelMS, p.DtoHMS, p.FreeMS} {
			st.Values[i] = append(st.Values[i], report.Mean(xs))
		}
	}
	file, err := st.Draw(out, "breakdown")
	if err != nil {
		return err
	}
	b.WriteString("### Where the time goes\n\n" + report.Image("breakdown", file) + "\n")
	return nil
}

func maxN(m map[int]report.Breakdown) int {
	best := 0
	for n := range m {
		best = max(best, n)
	}
	return best
}

func meanStd(p protocol.BreakdownResult, of func(protocol.BreakdownResult, int) float64) (float64, float64) {
	xs := make([]float64, len(p.KernelMS))
	for i := range xs {
		xs[i] = of(p, i)
	}
	m, sd := report.Mean(xs), report.Std(xs)
	if math.IsNaN(sd) {
		sd = 0
	}
	return m, sd
}
