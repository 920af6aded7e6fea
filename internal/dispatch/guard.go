package dispatch

import (
	"fmt"
	"math"

	"tilegen/internal/protocol"
	"tilegen/internal/variant"
)

// The wave guard. The tables pick per cell, and a cell spans a range of shapes over which a
// fixed-grid kernel's wave quantization jumps: its last wave of blocks may hold a few blocks or
// nearly all, and which one a problem gets depends on its exact M and N, not on the cell. On a
// large problem a nearly empty last wave costs up to half the time (the H100 corpus held out a
// 128×256 regtile kernel at 0.64× on 2048×2304×768: 144 blocks on 132 SMs). The rule's q feature
// averages q over a cell's points; the guard looks at the exact problem at launch: when the kernel
// the tables launch has a fixed grid, the problem is large (M·N·K ≥ MinWork), the guard kernel has
// at least MinTiles (the SM count) output tiles on it, and the launched kernel's waves would run at
// most 5/7 full on average (ceil(blocks/slots)·slots ≥ 7/5 · blocks, slots = SMs × its blocks per
// SM), the rule launches its guard kernel instead: a stream-K kernel, whose blocks share the tiles'
// work evenly over one wave by construction. Which stream-K kernel is fitted (the one with the best mean log ratio on the
// training shapes the guard covers); the thresholds are constants. Cross-validated on the H100
// corpus (331 shapes, 5 folds) the guard changed 4 held-out shapes, each for the better
// (512×5120×1280 0.73 → 1.07, 2048×2304×768 0.64 → 1.01, 6272×256×1024 0.70 → 0.93, 1568×2048×512
// 0.82 → 1.00; held out 1.064 → 1.069), and none of the rule fitted on every shape; thresholds from
// 1.3 to 1.5 and MinWork from 2^30 to 1.5·2^30 changed the same shapes (at 2^29 the rule fitted on
// every shape lost 1568×1280×320, 0.92 → 0.67). Through the header on the 74 unseen shapes it
// changed one, 500×4544×18176, 0.56 → 0.85. Extending it to the split-K kernels with a
// launch-time rule (whose own rule already aims at full waves) raised the held-out geomean too but
// lowered the rule fitted on every shape (pinned cells lost measured winners). Over fewer output
// tiles than SMs a stream-K kernel splits each tile's K many ways and its fix-up costs more than the
// wave it saves (128×128×50000, 2 tiles: 0.29×), hence MinTiles; a first version left out the deep-K
// products (K ≥ 4·max(M, N)) instead, which also left out the unseen 500×4544×18176 (K = 4·4544,
// 144 blocks of a fixed 128×256 split-K kernel on 132 SMs: 0.56×), whose 288 stream-K tiles fill
// the SMs.
const (
	// guardWork is the smallest M·N·K the guard acts on (about 2 GFLOP).
	guardWork = 1 << 30
	// The guard acts when ceil(blocks/slots)·slots·guardWavesDen ≥ blocks·guardWavesNum.
	guardWavesNum, guardWavesDen = 7, 5
	// guardEvidence is how many covered training shapes a stream-K kernel must have been timed on
	// to be the guard.
	guardEvidence = 3
)

// WaveGuard is a rule's wave guard (see above); nil: the rule has none.
type WaveGuard struct {
	// Kernel is the guard kernel's index.
	Kernel int `json:"kernel"`
	// MinWork is the smallest M·N·K the guard acts on.
	MinWork int64 `json:"min_work"`
	// WavesNum / WavesDen is the wave quantization from which the guard acts.
	WavesNum int `json:"waves_num"`
	WavesDen int `json:"waves_den"`
	// MinTiles is the fewest output tiles of the guard kernel on which it acts (the SM count).
	MinTiles int `json:"min_tiles"`
	// Kernels[j] is what the guard knows of kernel j (indexed as the rule's kernels; Slots 0, or j
	// past the end: the guard never replaces it); Kernels[Kernel] holds the guard's own tile.
	Kernels []GuardKernel `json:"-"`
}

// GuardKernel is a fixed-grid kernel as the guard sees it: its tile, its grid z, and its slots
// (SMs × blocks per SM).
type GuardKernel struct {
	TileRows, TileCols, GridZ, Slots int
}

// Replaces says whether the guard launches its kernel instead of kernel j on M×N×K (the caller
// still checks that the guard kernel takes the problem).
func (g *WaveGuard) Replaces(j, m, n, k int) bool {
	if g == nil || j < 0 || j >= len(g.Kernels) || j == g.Kernel {
		return false
	}
	gk, own := g.Kernels[j], g.Kernels[g.Kernel]
	if gk.Slots <= 0 || !large(m, n, k, g.MinWork) ||
		int64((m+own.TileRows-1)/own.TileRows)*int64((n+own.TileCols-1)/own.TileCols) < int64(g.MinTiles) {
		return false
	}
	blocks := int64((m+gk.TileRows-1)/gk.TileRows) * int64((n+gk.TileCols-1)/gk.TileCols) * int64(max(gk.GridZ, 1))
	s := int64(gk.Slots)
	return (blocks+s-1)/s*s*int64(g.WavesDen) >= blocks*int64(g.WavesNum)
}

// guarded is the kernel launched on M×N×K when the tables' chain launches j: the bulk guard's
// where it takes the problem, else the wave guard's where it replaces j, else j.
func (r *Rule) guarded(j, m, n, k int, takes func(j int) bool) int {
	if r.Bulk.Takes(j, m, n, k) && takes(r.Bulk.Kernel) {
		return r.Bulk.Kernel
	}
	if r.Guard.Replaces(j, m, n, k) && takes(r.Guard.Kernel) {
		return r.Guard.Kernel
	}
	return j
}

// large says whether M·N·K ≥ work, without overflow for M, N, K up to 2^31: M·N ≥ ceil(work / K),
// as the artifacts compute it.
func large(m, n, k int, work int64) bool {
	return int64(m)*int64(n) >= (work+int64(k)-1)/int64(k)
}

// waveGuard fits the guard on the training shapes: the stream-K kernel without requirements with
// the best mean log ratio (untimed: the slowest timed there) over the covered training shapes,
// timed on at least guardEvidence of them; nil when none is.
func (m *model) waveGuard() *WaveGuard {
	d := m.d
	best, at := math.Inf(-1), -1
	for j := range d.Kernels {
		kn := &d.Kernels[j]
		if kn.Split == nil || !kn.Split.StreamK || !kn.General {
			continue
		}
		mean, timed := m.guardScore(j, false, func(s protocol.Shape) bool {
			return large(s.M, s.N, s.K, guardWork) && variant.CeilDiv(s.M, kn.TileRows)*variant.CeilDiv(s.N, kn.TileCols) >= d.SMs
		})
		if timed >= guardEvidence && mean > best {
			best, at = mean, j
		}
	}
	if at < 0 {
		return nil
	}
	g := &WaveGuard{Kernel: at, MinWork: guardWork, WavesNum: guardWavesNum, WavesDen: guardWavesDen, MinTiles: d.SMs,
		Kernels: make([]GuardKernel, len(d.Kernels))}
	for j := range d.Kernels {
		kn := &d.Kernels[j]
		if kn.Split == nil {
			g.Kernels[j] = GuardKernel{TileRows: kn.TileRows, TileCols: kn.TileCols, GridZ: max(kn.GridZ, 1), Slots: d.SMs * max(kn.BlocksPerSM, 1)}
		}
	}
	g.Kernels[at] = GuardKernel{TileRows: d.Kernels[at].TileRows, TileCols: d.Kernels[at].TileCols, GridZ: 1}
	return g
}

// check says whether the guard is well formed for nk kernels.
func (g *WaveGuard) check(nk int) error {
	if g == nil {
		return nil
	}
	if g.Kernel < 0 || g.Kernel >= nk || g.Kernel >= len(g.Kernels) || len(g.Kernels) > nk {
		return fmt.Errorf("dispatch rule: wave guard kernel %d, %d kernel entries, of %d kernels", g.Kernel, len(g.Kernels), nk)
	}
	if g.MinWork < 1 || g.WavesNum < 1 || g.WavesDen < 1 || g.MinTiles < 0 {
		return fmt.Errorf("dispatch rule: wave guard thresholds %d, %d/%d, %d tiles", g.MinWork, g.WavesNum, g.WavesDen, g.MinTiles)
	}
	for j, k := range g.Kernels {
		if (k.Slots > 0 || j == g.Kernel) && (k.TileRows < 1 || k.TileCols < 1 || k.GridZ < 1) {
			return fmt.Errorf("dispatch rule: wave guard entry %d: tile %dx%d, grid z %d", j, k.TileRows, k.TileCols, k.GridZ)
		}
	}
	return nil
}

// remap is the guard with kernel indices f(old index) (see Rule.Remap): the kernels f drops leave
// the guard's entries, and a guard whose kernel f drops is nil.
func (g *WaveGuard) remap(f func(int) int) *WaveGuard {
	if g == nil || f(g.Kernel) < 0 {
		return nil
	}
	c := *g
	c.Kernel = f(g.Kernel)
	n := 0
	for j := range g.Kernels {
		n = max(n, f(j)+1)
	}
	c.Kernels = make([]GuardKernel, n)
	for j, k := range g.Kernels {
		if x := f(j); x >= 0 {
			c.Kernels[x] = k
		}
	}
	return &c
}

// The bulk guard. Where a big fixed tile covers a problem in at least two nearly full waves and K
// is deep, that tile's kernel is the one to run: waves cost little there, and a bigger tile does
// more FFMAs per loaded float than the smaller tiles and the split-K and stream-K kernels that the
// tables pick around the corpus's large shapes. Those shapes are few and clustered (transformer and
// convolution sizes), so the cells of larger problems are filled from them: 6143³ ran a 64×128
// stream-K kernel at 0.87× cuBLAS through the header on an H100 and an H200. The guard acts where
// K ≥ 1024, its kernel's tiles fill at least two waves (blocks ≥ 2·slots, slots = SMs × its blocks
// per SM at tuning), and the output area its waves cover beyond M×N (partial tiles at the edges and
// the last wave's empty slots) is at most a tenth of M×N. Its kernel is fitted: the fixed-grid
// kernel without requirements and with an output tile of at least 128×256 that comes closest to
// the best timed kernel on the training shapes it would take (mean log ratio to the best; untimed:
// the slowest timed there), timed on at least 3 of them; none, no guard. Cross-validated on the H100
// corpus (331 shapes, 5 folds) it changed 5 held-out shapes, each for the better (25088×512×2304
// 0.96 → 1.01, 25088×512×4608 0.95 → 1.00, 100352×256×2304 1.01 → 1.07, 2048×13824×5120 0.94 →
// 1.01, 1600×7680×2560 0.97 → 0.98; held out 1.0686 → 1.0695); fitted on every shape it changed
// one, 1600×7680×2560, 0.99 → 0.98 (a 128×256 split-K kernel measured faster there). A tile of
// 128×128 as its kernel, or no depth limit, made it worse (4093×4091×127: 0.54× for 128×256 tiles
// against 0.84× for the rule's 64×64 cpasync kernel; 401408×128×576: half of each 128×256 tile
// outside N). The bulk guard is checked before the wave guard.
const (
	// bulkWaves is the fewest waves of the bulk kernel's blocks it acts on.
	bulkWaves = 2
	// It acts when the area its waves cover beyond M×N is at most (bulkFullNum − bulkFullDen) /
	// bulkFullDen of M×N.
	bulkFullNum, bulkFullDen = 11, 10
	// bulkDepth is the shallowest K it acts on.
	bulkDepth = 1024
	// bulkTile is the smallest output tile (rows × columns) of a bulk kernel.
	bulkTile = 128 * 256
)

// BulkGuard is a rule's bulk guard (see above); nil: the rule has none.
type BulkGuard struct {
	// Kernel is the bulk kernel's index; TileRows×TileCols its tile, Slots its blocks per wave
	// (SMs × blocks per SM at tuning).
	Kernel             int `json:"kernel"`
	TileRows, TileCols int `json:"-"`
	Slots              int `json:"slots"`
	// MinWaves is the fewest waves of its blocks it acts on, MinK the shallowest K.
	MinWaves int `json:"min_waves"`
	MinK     int `json:"min_k"`
	// It acts when the area its waves cover beyond M×N is at most (FullNum−FullDen)/FullDen of M×N.
	FullNum int `json:"full_num"`
	FullDen int `json:"full_den"`
}

// Takes says whether the bulk guard launches its kernel on M×N×K in place of kernel j (the caller
// still checks that its kernel takes the problem).
func (g *BulkGuard) Takes(j, m, n, k int) bool {
	if g == nil || j == g.Kernel || k < g.MinK {
		return false
	}
	blocks := int64((m+g.TileRows-1)/g.TileRows) * int64((n+g.TileCols-1)/g.TileCols)
	s := int64(g.Slots)
	if blocks < int64(g.MinWaves)*s {
		return false
	}
	// No overflow for M and N up to 2^31: the covered area is below 2^62 + 2^31·(tile + slots·tile).
	area := int64(m) * int64(n)
	waste := (blocks+s-1)/s*s*int64(g.TileRows)*int64(g.TileCols) - area
	return waste*int64(g.FullDen) <= area*int64(g.FullNum-g.FullDen)
}

// bulkGuard fits the bulk guard on the training shapes (see above); nil when no kernel qualifies.
func (m *model) bulkGuard() *BulkGuard {
	d := m.d
	best, at := math.Inf(-1), (*BulkGuard)(nil)
	for j := range d.Kernels {
		kn := &d.Kernels[j]
		if kn.Split != nil || kn.GridZ > 1 || !kn.General || kn.TileRows*kn.TileCols < bulkTile {
			continue
		}
		g := &BulkGuard{Kernel: j, TileRows: kn.TileRows, TileCols: kn.TileCols, Slots: d.SMs * max(kn.BlocksPerSM, 1),
			MinWaves: bulkWaves, MinK: bulkDepth, FullNum: bulkFullNum, FullDen: bulkFullDen}
		mean, timed := m.guardScore(j, true, func(s protocol.Shape) bool { return g.Takes(-1, s.M, s.N, s.K) })
		if timed >= guardEvidence && mean > best {
			best, at = mean, g
		}
	}
	return at
}

// guardScore is kernel j's mean log ratio over the training shapes that covers takes (untimed: the
// slowest timed there; toBest: relative to the best timed on each), and on how many it was timed.
func (m *model) guardScore(j int, toBest bool, covers func(protocol.Shape) bool) (mean float64, timed int) {
	sum, n := 0.0, 0
	for _, i := range m.train {
		if !covers(m.d.Samples[i].Shape) {
			continue
		}
		r, imputed, ok := m.d.Ratio(i, j)
		if !ok {
			continue
		}
		if toBest {
			r /= m.d.best(i)
		}
		sum += math.Log(r)
		n++
		if !imputed {
			timed++
		}
	}
	if n == 0 {
		return math.Inf(-1), 0
	}
	return sum / float64(n), timed
}

// check says whether the bulk guard is well formed for nk kernels.
func (g *BulkGuard) check(nk int) error {
	if g == nil {
		return nil
	}
	if g.Kernel < 0 || g.Kernel >= nk {
		return fmt.Errorf("dispatch rule: bulk guard kernel %d of %d kernels", g.Kernel, nk)
	}
	if g.TileRows < 1 || g.TileCols < 1 || g.Slots < 1 || g.MinWaves < 1 || g.MinK < 1 || g.FullDen < 1 || g.FullNum < g.FullDen {
		return fmt.Errorf("dispatch rule: bulk guard tile %dx%d, %d slots, %d waves, K %d, %d/%d",
			g.TileRows, g.TileCols, g.Slots, g.MinWaves, g.MinK, g.FullNum, g.FullDen)
	}
	return nil
}

// remap is the bulk guard with its kernel's index f(old index); nil when f drops it.
func (g *BulkGuard) remap(f func(int) int) *BulkGuard {
	if g == nil || f(g.Kernel) < 0 {
		return nil
	}
	c := *g
	c.Kernel = f(g.Kernel)
	return &c
}
