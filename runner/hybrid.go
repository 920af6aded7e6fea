package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"tilegen/internal/ooc"
	"tilegen/internal/orchestrator"
	"tilegen/internal/protocol"
)

// gpuModel predicts the GPU part of a hybrid product on G rows from an all-GPU run: kernel time
// scales with the waves of thread blocks (a partial wave costs a whole one), copies with bytes.
type gpuModel struct {
	M, N, K                int
	TileRows, TileCols     int
	SMs, BlocksPerSM       int
	KernelMS, H2DMS, D2HMS float64 // measured with G = M
	CPUGFLOPS              float64
}

// waves is the number of waves of thread blocks the kernel needs for G rows.
func (g gpuModel) waves(rows int) int {
	if rows <= 0 {
		return 0
	}
	blocks := ceilDiv(rows, g.TileRows) * ceilDiv(g.N, g.TileCols)
	return ceilDiv(blocks, max(g.SMs*g.BlocksPerSM, 1))
}

func (g gpuModel) gpuMS(rows int) float64 {
	if rows <= 0 {
		return 0
	}
	w0 := float64(g.waves(g.M))
	kern := g.KernelMS * float64(g.waves(rows)) / w0
	ab := float64(rows)*float64(g.K) + float64(g.K)*float64(g.N)
	h2d := g.H2DMS * ab / (float64(g.M)*float64(g.K) + float64(g.K)*float64(g.N))
	return h2d + kern + g.D2HMS*float64(rows)/float64(g.M)
}

func (g gpuModel) cpuMS(rows int) float64 {
	return 2 * float64(rows) * float64(g.N) * float64(g.K) / (g.CPUGFLOPS * 1e6)
}

// waveCandidates lists, for every count of waves below the all-GPU count, the CPU rows F that
// remove exactly the waves above it (the largest GPU part that fits in w waves); F = 0 first.
// Any F between two candidates buys no kernel time: the GPU still runs the same number of waves.
func (g gpuModel) waveCandidates() []int {
	out := []int{0}
	perWave := g.SMs * g.BlocksPerSM
	bandsN := ceilDiv(g.N, g.TileCols)
	for w := g.waves(g.M) - 1; w >= 0; w-- {
		rows := min(g.M, (w*perWave/bandsN)*g.TileRows)
		if f := g.M - rows; f > out[len(out)-1] {
			out = append(out, f)
		}
	}
	return out
}

// planF picks the CPU rows: the wave candidate with the smallest predicted overall time among those
// where the CPU part finishes no later than the GPU part; the lines explain the choice.
func planF(g gpuModel) (int, []string) {
	bandsN := ceilDiv(g.N, g.TileCols)
	perWave := g.SMs * g.BlocksPerSM
	rowsPerWave := float64(perWave) / float64(bandsN) * float64(g.TileRows)
	lines := []string{
		fmt.Sprintf("GPU: %d rows = %d waves of %d blocks (%d SMs × %d blocks/SM; a wave covers %.1f rows of %d-row tiles across %d column tiles)",
			g.M, g.waves(g.M), perWave, g.SMs, g.BlocksPerSM, rowsPerWave, g.TileRows, bandsN),
		fmt.Sprintf("measured: all-GPU kernel %.3f ms, copies %.3f + %.3f ms; CPU %.1f GFLOP/s", g.KernelMS, g.H2DMS, g.D2HMS, g.CPUGFLOPS),
		"only F that remove a whole wave shorten the kernel (rows inside a wave buy nothing); candidates:",
	}
	best, bestT := 0, g.gpuMS(g.M)
	for _, f := range g.waveCandidates() {
		gpu, cpu := g.gpuMS(g.M-f), g.cpuMS(f)
		verdict := ""
		switch {
		case f == 0:
			verdict = "all-GPU baseline"
		case cpu > gpu:
			verdict = "rejected: the CPU would finish after the GPU"
		case math.Max(gpu, cpu) < bestT:
			verdict = "better"
		default:
			verdict = "no gain"
		}
		lines = append(lines, fmt.Sprintf("  F=%-6d GPU rows %-6d waves %-4d predicted GPU %.3f ms, CPU %.3f ms: %s",
			f, g.M-f, g.waves(g.M-f), gpu, cpu, verdict))
		if f > 0 && cpu <= gpu && math.Max(gpu, cpu) < bestT {
			best, bestT = f, math.Max(gpu, cpu)
		}
		if cpu > gpu {
			break // every larger F gives the CPU more and the GPU less
		}
	}
	lines = append(lines, fmt.Sprintf("chosen F=%d: predicted overall %.3f ms vs %.3f ms all-GPU", best, bestT, g.gpuMS(g.M)))
	return best, lines
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

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
	h.register(fs, "")
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
	return hybrid(&h, stdout)
}

// runStudyHybrid is the F sweep as a study: the wave candidates plus fixed fractions of M.
func runStudyHybrid(args []string, stdout, stderr io.Writer) error {
	return runHybrid(append([]string{"--sweep", "waves", "--out", "results/hybrid"}, args...), stdout, stderr)
}

func hybrid(h *hybridFlags, stdout io.Writer) error {
	s, err := orchestrator.ParseShape(h.shape)
	if err != nil {
		return usageErr("hybrid", "--shape: %v", err)
	}
	k, why, err := pickKernel(h.generated, h.variant, h.results, s)
	if err != nil {
		return err
	}
	avail, err := ooc.MemAvailable()
	if err != nil {
		return err
	}
	if err := ooc.CheckHost(ooc.HostBytes(s.M, s.N, s.K), avail); err != nil {
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
	lines = append(lines, fmt.Sprintf("hybrid %s with %s (%s) on %s", orchestrator.ShapeString(s), k.Variant.Name, why, wc.Device().Name))
	engine, rate := h.engine, 0.0
	for _, p := range gpuOnly.Probe {
		lines = append(lines, fmt.Sprintf("CPU engine %-8s %.2f GFLOP/s (%d rows in %.1f ms)", p.Engine, p.GFLOPS, p.Rows, p.MS))
		if (h.engine == "auto" && p.GFLOPS > rate) || p.Engine == h.engine {
			engine, rate = p.Engine, p.GFLOPS
		}
	}
	lines = append(lines, fmt.Sprintf("CPU engine used: %s", engine))
	model := gpuModel{M: s.M, N: s.N, K: s.K, TileRows: k.Variant.Tile.Rows, TileCols: k.Variant.Tile.Cols,
		SMs: gpuOnly.SMs, BlocksPerSM: gpuOnly.BlocksPerSM, KernelMS: gpuOnly.KernelMS, H2DMS: gpuOnly.H2DMS,
		D2HMS: gpuOnly.D2HMS, CPUGFLOPS: rate}
	fs := []int{fixedF}
	switch {
	case h.sweep == "waves":
		// The wave candidates while the CPU part is predicted within 3× the all-GPU time (past the
		// crossover), plus F inside the first wave, which show that rows short of a wave buy nothing.
		c := model.waveCandidates()
		fs = []int{0}
		if len(c) > 1 {
			fs = append(fs, c[1]/4, c[1]/2)
		}
		for _, f := range c[1:] {
			if model.cpuMS(f) > 3*model.gpuMS(s.M) && len(fs) > 4 {
				break
			}
			fs = append(fs, f)
		}
		fs = uniqueSorted(fs, s.M, 12)
	case h.sweep != "":
		fs = nil
		for _, x := range strings.Split(h.sweep, ",") {
			f, err := strconv.Atoi(strings.TrimSpace(x))
			if err != nil || f < 0 || f > s.M {
				return usageErr("hybrid", "--sweep %q: want integers in [0, M=%d] or waves", h.sweep, s.M)
			}
			fs = append(fs, f)
		}
		fs = uniqueSorted(fs, s.M, 1000)
	case fixedF < 0:
		f, why := planF(model)
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
		rows = dedupe(rows)
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

func uniqueSorted(fs []int, m, limit int) []int {
	seen := map[int]bool{}
	var out []int
	for _, f := range fs {
		if f >= 0 && f <= m && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	for i := 1; i < len(out); i++ { // insertion sort: short lists
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

func dedupe(rows []*protocol.HybridResult) []*protocol.HybridResult {
	var out []*protocol.HybridResult
	seen := map[int]bool{}
	for _, r := range rows {
		if !seen[r.CPURows] {
			seen[r.CPURows] = true
			out = append(out, r)
		}
	}
	return out
}

// hybridTable is the seed's table: per F the kernel, transfer, GPU total, CPU and overall times.
func hybridTable(s protocol.Shape, rows []*protocol.HybridResult, base float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%6s %8s %6s %10s %12s %10s %10s %11s %8s %6s\n", "F", "GPU rows", "waves", "kernel ms", "transfer ms",
		"GPU ms", "CPU ms", "overall ms", "speedup", "check")
	for _, r := range rows {
		waves := "-"
		if r.BlocksPerSM > 0 && r.SMs > 0 {
			waves = strconv.Itoa(ceilDiv(r.Blocks, r.SMs*r.BlocksPerSM))
		}
		chk := "ok"
		if !r.Pass {
			chk = "FAIL"
		}
		fmt.Fprintf(&b, "%6d %8d %6s %10.3f %12.3f %10.3f %10.3f %11.3f %7.3fx %6s\n", r.CPURows, r.GPURows, waves,
			r.KernelMS, r.H2DMS+r.D2HMS, r.GPUMS, r.CPUMS, r.OverallMS, base/r.OverallMS, chk)
	}
	fmt.Fprintf(&b, "(%s; transfer = host→device A rows and B + device→host C rows, event-timed; overall = wall clock of both parts; median of the runs)\n",
		orchestrator.ShapeString(s))
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
