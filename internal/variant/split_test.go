package variant

import "testing"

// TestSplitBalanced: under Balance the rule fills the SMs evenly, then deeply enough (the cases of
// the doc comment: 132 SMs, a target of 3 blocks of a 64x128 tile each, K tiles of 16).
func TestSplitBalanced(t *testing.T) {
	r := &SplitRule{Max: 512, KStep: 16, MinK: 128, BlocksPerSM: 3, WorkspaceFloats: 1 << 24, Balance: true}
	tf := 64 * 128
	for _, c := range []struct{ tiles, k, want int }{
		{195, 1024, 2},  // 74 % of two rounds of one block per SM; 98 % of three in two slices
		{256, 1024, 1},  // 97 % of two rounds unsplit
		{216, 4096, 3},  // 82 % unsplit and in two slices, 98 % in three
		{32, 50000, 12}, // 97 % of one round in four slices, times three for the target of 3 per SM
		{1000, 4096, 1}, // more tiles than the target: never split
		{32, 256, 2},    // K allows two slices of MinK only
	} {
		if got := r.Slices(c.tiles, tf, c.k, 132); got != c.want {
			t.Errorf("%d tiles, K %d: %d slices, want %d", c.tiles, c.k, got, c.want)
		}
	}
	// One tile, K deep: about the target, 3 blocks on each SM.
	if got := r.Slices(1, tf, 1<<20, 132); got < 370 || got > 396 {
		t.Errorf("1 tile, K 2^20: %d slices, want about 396", got)
	}
	// The workspace bounds the slices as in the default rule.
	small := *r
	small.WorkspaceFloats = 32 * tf * 5
	if got := small.Slices(32, tf, 50000, 132); got > 5 {
		t.Errorf("workspace for 5 slices: %d", got)
	}
	// Without Balance, BlocksPerSM is the target: ⌈3·132/195⌉ = 3 slices, 2 in a workspace of 2.6.
	plain := *r
	plain.Balance = false
	if got := plain.Slices(195, tf, 1024, 132); got != 3 {
		t.Errorf("default rule: %d slices, want 3", got)
	}
	plain.WorkspaceFloats = 1 << 22
	if got := plain.Slices(195, tf, 1024, 132); got != 2 {
		t.Errorf("default rule, 4 Mi floats of workspace: %d slices, want 2", got)
	}
}

// TestStreamKCTAs: a stream-K rule's grid is BlocksPerSM blocks on every SM, bounded by Max, by the
// K steps of the whole problem and by the workspace (two partial tiles a block), at least 1; Grid
// launches it along x.
func TestStreamKCTAs(t *testing.T) {
	r := &SplitRule{Max: 408, KStep: 16, MinK: 64, BlocksPerSM: 3, WorkspaceFloats: 2 * 408 * 64 * 128, StreamK: true}
	tf := 64 * 128
	for _, c := range []struct{ tiles, k, sms, want int }{
		{153, 1025, 132, 396}, // 1025^3 in 64x128 tiles: three blocks on each SM
		{153, 1025, 200, 408}, // more SMs than Max covers: Max
		{1, 16, 132, 1},       // one tile, one K step: one block
		{3, 40, 132, 9},       // 3 tiles of 3 K steps
		{1, 1, 0, 1},          // 0 SMs count as 1
	} {
		if got := r.CTAs(c.tiles, tf, c.k, c.sms); got != c.want {
			t.Errorf("%d tiles, K %d, %d SMs: %d blocks, want %d", c.tiles, c.k, c.sms, got, c.want)
		}
	}
	small := *r
	small.WorkspaceFloats = 2 * 100 * tf
	if got := small.CTAs(1000, tf, 4096, 132); got != 100 {
		t.Errorf("workspace for 100 blocks: %d", got)
	}
	// Huge problems do not overflow: tiles · K steps is never formed when it exceeds the grid.
	if got := r.CTAs(1<<40, tf, 1<<31-1, 132); got != 396 {
		t.Errorf("huge problem: %d blocks", got)
	}
	v := &Variant{Tile: Tile{Rows: 64, Cols: 128}, Split: r, GridZ: 1}
	if x, y, z := v.Grid(1025, 1025, 1025, 132); x != 396 || y != 1 || z != 1 {
		t.Errorf("Grid: %dx%dx%d, want 396x1x1", x, y, z)
	}
}

// TestStreamKSplits: a stream-K launch of 396 blocks (3 per SM on 132) splits a tile's K when the
// tiles are fewer than the blocks or the last wave of whole tiles is at most half full.
func TestStreamKSplits(t *testing.T) {
	r := &SplitRule{Max: 512, KStep: 16, MinK: 64, BlocksPerSM: 3, WorkspaceFloats: 1 << 30, StreamK: true}
	for _, c := range []struct {
		tiles int
		want  bool
	}{{288, true}, {396, false}, {400, true}, {594, true}, {600, false}, {792, false}} {
		if got := r.StreamKSplits(c.tiles, 64*128, 4096, 132); got != c.want {
			t.Errorf("%d tiles on %d blocks: splits %v, want %v", c.tiles, r.CTAs(c.tiles, 64*128, 4096, 132), got, c.want)
		}
	}
}
