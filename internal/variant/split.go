package variant

// SplitRule chooses a variant's number of split-K slices (its grid z) at launch, from the shape and
// the GPU's SM count, where variants.yaml's geometry says grid_z: auto. Slices is the one
// definition: the worker launches by it, the planner reasons with it, and the export emits it into
// the .cuh and the Go package as code that must agree with it (internal/export tests that they do
// on many shapes).
//
// The rule: aim for BlocksPerSM·sms blocks in all (tiles × slices), never more than Max slices,
// never a slice shorter than MinK elements of K (nor below KStep), and never more partial tiles than
// the kernel's workspace holds (tiles · slices · tile_rows · tile_cols ≤ WorkspaceFloats). Under two
// slices it is one. Slices are whole multiples of KStep, all of the same length but the last, and
// none empty: the count is rounded down to the number that per-slice length needs. A kernel
// divides K the same way: per = ⌈⌈K/KStep⌉/z⌉ steps of KStep per slice, slice s starting at
// s·per·KStep.
type SplitRule struct {
	// Max is the most slices (at most 65535, the grid's z limit).
	Max int `json:"max"`
	// KStep: a slice is a whole number of KStep elements of K (the kernel's K tile).
	KStep int `json:"k_step"`
	// MinK is the least K per slice the rule aims for.
	MinK int `json:"min_k"`
	// BlocksPerSM is how many blocks per SM the rule aims for, over all tiles and slices (under
	// Balance, the depth it fills up to once the SMs are evenly loaded).
	BlocksPerSM int `json:"blocks_per_sm"`
	// Balance chooses the slices that load the SMs most evenly instead (see balanced).
	Balance bool `json:"balance,omitempty"`
	// WorkspaceFloats is the kernel's partial-sum workspace in floats; a launch needs
	// tiles · slices · tile_rows · tile_cols of them (a stream-K launch: 2 · blocks · tile_rows ·
	// tile_cols).
	WorkspaceFloats int `json:"workspace_floats"`
	// StreamK: the kernel is persistent stream-K (family streamk). Its grid is CTAs blocks along x,
	// not tiles × slices: each block takes whole output tiles, then an even share of the leftover
	// tiles' K steps (see CTAs). Max is then the most blocks, MinK the least K a block's share of a
	// leftover tile may be.
	StreamK bool `json:"stream_k,omitempty"`
}

// CTAs is a stream-K rule's block count for tiles output tiles of tileFloats elements, a K of k
// and sms multiprocessors (sms < 1 counts as 1): BlocksPerSM blocks on every SM, at most Max, at
// most one block per K step of the whole problem (tiles · ⌈K/KStep⌉), at most the blocks whose
// partial tiles the workspace holds (two tiles a block: WorkspaceFloats / (2 · tileFloats)); at
// least 1. Integer arithmetic only, in 64 bits, as Slices.
//
// The kernel, with G blocks and T tiles, runs the first T − T mod G tiles data-parallel (block x
// takes tiles x, x + G, …; when T < G, none; when the last wave is more than half full, all) and
// spreads the other tiles' K steps evenly over blocks, at least MinK of K each (stream-K): a
// leftover tile's blocks add their partial tiles in block order, the last to arrive storing it, so
// the sum never depends on timing.
func (r *SplitRule) CTAs(tiles, tileFloats, k, sms int) int {
	if r == nil || tiles < 1 || tileFloats < 1 || k < 1 {
		return 1
	}
	kSteps := int64(CeilDiv(k, max(r.KStep, 1)))
	g := min(int64(max(r.BlocksPerSM, 1))*int64(max(sms, 1)), int64(r.Max), int64(r.WorkspaceFloats)/(2*int64(tileFloats)))
	if int64(tiles) <= g/kSteps { // tiles·kSteps ≤ g: no overflow, and it bounds g
		g = int64(tiles) * kSteps
	}
	return int(max(g, 1))
}

// StreamKSplits says whether a stream-K launch (CTAs blocks) over tiles output tiles splits any
// tile's K between blocks: when the tiles are fewer than the blocks, or the last wave of whole
// tiles is at most half full (streamk.cuh's schedule, see CTAs). Otherwise every tile runs whole,
// in the waves of a fixed grid of the same tile.
func (r *SplitRule) StreamKSplits(tiles, tileFloats, k, sms int) bool {
	g := int64(r.CTAs(tiles, tileFloats, k, sms))
	t := int64(tiles)
	return t < g || t%g > 0 && 2*(t%g) <= g
}

// Slices is the rule's grid z for tiles output tiles of tileFloats elements each, a K of k and sms
// multiprocessors (sms < 1 counts as 1). Integer arithmetic only, in 64 bits, so that the exported
// C++ and Go copies compute the same number.
func (r *SplitRule) Slices(tiles, tileFloats, k, sms int) int {
	if r == nil || tiles < 1 || tileFloats < 1 || k < 1 {
		return 1
	}
	sms = max(sms, 1)
	kSteps := CeilDiv(k, max(r.KStep, 1))
	zmax := min(r.Max, kSteps, k/max(r.MinK, 1), r.WorkspaceFloats/(tiles*tileFloats))
	if r.Balance {
		return r.balanced(tiles, kSteps, zmax, sms)
	}
	z := min(CeilDiv(r.BlocksPerSM*sms, tiles), zmax)
	if z < 2 {
		return 1
	}
	return CeilDiv(kSteps, CeilDiv(kSteps, z))
}

// balanced is Slices under Balance. It fills the SMs evenly, then deeply enough: of the slice
// counts up to zmax and to four times the occupancy target (BlocksPerSM blocks on each SM), it takes
// the one whose blocks (tiles × slices) fill their rounds of one block per SM best,
// blocks / (⌈blocks / sms⌉ · sms), a larger count only when it fills them more than 1/16 better (a
// slice adds partial sums to reduce); then, while its blocks are fewer than the target, it
// multiplies the count by the largest whole factor that stays within the target and zmax (one
// block per SM hides too little latency). On 132 SMs with a target of 3: 195 tiles fill 74 % of
// their two rounds and 390 blocks 98 % of three, so two slices; 256 tiles fill 97 % unsplit, so one
// (on the H100 corpus splitka's 64x128 tiles ran 195 tiles 1.17x faster in two slices and 256 tiles
// 1.33x faster in one); 32 tiles deep in K fill 97 % with four slices, times three: twelve.
// Integer arithmetic only, as Slices.
func (r *SplitRule) balanced(tiles, kSteps, zmax, sms int) int {
	target := int64(max(r.BlocksPerSM, 1)) * int64(sms)
	t, s := int64(tiles), int64(sms)
	zmax = int(min(int64(zmax), (4*target+t-1)/t))
	best, bestBlocks, bestCap := 1, t, (t+s-1)/s*s
	for z := 2; z <= zmax; z++ {
		zz := CeilDiv(kSteps, CeilDiv(kSteps, z)) // the slices a count of z gives: none empty
		blocks := t * int64(zz)
		capacity := (blocks + s - 1) / s * s
		if blocks*bestCap*16 > bestBlocks*capacity*17 {
			best, bestBlocks, bestCap = zz, blocks, capacity
		}
	}
	if f := int(target / bestBlocks); f > 1 {
		f = min(f, zmax/best)
		if f > 1 {
			best = CeilDiv(kSteps, CeilDiv(kSteps, best*f))
		}
	}
	return best
}

// SplitKUntunedTilesPerSM: a variant with a fixed split-K grid (grid z above 1 and no launch-time
// rule) is not tuned on a problem whose unsplit grid already has at least this many output tiles
// per SM (splitting K only adds partial sums to reduce there). The tuner leaves such runs out, and
// the dispatch rule never picks such a variant for a table cell that holds only such problems, so
// that an export does not launch a kernel where the tuner would not have timed it.
const SplitKUntunedTilesPerSM = 4

// SplitKUntuned says whether a fixed split-K grid of gx·gy output tiles on sms multiprocessors is
// one the tuner leaves out (SplitKUntunedTilesPerSM); a grid z of 1, or one chosen at launch
// (split != nil), never is.
func SplitKUntuned(gridZ int, split *SplitRule, gx, gy, sms int) bool {
	return gridZ > 1 && split == nil && sms > 0 && int64(gx)*int64(gy) >= int64(SplitKUntunedTilesPerSM)*int64(sms)
}
