// Package analysis is the arithmetic behind every study and report column: the global-memory
// traffic each kernel family is modelled to make, the arithmetic intensity that follows (over
// results.Flops), where a measured time puts a kernel against the device's roofline, and how a grid
// falls into waves of resident blocks.
//
// Traffic model (elements of 4 bytes; the seeds' questions). Writes are always M·N. Reads:
//
//	naive      2·M·N·K                       every output reads a row of A and a column of B
//	coalesced  M·K·⌈N/BN⌉ + M·N·K             A staged once per block column, B read per output
//	tiled      M·K·⌈N/BN⌉ + K·N·⌈M/BM⌉        A once per block column, B once per block row
//	compulsory M·K + K·N                      each input once (cuBLAS and unknown families)
//
// for a block tile of BM rows × BN columns of C. For exact multiples the tiled form is the seeds'
// M·N·K·(1/BN + 1/BM). Caches are ignored on purpose: the model says what the kernel asks of
// memory, and achieved bandwidth above the device's peak means the caches served the difference.
//
// Which model a family gets is its traffic_model in variants.yaml: carried on every variant
// (ModelOf) and, by family name for records, taken from the built-in catalog and from any catalog
// given to UseCatalog (ModelFor).
package analysis

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"tilegen/generated"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
)

// Model names: the values of variants.yaml's traffic_model.
const (
	ModelNaive      = variant.TrafficNaive
	ModelCoalesced  = variant.TrafficCoalesced
	ModelTiled      = variant.TrafficTiled
	ModelCompulsory = variant.TrafficCompulsory
)

// families maps a family to the traffic model variants.yaml gives it: the built-in catalog's
// families, and those of catalogs passed to UseCatalog.
var (
	familiesMu sync.RWMutex
	families   = variant.FamilyModels(generated.Variants())
)

// UseCatalog adds the traffic models of vs's families (a catalog read with --generated DIR), so
// that records, which carry only a family name, are modelled as that catalog says.
func UseCatalog(vs []variant.Variant) {
	familiesMu.Lock()
	defer familiesMu.Unlock()
	for f, m := range variant.FamilyModels(vs) {
		families[f] = m
	}
}

// ModelOf is the traffic model of v's family (variants.yaml traffic_model).
func ModelOf(v *variant.Variant) string {
	if v.TrafficModel == "" {
		return ModelCompulsory
	}
	return v.TrafficModel
}

// ModelFor is the traffic model of a family by name; anything no catalog lists (cuBLAS) is
// compulsory.
func ModelFor(family string) string {
	familiesMu.RLock()
	defer familiesMu.RUnlock()
	if m := families[family]; m != "" {
		return m
	}
	return ModelCompulsory
}

// Traffic is modelled global-memory traffic in elements.
type Traffic struct {
	Model  string
	Reads  float64
	Writes float64
}

// Bytes is the modelled traffic in bytes (float32 elements).
func (t Traffic) Bytes() float64 { return 4 * (t.Reads + t.Writes) }

// Model returns the traffic of a family's kernel with a tileRows×tileCols block tile on M×N×K.
// Tiles below 1 (unknown geometry) fall back to the compulsory model.
func Model(family string, tileRows, tileCols, m, n, k int) Traffic {
	fm, fn, fk := float64(m), float64(n), float64(k)
	t := Traffic{Model: ModelFor(family), Writes: fm * fn}
	if (t.Model == ModelTiled || t.Model == ModelCoalesced) && (tileRows < 1 || tileCols < 1) {
		t.Model = ModelCompulsory
	}
	switch t.Model {
	case ModelNaive:
		t.Reads = 2 * fm * fn * fk
	case ModelCoalesced:
		t.Reads = fm*fk*float64(variant.CeilDiv(n, tileCols)) + fm*fn*fk
	case ModelTiled:
		t.Reads = fm*fk*float64(variant.CeilDiv(n, tileCols)) + fk*fn*float64(variant.CeilDiv(m, tileRows))
	default:
		t.Reads = fm*fk + fk*fn
	}
	return t
}

// Intensity is FLOPs per byte of modelled traffic.
func Intensity(flops float64, t Traffic) float64 { return flops / t.Bytes() }

// Peaks are a device's ceilings.
type Peaks struct {
	// GFLOPS is the FP32 FMA peak; GBps the DRAM bandwidth. Zero means unknown.
	GFLOPS float64
	GBps   float64
	// Source says where they come from ("theoretical from clocks" or "measured").
	Source string
}

// fp32Lanes is FP32 lanes per SM by compute capability (CUDA programming guide, arithmetic
// instruction throughput table).
var fp32Lanes = map[string]int{
	"5.0": 128, "5.2": 128, "6.0": 64, "6.1": 128, "7.0": 64, "7.5": 64,
	"8.0": 64, "8.6": 128, "8.7": 128, "8.9": 128, "9.0": 128, "10.0": 128, "12.0": 128,
}

// TheoreticalPeaks derives the peaks from what the driver reports: SMs × FP32 lanes × 2 FLOPs ×
// boost clock, and 2 (double data rate) × memory clock × bus width. Unknown inputs give zero.
func TheoreticalPeaks(cc string, sms, clockKHz, memClockKHz, busBits int) Peaks {
	p := Peaks{Source: "theoretical from clocks"}
	if lanes := fp32Lanes[cc]; lanes > 0 && sms > 0 && clockKHz > 0 {
		p.GFLOPS = float64(sms*lanes) * 2 * float64(clockKHz) * 1e3 / 1e9
	}
	if memClockKHz > 0 && busBits > 0 {
		p.GBps = 2 * float64(memClockKHz) * 1e3 * float64(busBits) / 8 / 1e9
	}
	return p
}

// Point is one measured kernel on one shape, placed against the roofline.
type Point struct {
	Flops     float64
	Traffic   Traffic
	Intensity float64
	// GFLOPS and GBps are achieved (modelled bytes over measured time).
	GFLOPS float64
	GBps   float64
	// Attainable is min(peak FLOPs, intensity × peak bandwidth); PctOfRoof is GFLOPS/Attainable.
	Attainable float64
	PctOfRoof  float64
	// Bound is "memory" when the bandwidth roof is the lower one, "compute" otherwise, "" when
	// the peaks are unknown.
	Bound string
}

// Place computes a Point for a kernel of the given family and tile that took ms milliseconds.
func Place(family string, tileRows, tileCols, m, n, k int, ms float64, pk Peaks) Point {
	return PlaceBatch(family, tileRows, tileCols, m, n, k, 1, ms, pk)
}

// PlaceBatch is Place for a strided batch of products M×N×K products in one launch: flops and
// modelled traffic are those of one product times the batch.
func PlaceBatch(family string, tileRows, tileCols, m, n, k, products int, ms float64, pk Peaks) Point {
	tr := Model(family, tileRows, tileCols, m, n, k)
	tr.Reads, tr.Writes = tr.Reads*float64(products), tr.Writes*float64(products)
	p := Point{Flops: results.Flops(protocol.Shape{M: m, N: n, K: k}) * float64(products), Traffic: tr}
	p.Intensity = Intensity(p.Flops, p.Traffic)
	if ms > 0 {
		p.GFLOPS = p.Flops / (ms * 1e6)
		p.GBps = p.Traffic.Bytes() / (ms * 1e6)
	}
	if pk.GFLOPS > 0 && pk.GBps > 0 {
		mem := p.Intensity * pk.GBps
		p.Attainable = math.Min(pk.GFLOPS, mem)
		p.Bound = "compute"
		if mem < pk.GFLOPS {
			p.Bound = "memory"
		}
		if p.GFLOPS > 0 {
			p.PctOfRoof = 100 * p.GFLOPS / p.Attainable
		}
	}
	return p
}

// Waves describes how a grid of blocks fills the device.
type Waves struct {
	Blocks   int
	Capacity int // blocks resident at once: SMs × blocks per SM
	// Waves is Blocks / Capacity; LastFill is the fraction of the last wave that is occupied
	// (1 when the grid is an exact multiple).
	Waves    float64
	LastFill float64
	// Note flags wave quantization: a last wave less than half full whose idle slots are at least
	// 5 % of the launch (the seeds' observation that a grid of 2.1 waves costs about as much as 3;
	// after 62 waves a thin last one no longer matters), or a grid too small to fill one wave.
	Note string
}

// WavesOf computes the waves of a grid of blocks with the given occupancy on sms SMs.
func WavesOf(blocks, blocksPerSM, sms int) Waves {
	w := Waves{Blocks: blocks, Capacity: blocksPerSM * sms}
	if blocks < 1 || w.Capacity < 1 {
		return w
	}
	w.Waves = float64(blocks) / float64(w.Capacity)
	full := blocks / w.Capacity
	rem := blocks % w.Capacity
	w.LastFill = 1
	if rem > 0 {
		w.LastFill = float64(rem) / float64(w.Capacity)
	}
	switch {
	case full == 0:
		w.Note = fmt.Sprintf("under one wave: %d of %d block slots used", blocks, w.Capacity)
	case rem > 0 && w.LastFill < 0.5 && (1-w.LastFill)/float64(full+1) >= 0.05:
		w.Note = fmt.Sprintf("wave quantization: %.2f waves, last wave %.0f%% full (costs about as much as a full one)",
			w.Waves, 100*w.LastFill)
	}
	return w
}

// ParseParams parses a variant's "W=16 G=2 PF=0" parameter string.
func ParseParams(s string) map[string]int {
	out := map[string]int{}
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(v); err == nil {
			out[k] = n
		}
	}
	return out
}

// SMLimits are the per-SM resources that bound how many blocks of a kernel are resident at once.
type SMLimits struct {
	// Registers is the register file (32-bit registers), split evenly among Partitions schedulers
	// (a warp's registers come from its scheduler's share); RegisterUnit the allocation granularity
	// of a warp's registers.
	Registers, RegisterUnit, Partitions int
	// SharedBytes is the shared memory an SM gives blocks; SharedReserved what the system reserves
	// per block; SharedUnit the allocation granularity.
	SharedBytes, SharedReserved, SharedUnit int
	// Threads and Blocks are the resident threads and blocks at most.
	Threads, Blocks int
}

// Hopper is sm_90's limits (CUDA programming guide, compute capability 9.0): 64 K registers in four
// scheduler partitions, allocated per warp in units of 256, 228 KB of shared memory with 1 KB
// reserved per block, 2048 threads and 32 blocks.
var Hopper = SMLimits{Registers: 65536, RegisterUnit: 256, Partitions: 4, SharedBytes: 228 * 1024, SharedReserved: 1024,
	SharedUnit: 128, Threads: 2048, Blocks: 32}

// BlocksPerSM is how many blocks of threads threads, regs registers a thread and shared bytes of
// shared memory (static and dynamic) fit an SM at once, as the occupancy calculator counts them; 0
// when one does not fit.
func BlocksPerSM(threads, regs, shared int, l SMLimits) int {
	if threads < 1 || threads > l.Threads {
		return 0
	}
	warps := variant.CeilDiv(threads, 32)
	n := min(l.Blocks, l.Threads/(warps*32))
	if regs > 0 && l.RegisterUnit > 0 {
		perWarp := variant.CeilDiv(regs*32, l.RegisterUnit) * l.RegisterUnit
		parts := max(1, l.Partitions)
		n = min(n, parts*(l.Registers/parts/perWarp)/warps)
	}
	if l.SharedBytes > 0 {
		unit := max(1, l.SharedUnit)
		perBlock := variant.CeilDiv(shared+l.SharedReserved, unit) * unit
		n = min(n, l.SharedBytes/perBlock)
	}
	return max(n, 0)
}
