package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"tilegen/internal/ooc"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
)

// hybridFlags are hybrid's own flags.
type hybridFlags struct {
	beyondFlags
	cpuRows, engine, sweep string
	workers, reps, probe   int
	compare, renderOnly    bool
}

func runHybrid(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("hybrid", "--shape MxNxK --cpu-rows F|auto [flags]", stdout)
	var h hybridFlags
	fs.AddFlagSet(h.beyondFlags.flags(""))
	fs.StringVar(&h.cpuRows, "cpu-rows", "auto", "rows `F` the CPU computes (the last F rows of C), or auto")
	fs.StringVar(&h.engine, "engine", "auto", "CPU SGEMM `name`: blocked, gonum, or auto (the faster in the probe)")
	fs.IntVar(&h.workers, "cpu-workers", 0, "goroutines of the blocked CPU SGEMM (`n`; 0: GOMAXPROCS-1, leaving one for the GPU side)")
	fs.IntVar(&h.reps, "reps", 5, "timed runs per F after one warm-up; the median is reported (`n`)")
	fs.IntVar(&h.probe, "probe-rows", 256, "rows each CPU engine is timed on to measure its rate (`n`)")
	fs.BoolVar(&h.compare, "compare-gpu-only", false, "also compute all rows on the GPU and compare")
	fs.StringVar(&h.sweep, "sweep", "", "run a sweep over F instead: comma-separated `list` of F, or waves (the wave candidates)")
	fs.BoolVar(&h.renderOnly, "render-only", false, "only redraw the sweep chart (hybrid.png, .svg) from --out's result.json (no GPU)")
	atLeast(fs, ">=0", "cpu-workers")
	atLeast(fs, ">=1", "reps", "probe-rows")
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	if h.renderOnly {
		return renderHybrid(h.out, stdout)
	}
	if fs.NArg() > 0 || h.shape == "" {
		return usageErr("hybrid", "want --shape MxNxK and no arguments")
	}
	h.settle(fs)
	return hybrid(&h, stdout)
}

// runStudyHybrid is the F sweep as a study: the wave candidates plus fixed fractions of M.
func runStudyHybrid(args []string, stdout, stderr io.Writer) error {
	return runHybrid(append([]string{"--sweep", "waves", "--out", "results/hybrid"}, args...), stdout, stderr)
}

func hybrid(h *hybridFlags, stdout io.Writer) error {
	s, err := results.ParseShape(h.shape)
	if err != nil {
		return usageErr("hybrid", "--shape: %v", err)
	}
	k, why, err := pickKernel(h.generated, h.variant, h.results, s)
	if err != nil {
		return err
	}
	why = h.why(why)
	if err := ooc.HostFits(s.M, s.N, s.K); err != nil {
		return err
	}
	fixedF := -1
	if h.cpuRows != "auto" {
		if fixedF, err = strconv.Atoi(h.cpuRows); err != nil || fixedF < 0 || fixedF > s.M {
			return usageErr("hybrid", "--cpu-rows %q: want auto or an integer in [0, M=%d]", h.cpuRows, s.M)
		}
	}
	if h.engine != "auto" {
		if _, err := ooc.Engine(h.engine); err != nil {
			return err
		}
	}
	wc, err := startWorker(h.worker, h.device)
	if err != nil {
		return err
	}
	defer wc.Close()
	base := protocol.HybridRequest{Seed: h.seed, Workers: h.workers, Reps: h.reps, Samples: h.samples,
		FullCheckMaxFlops: h.fullCheck, TolFactor: h.tolFactor, CompareGPUOnly: h.compare}
	call := func(f int, engine string, probe int) (*protocol.HybridResult, error) {
		hr := base
		hr.CPURows, hr.Engine, hr.ProbeRows = f, engine, probe
		resp, err := wc.Call(protocol.Request{Op: protocol.OpHybrid, Kernel: k, Shape: s, Hybrid: &hr}, h.timeout)
		if err != nil {
			return nil, err
		}
		if resp.HybridResult == nil {
			return nil, fmt.Errorf("worker answered without a hybrid result")
		}
		if r := resp.HybridResult; !r.Pass {
			return r, fmt.Errorf("F=%d: verification failed: %s", f, r.Reason)
		}
		return resp.HybridResult, nil
	}
	// The probe: all rows on the GPU, and every CPU engine's rate.
	probeEngine := h.engine
	if probeEngine == "auto" {
		probeEngine = ooc.EngineBlocked
	}
	gpuOnly, err := call(0, probeEngine, h.probe)
	if err != nil {
		return err
	}
	var lines []string
	lines = append(lines, fmt.Sprintf("hybrid %s with %s (%s) on %s", results.ShapeString(s), k.Variant.Name, why, wc.Device().Name))
	for _, p := range gpuOnly.Probe {
		lines = append(lines, fmt.Sprintf("CPU engine %-8s %.2f GFLOP/s (%d rows in %.1f ms)", p.Engine, p.GFLOPS, p.Rows, p.MS))
	}
	engine, rate := ooc.PickEngine(gpuOnly.Probe, h.engine)
	lines = append(lines, fmt.Sprintf("CPU engine used: %s", engine))
	model := ooc.NewGPUModel(s, &k.Variant, gpuOnly, rate)
	fs := []int{fixedF}
	switch {
	case h.sweep == "waves":
		fs = ooc.SweepWaves(model)
	case h.sweep != "":
		fs = nil
		for _, x := range strings.Split(h.sweep, ",") {
			f, err := strconv.Atoi(strings.TrimSpace(x))
			if err != nil || f < 0 || f > s.M {
				return usageErr("hybrid", "--sweep %q: want integers in [0, M=%d] or waves", h.sweep, s.M)
			}
			fs = append(fs, f)
		}
		fs = ooc.UniqueSorted(fs, s.M, 1000)
	case fixedF < 0:
		f, why := ooc.PlanF(model)
		lines = append(lines, why...)
		fs = []int{f}
	}
	var rows []*protocol.HybridResult
	for _, f := range fs {
		r := gpuOnly
		if f != 0 || engine != probeEngine {
			if r, err = call(f, engine, 0); err != nil {
				return err
			}
		}
		rows = append(rows, r)
	}
	if fixedF >= 0 || h.sweep != "" || len(rows) == 0 || rows[0].CPURows != 0 {
		rows = append([]*protocol.HybridResult{gpuOnly}, rows...)
		rows = ooc.Dedupe(rows)
	}
	table := hybridTable(s, rows, gpuOnly.OverallMS)
	text := strings.Join(lines, "\n") + "\n\n" + table
	if h.sweep != "" {
		text += "\n" + asciiChart(rows)
	}
	fmt.Fprint(stdout, text)
	if h.out != "" {
		if err := writeOut(h.out, struct {
			Device  *protocol.Device         `json:"device"`
			Shape   protocol.Shape           `json:"shape"`
			Variant string                   `json:"variant"`
			Rows    []*protocol.HybridResult `json:"rows"`
		}{wc.Device(), s, k.Variant.Name, rows}, text); err != nil {
			return err
		}
		if h.sweep != "" {
			if _, err := drawHybrid(h.out, hybridResult{wc.Device(), s, k.Variant.Name, rows}); err != nil {
				return err
			}
		}
	}
	return nil
}

// hybridTable is the seed's table: per F the kernel, transfer, GPU total, CPU and overall times.
func hybridTable(s protocol.Shape, rows []*protocol.HybridResult, base float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%6s %8s %6s %10s %12s %10s %10s %11s %8s %6s\n", "F", "GPU rows", "waves", "kernel ms", "transfer ms",
		"GPU ms", "CPU ms", "overall ms", "speedup", "check")
	for _, r := range rows {
		waves := "-"
		if r.BlocksPerSM > 0 && r.SMs > 0 {
			waves = strconv.Itoa(ooc.Waves(r.Blocks, r.SMs*r.BlocksPerSM))
		}
		chk := "ok"
		if !r.Pass {
			chk = "FAIL"
		}
		fmt.Fprintf(&b, "%6d %8d %6s %10.3f %12.3f %10.3f %10.3f %11.3f %7.3fx %6s\n", r.CPURows, r.GPURows, waves,
			r.KernelMS, r.H2DMS+r.D2HMS, r.GPUMS, r.CPUMS, r.OverallMS, base/r.OverallMS, chk)
	}
	fmt.Fprintf(&b, "(%s; transfer = host→device A rows and B + device→host C rows, event-timed; overall = wall clock of both parts; median of the runs)\n",
		results.ShapeString(s))
	return b.String()
}

// asciiChart draws overall, GPU and CPU time against F as horizontal bars.
func asciiChart(rows []*protocol.HybridResult) string {
	top := 0.0
	for _, r := range rows {
		top = math.Max(top, math.Max(r.OverallMS, math.Max(r.GPUMS, r.CPUMS)))
	}
	var b strings.Builder
	b.WriteString("time against F (G = GPU part, C = CPU part, # = overall)\n")
	bar := func(ms float64, c string) string { return strings.Repeat(c, int(math.Round(50*ms/top))) }
	for _, r := range rows {
		fmt.Fprintf(&b, "F=%-6d G %-50s %.3f\n", r.CPURows, bar(r.GPUMS, "="), r.GPUMS)
		fmt.Fprintf(&b, "%8s C %-50s %.3f\n", "", bar(r.CPUMS, "-"), r.CPUMS)
		fmt.Fprintf(&b, "%8s # %-50s %.3f\n", "", bar(r.OverallMS, "#"), r.OverallMS)
	}
	return b.String()
}
