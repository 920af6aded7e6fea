package search

import (
	"math"

	"tilegen/internal/analysis"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
)

// Device is what the prior model knows of the GPU.
type Device struct {
	// SMs is the number of multiprocessors.
	SMs int
	// GFLOPS is the FP32 FMA peak, GBps the DRAM bandwidth.
	GFLOPS, GBps float64
	// Limits bound the blocks resident per SM.
	Limits analysis.SMLimits
}

// H100 is the H100 SXM the committed results were measured on: 132 SMs, the measured FFMA peak
// (BENCHMARKS.md) and HBM3's 3.35 TB/s.
var H100 = Device{SMs: 132, GFLOPS: 63800, GBps: 3350, Limits: analysis.Hopper}

// DeviceOf is the model's view of a worker's device: its SM count, and peaks from its clocks where
// the driver reports them; what is unknown is taken from H100.
func DeviceOf(d protocol.Device) Device {
	out := H100
	if d.SMs > 0 {
		out.SMs = d.SMs
	}
	pk := analysis.TheoreticalPeaks(d.ComputeCapability, d.SMs, d.ClockKHz, d.MemClockKHz, d.MemBusWidth)
	if pk.GFLOPS > 0 {
		out.GFLOPS = pk.GFLOPS
	}
	if pk.GBps > 0 {
		out.GBps = pk.GBps
	}
	return out
}

// Launch overheads of the prior, in milliseconds: a kernel launch as CUDA events time it, and the
// extra pass a split-K variant makes over its partial tiles.
const (
	launchMS      = 0.004
	splitReduceMS = 0.002
)

// blockOverheadK is a block's prologue and epilogue in steps of K: filling a pipeline of two or
// three BK = 8-16 stages before the first FMA, and writing the tile after the last.
const blockOverheadK = 32

// Estimate is the prior model's view of one variant on one shape.
type Estimate struct {
	// MS is the predicted time; +Inf when no block fits an SM.
	MS float64
	// Blocks is the grid's size, BlocksPerSM the occupancy, Fill the share of the busiest SM's
	// block slots over all SMs that hold work (1: the grid divides evenly), Waste the share of
	// computed outputs that fall outside C (partial edge tiles).
	Blocks, BlocksPerSM int
	Fill, Waste         float64
	// ComputeMS and MemoryMS are the two roofs; Warps the warps an SM holds at once.
	ComputeMS, MemoryMS float64
	Warps               int
	// GridZ is the grid's z extent: split-K slices (a launch-time split rule's choice on the shape).
	GridZ int
}

// Prior predicts the time of variant v on shape s: the busiest SM's share of the grid's
// (edge-padded) FMAs at an efficiency that grows with the outputs each thread accumulates (FMAs per
// operand loaded) and with the warps an SM holds to hide latency, against the traffic model of the
// family (variants.yaml traffic_model) over the DRAM bandwidth, whichever is longer, plus the launch
// and a split-K reduction. It ranks; the search learns the corrections from measurements.
func Prior(v *variant.Variant, s protocol.Shape, d Device) Estimate {
	gx, gy, gz := v.Grid(s.M, s.N, s.K, d.SMs)
	e := Estimate{Blocks: gx * gy * gz, GridZ: gz}
	threads := v.Threads()
	shared := v.Resources.SharedStatic + v.DynamicShared
	e.BlocksPerSM = analysis.BlocksPerSM(threads, v.Resources.Registers, shared, d.Limits)
	if e.BlocksPerSM < 1 || e.Blocks < 1 || d.SMs < 1 {
		e.MS = math.Inf(1)
		return e
	}
	rows, cols := max(1, v.Tile.Rows), max(1, v.Tile.Cols)
	kPer := variant.CeilDiv(s.K, gz)
	perSM := variant.CeilDiv(e.Blocks, d.SMs)
	if v.Split != nil && v.Split.StreamK {
		// Stream-K: the grid is one wave of blocks sharing the tiles' K steps evenly; count it as
		// that many blocks of ⌈tiles·K / blocks⌉ of K each, a partial tile more to add up.
		gx, gy = variant.CeilDiv(s.N, cols), variant.CeilDiv(s.M, rows)
		kPer = int(min(int64(gx)*int64(gy)*int64(s.K)/int64(e.Blocks)+1, int64(1)<<30))
		gz = 2
	}
	e.Fill = float64(e.Blocks) / float64(perSM*d.SMs)
	e.Waste = 1 - float64(s.M)*float64(s.N)/(float64(gx*cols)*float64(gy*rows))
	e.Warps = min(e.BlocksPerSM, perSM) * variant.CeilDiv(threads, 32)
	// Outputs per thread r: a thread tile of r outputs does about r FMAs per 2·√r operands loaded.
	// A warp-specialized block counts only its math threads (its producers copy).
	r := float64(rows*cols) / float64(v.ComputeThreads())
	eff := r / (r + 8)
	// Latency hiding: below 8 warps an SM issues from too few.
	eff *= math.Sqrt(min(1, float64(e.Warps)/8))
	// A block also fills its pipeline and writes its tile: about blockOverheadK more steps of K.
	blockFlops := 2 * float64(rows) * float64(cols) * float64(kPer+blockOverheadK)
	e.ComputeMS = float64(perSM) * blockFlops / (d.GFLOPS / float64(d.SMs) * eff * 1e6)
	tr := analysis.Model(v.Family, v.Tile.Rows, v.Tile.Cols, s.M, s.N, s.K)
	bytes := tr.Bytes()
	extra := 0.0
	if gz > 1 {
		bytes += 2 * 4 * float64(gz) * float64(s.M) * float64(s.N) // partial tiles written and read back
		extra = splitReduceMS
	}
	e.MemoryMS = bytes / (d.GBps * 1e6)
	e.MS = max(e.ComputeMS, e.MemoryMS) + launchMS + extra
	return e
}

// gflops is the rate a time means on a shape.
func gflops(s protocol.Shape, ms float64) float64 { return results.Flops(s) / (ms * 1e6) }
