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
