package ooc

// Hybrid planning: which rows F of C the CPU should compute while the GPU computes the other M−F,
// predicted from one all-GPU run (the probe) and the CPU engine's measured rate.

import (
	"fmt"
	"math"

	"tilegen/internal/protocol"
	"tilegen/internal/variant"
)

// GPUModel predicts the GPU part of a hybrid product on G rows from an all-GPU run: kernel time
// scales with the waves of thread blocks (a partial wave costs a whole one), copies with bytes.
type GPUModel struct {
	M, N, K                int
	TileRows, TileCols     int
	SMs, BlocksPerSM       int
	KernelMS, H2DMS, D2HMS float64 // measured with G = M
	CPUGFLOPS              float64
}

// NewGPUModel is the model of variant v on shape s from the all-GPU probe run and the rate of the
// CPU engine in use.
func NewGPUModel(s protocol.Shape, v *variant.Variant, probe *protocol.HybridResult, cpuGFLOPS float64) GPUModel {
	return GPUModel{M: s.M, N: s.N, K: s.K, TileRows: v.Tile.Rows, TileCols: v.Tile.Cols,
		SMs: probe.SMs, BlocksPerSM: probe.BlocksPerSM, KernelMS: probe.KernelMS, H2DMS: probe.H2DMS,
		D2HMS: probe.D2HMS, CPUGFLOPS: cpuGFLOPS}
}

// Waves is the number of waves of thread blocks the kernel needs for G rows.
func (g GPUModel) Waves(rows int) int {
	if rows <= 0 {
		return 0
	}
	blocks := variant.CeilDiv(rows, g.TileRows) * variant.CeilDiv(g.N, g.TileCols)
	return Waves(blocks, g.SMs*g.BlocksPerSM)
}

// Waves is the number of waves blocks take when perWave run at once (at least one at a time).
func Waves(blocks, perWave int) int { return variant.CeilDiv(blocks, max(perWave, 1)) }

// GPUMS is the predicted time of the GPU part on G rows: copies in, kernel, copy out.
func (g GPUModel) GPUMS(rows int) float64 {
	if rows <= 0 {
		return 0
	}
	w0 := float64(g.Waves(g.M))
	kern := g.KernelMS * float64(g.Waves(rows)) / w0
	ab := float64(rows)*float64(g.K) + float64(g.K)*float64(g.N)
	h2d := g.H2DMS * ab / (float64(g.M)*float64(g.K) + float64(g.K)*float64(g.N))
	return h2d + kern + g.D2HMS*float64(rows)/float64(g.M)
}

// CPUMS is the predicted time of the CPU part on F rows at the measured rate.
func (g GPUModel) CPUMS(rows int) float64 {
	return 2 * float64(rows) * float64(g.N) * float64(g.K) / (g.CPUGFLOPS * 1e6)
}

// WaveCandidates lists, for every count of waves below the all-GPU count, the CPU rows F that
// remove exactly the waves above it (the largest GPU part that fits in w waves); F = 0 first.
// Any F between two candidates buys no kernel time: the GPU still runs the same number of waves.
func (g GPUModel) WaveCandidates() []int {
	out := []int{0}
	perWave := g.SMs * g.BlocksPerSM
	bandsN := variant.CeilDiv(g.N, g.TileCols)
	for w := g.Waves(g.M) - 1; w >= 0; w-- {
		rows := min(g.M, (w*perWave/bandsN)*g.TileRows)
		if f := g.M - rows; f > out[len(out)-1] {
			out = append(out, f)
		}
	}
	return out
}

// PlanF picks the CPU rows: the wave candidate with the smallest predicted overall time among those
// where the CPU part finishes no later than the GPU part; the lines explain the choice.
func PlanF(g GPUModel) (int, []string) {
	bandsN := variant.CeilDiv(g.N, g.TileCols)
	perWave := g.SMs * g.BlocksPerSM
	rowsPerWave := float64(perWave) / float64(bandsN) * float64(g.TileRows)
	lines := []string{
		fmt.Sprintf("GPU: %d rows = %d waves of %d blocks (%d SMs × %d blocks/SM; a wave covers %.1f rows of %d-row tiles across %d column tiles)",
			g.M, g.Waves(g.M), perWave, g.SMs, g.BlocksPerSM, rowsPerWave, g.TileRows, bandsN),
		fmt.Sprintf("measured: all-GPU kernel %.3f ms, copies %.3f + %.3f ms; CPU %.1f GFLOP/s", g.KernelMS, g.H2DMS, g.D2HMS, g.CPUGFLOPS),
		"only F that remove a whole wave shorten the kernel (rows inside a wave buy nothing); candidates:",
	}
	best, bestT := 0, g.GPUMS(g.M)
	for _, f := range g.WaveCandidates() {
		gpu, cpu := g.GPUMS(g.M-f), g.CPUMS(f)
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
			f, g.M-f, g.Waves(g.M-f), gpu, cpu, verdict))
		if f > 0 && cpu <= gpu && math.Max(gpu, cpu) < bestT {
			best, bestT = f, math.Max(gpu, cpu)
		}
		if cpu > gpu {
			break // every larger F gives the CPU more and the GPU less
		}
	}
	lines = append(lines, fmt.Sprintf("chosen F=%d: predicted overall %.3f ms vs %.3f ms all-GPU", best, bestT, g.GPUMS(g.M)))
	return best, lines
}

// SweepWaves is the F of a `--sweep waves`: the wave candidates while the CPU part is predicted
// within 3× the all-GPU time (past the crossover), plus F inside the first wave, which show that
// rows short of a wave buy nothing; sorted, at most 12.
func SweepWaves(g GPUModel) []int {
	c := g.WaveCandidates()
	fs := []int{0}
	if len(c) > 1 {
		fs = append(fs, c[1]/4, c[1]/2)
	}
	for _, f := range c[1:] {
		if g.CPUMS(f) > 3*g.GPUMS(g.M) && len(fs) > 4 {
			break
		}
		fs = append(fs, f)
	}
	return UniqueSorted(fs, g.M, 12)
}

// UniqueSorted is the distinct F of fs in [0, m], ascending, the first limit of them.
func UniqueSorted(fs []int, m, limit int) []int {
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

// Dedupe keeps the first run of each F.
func Dedupe(rows []*protocol.HybridResult) []*protocol.HybridResult {
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

// PickEngine chooses the CPU engine from the probe's rates: want by name, or with want "auto" the
// fastest; the rate is 0 when the probe has no such engine.
func PickEngine(probe []protocol.EngineRate, want string) (string, float64) {
	engine, rate := want, 0.0
	for _, p := range probe {
		if (want == "auto" && p.GFLOPS > rate) || p.Engine == want {
			engine, rate = p.Engine, p.GFLOPS
		}
	}
	return engine, rate
}
