package dispatch

import (
	"fmt"
	"math"
	"slices"

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
// changed one, 500×4544×18176, 0.56 → 0.85. It also replaces the split-K kernels with a launch-time
// rule, whose blocks are tiles × the slices that rule picks on the tuning GPU's SMs: their rule aims
// at full waves in slices, but it takes one slice where splitting K does not pay, and then the tiles
// alone may leave a wave mostly empty (768×3072×4096: 288 tiles of 64×128 on 396 slots, 0.81×; the
// stream-K kernel 1.07×). With them the threshold is 13/10 (at 7/5 those cliffs at 1/1.38 were
// missed), the guard's own tiles may cover at most a quarter of M×N beyond it (guardEdgeDen: a
// 64-row tile on M ≤ 32 halved 8×152064×3584), and it acts only where its stream-K schedule splits
// some tile's K (GuardKernel.splits: 600 tiles on 396 blocks run whole, 3200×1536×3072 0.83× against
// the split-K kernel's 1.01×). On the training shapes where it would replace a kernel measured
// faster (the pinned cells' measured winners: 1600×3072×1024 1.10 → 0.88 otherwise), it does not:
// WaveGuard.Keep lists them. Cross-validated on the H100 corpus this took held out 1.0695 → 1.0712
// (128×32000×4096 0.79 → 0.93, 128×13824×5120 0.87 → 1.03; 512×4096×4096 1.00 → 0.99), exported
// unchanged; through the header on an H200, 43 off-corpus grid shapes whose launch it moves 0.906 →
// 1.005 (1536×1536×3072 0.71 → 0.93). Over fewer output
// tiles than SMs a stream-K kernel splits each tile's K many ways and its fix-up costs more than the
// wave it saves (128×128×50000, 2 tiles: 0.29×), hence MinTiles; a first version left out the deep-K
// products (K ≥ 4·max(M, N)) instead, which also left out the unseen 500×4544×18176 (K = 4·4544,
// 144 blocks of a fixed 128×256 split-K kernel on 132 SMs: 0.56×), whose 288 stream-K tiles fill
// the SMs.
//
// The guard also acts, with the other conditions holding, where the tables' kernel's tiles cover at
// least twice M×N (Cover): a 128-row tile on a 64-row problem computes as many zero rows as real
// ones, whatever its waves. The tables fill the cells of such problems from the corpus's products
// of whole tiles around them (TT 64×18176×4544, Falcon-7B's MLP at 64 tokens: a 128×64 split-K
// kernel at 0.40× cuBLAS through the header on the H100, where a 64-row tile ran 0.88×). No corpus
// shape of the H100 NN rule meets it (held out 1.0796 and exported 1.1519 unchanged); the guard's
// edge test keeps it to problems its own tile fits (M ≥ 52 for 64 rows).
const (
	// guardWork is the smallest M·N·K the guard acts on (about 2 GFLOP).
	guardWork = 1 << 30
	// The guard acts when ceil(blocks/slots)·slots·guardWavesDen ≥ blocks·guardWavesNum.
	guardWavesNum, guardWavesDen = 13, 10
	// guardEdgeDen: the guard acts only where its own tiles cover at most M·N/guardEdgeDen beyond
	// M×N.
	guardEdgeDen = 4
	// guardCover: the guard also acts where the replaced kernel's tiles cover at least guardCover ×
	// M·N (a 128-row tile on 64 rows), whatever its waves.
	guardCover = 2
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
	// EdgeDen: the guard acts only where its own tiles cover at most M·N/EdgeDen beyond M×N.
	EdgeDen int `json:"edge_den"`
	// SMs is the SM count (the tuning GPU's) for which the guard computes a launch-time split-K
	// kernel's slices.
	SMs int `json:"sms"`
	// Cover > 0: the guard also acts (the other conditions holding) where the replaced kernel's
	// tiles cover at least Cover × M·N, whatever its waves (0: waves only).
	Cover int `json:"cover,omitempty"`
	// Keep lists training shapes (M, N, K; sorted) on which the guard does not act: those where it
	// would replace a kernel measured faster there than its own (or its own was not measured).
	Keep [][3]int `json:"keep,omitempty"`
	// Kernels[j] is what the guard knows of kernel j (indexed as the rule's kernels; Slots 0, or j
	// past the end: the guard never replaces it); Kernels[Kernel] holds the guard's own tile.
	Kernels []GuardKernel `json:"-"`
}

// GuardKernel is a fixed-grid kernel as the guard sees it: its tile, its grid z, and its slots
// (SMs × blocks per SM).
type GuardKernel struct {
	TileRows, TileCols, GridZ, Slots int
	// Split is a launch-time split-K kernel's rule (nil: GridZ holds).
	Split *variant.SplitRule
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
	// The output area the guard's partial tiles cover beyond M×N: at most a 1/EdgeDen of M×N (below
	// 2^42 for M and N up to 2^31, so the product does not overflow).
	area := int64(m) * int64(n)
	edge := int64((m+own.TileRows-1)/own.TileRows*own.TileRows)*int64((n+own.TileCols-1)/own.TileCols*own.TileCols) - area
	if edge*int64(g.EdgeDen) > area || g.keep(m, n, k) || !own.splits(m, n, k, g.SMs) {
		return false
	}
	// The replaced kernel's tiles over M×N: at most (2^31 + 255)^2 < 2^63, divided before comparing.
	if g.Cover > 0 && int64(variant.CeilDiv(m, gk.TileRows)*gk.TileRows)*int64(variant.CeilDiv(n, gk.TileCols)*gk.TileCols)/int64(g.Cover) >= area {
		return true
	}
	tiles := int64((m+gk.TileRows-1)/gk.TileRows) * int64((n+gk.TileCols-1)/gk.TileCols)
	blocks := tiles * int64(max(gk.GridZ, 1))
	if gk.Split != nil {
		blocks = tiles * int64(gk.Split.Slices(int(tiles), gk.TileRows*gk.TileCols, k, g.SMs))
	}
	s := int64(gk.Slots)
	return (blocks+s-1)/s*s*int64(g.WavesDen) >= blocks*int64(g.WavesNum)
}

// splits says whether the guard's stream-K kernel, on M×N×K and sms SMs, splits any tile's K
// between blocks (streamk.cuh's schedule): where its tiles fill its blocks' waves exactly, or the
// last wave more than half, it runs every tile whole, with the waves of a fixed-grid kernel of its
// tile (1600×3072×1024 and 3200×1536×3072: 600 tiles of 64×128 on 396 blocks, 0.80-0.82× of the
// split-K kernel they would replace). A guard kernel without a stream-K rule always counts as
// splitting.
func (gk *GuardKernel) splits(m, n, k, sms int) bool {
	if gk.Split == nil || !gk.Split.StreamK {
		return true
	}
	return gk.Split.StreamKSplits(variant.CeilDiv(m, gk.TileRows)*variant.CeilDiv(n, gk.TileCols), gk.TileRows*gk.TileCols, k, sms)
}

// keep says whether M×N×K is one of the guard's exempt training shapes.
func (g *WaveGuard) keep(m, n, k int) bool {
	_, found := slices.BinarySearchFunc(g.Keep, [3]int{m, n, k}, compareShape)
	return found
}

// compareShape orders shapes by M, then N, then K.
func compareShape(x, y [3]int) int { return slices.Compare(x[:], y[:]) }

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
	g := &WaveGuard{Kernel: at, MinWork: guardWork, WavesNum: guardWavesNum, WavesDen: guardWavesDen, MinTiles: d.SMs, EdgeDen: guardEdgeDen,
		Cover: guardCover, SMs: d.SMs, Kernels: make([]GuardKernel, len(d.Kernels))}
	for j := range d.Kernels {
		kn := &d.Kernels[j]
		if kn.Split == nil {
			g.Kernels[j] = GuardKernel{TileRows: kn.TileRows, TileCols: kn.TileCols, GridZ: max(kn.GridZ, 1), Slots: d.SMs * max(kn.BlocksPerSM, 1)}
		} else if !kn.Split.StreamK && kn.General {
			g.Kernels[j] = GuardKernel{TileRows: kn.TileRows, TileCols: kn.TileCols, GridZ: 1, Slots: d.SMs * max(kn.BlocksPerSM, 1), Split: kn.Split}
		}
	}
	g.Kernels[at] = GuardKernel{TileRows: d.Kernels[at].TileRows, TileCols: d.Kernels[at].TileCols, GridZ: 1, Split: d.Kernels[at].Split}
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
	if g.MinWork < 1 || g.WavesNum < 1 || g.WavesDen < 1 || g.MinTiles < 0 || g.EdgeDen < 1 || g.SMs < 1 || g.Cover < 0 {
		return fmt.Errorf("dispatch rule: wave guard thresholds %d, %d/%d, %d tiles, edge 1/%d, %d SMs", g.MinWork, g.WavesNum, g.WavesDen, g.MinTiles, g.EdgeDen, g.SMs)
	}
	for i := 1; i < len(g.Keep); i++ {
		if compareShape(g.Keep[i-1], g.Keep[i]) >= 0 {
			return fmt.Errorf("dispatch rule: wave guard keeps %v before %v", g.Keep[i-1], g.Keep[i])
		}
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

// guardKeep lists the training shapes on which r's wave guard would launch its kernel in place
// of one measured faster there (or with its own kernel not measured there), sorted.
func (m *model) guardKeep(r *Rule) [][3]int {
	d := m.d
	g := r.Guard
	var out [][3]int
	for _, i := range m.train {
		s := d.Samples[i].Shape
		takes := func(j int) bool { return d.supports(i, j) }
		a, u, gen := r.Pick(s.M, s.N, s.K)
		j := dispatchChain(a, u, gen, r.Default, d.vec(i), takes, func(j int) bool { return d.Kernels[j].Fits(s.M, s.N) })
		if j < 0 || r.Bulk.Takes(j, s.M, s.N, s.K) && takes(r.Bulk.Kernel) {
			continue
		}
		if !g.Replaces(j, s.M, s.N, s.K) || !takes(g.Kernel) {
			continue
		}
		tj, tg := d.Times[i][j], d.Times[i][g.Kernel]
		if tj > 0 && (tg <= 0 || tj < tg) {
			out = append(out, [3]int{s.M, s.N, s.K})
		}
	}
	slices.SortFunc(out, compareShape)
	return slices.Compact(out)
}
