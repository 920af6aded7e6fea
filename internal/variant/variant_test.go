package variant

import (
	"strings"
	"testing"
)

func TestGridAndSupports(t *testing.T) {
	v := Variant{Name: "t", Block: Dim2{X: 256, Y: 1}, Tile: Tile{Rows: 128, Cols: 256}, GridZ: 0,
		Requires: Requirements{MMultiple: 1, NMultiple: 4, KMultiple: 1, LDMultiple: 4}}
	if x, y, z := v.Grid(1000, 1000, 1000, 132); x != 4 || y != 8 || z != 1 {
		t.Errorf("grid %d %d %d, want 4 8 1", x, y, z)
	}
	v.GridZ = 3
	if _, _, z := v.Grid(1, 1, 1, 132); z != 3 {
		t.Errorf("grid z %d", z)
	}
	if v.Threads() != 256 {
		t.Errorf("threads %d", v.Threads())
	}
	for _, tc := range []struct {
		m, n, k, lda, ldb, ldc int
		err                    string
	}{
		{128, 256, 7, 8, 256, 256, ""},
		{0, 4, 4, 4, 4, 4, "at least 1"},
		{4, 4, 8, 4, 4, 4, "too small"},
		{4, 6, 4, 4, 8, 8, "N=6 is not a multiple of 4"},
		{4, 4, 4, 6, 4, 4, "lda=6 is not a multiple of 4"},
		{128 * 65536, 4, 4, 4, 4, 4, "exceeds 65535"},
	} {
		err := v.Supports(tc.m, tc.n, tc.k, tc.lda, tc.ldb, tc.ldc)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%+v: %v", tc, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%+v: got %v, want %q", tc, err, tc.err)
		}
	}
	if v.Requires.Arbitrary() || !(Requirements{1, 1, 1, 1}).Arbitrary() || !(Requirements{}).Arbitrary() {
		t.Error("Arbitrary")
	}
}

func TestIsIdentAndParams(t *testing.T) {
	for s, want := range map[string]bool{"micro1d_t64_r16": true, "_x": true, "9a": false, "a-b": false, "": false,
		`x"; system("rm`: false, "a/../b": false, strings.Repeat("a", 201): false} {
		if IsIdent(s) != want {
			t.Errorf("IsIdent(%q) = %v", s, !want)
		}
	}
	v := Variant{Params: []Param{{"BM", 128}, {"BK", 16}}}
	if p, ok := v.Param("BK"); !ok || p != 16 {
		t.Errorf("Param BK = %d %v", p, ok)
	}
	if _, ok := v.Param("BN"); ok {
		t.Error("missing param found")
	}
	if v.ParamString() != "BM=128 BK=16" {
		t.Errorf("ParamString %q", v.ParamString())
	}
	vs := []Variant{{Name: "b"}, {Name: "a"}}
	SortByName(vs)
	if vs[0].Name != "a" {
		t.Error("SortByName")
	}
}

func TestSplitRule(t *testing.T) {
	// deepk_32x32x32_t4x4_s4_b8's rule on an H100 (132 SMs).
	v := Variant{Tile: Tile{Rows: 32, Cols: 32}, GridZ: 512,
		Split: &SplitRule{Max: 512, KStep: 32, MinK: 128, BlocksPerSM: 8, WorkspaceFloats: 1 << 22}}
	for _, c := range []struct {
		m, n, k, sms, z int
		why             string
	}{
		// 1056 blocks wanted, capped at 512 slices; 3125 steps of 32 in slices of 7 steps: 447 slices.
		{32, 32, 100000, 132, 447, "Gram: one tile, capped by max, rounded down to non-empty slices"},
		{64, 196, 4608, 132, 36, "14 tiles: 1056/14 = 76 wanted, K/min_k = 36"},
		{48, 48, 48, 132, 1, "K below two min_k slices"},
		{4096, 4096, 4096, 132, 1, "16384 tiles already fill the GPU"},
		{32, 32, 100000, 0, 8, "no SM count: one SM's worth of blocks"},
		{2048, 2048, 100000, 132, 1, "4096 tiles of 1024 floats fill the workspace already"},
		{512, 512, 100000, 132, 5, "256 tiles: 1056/256 = 5 wanted, within the workspace (16)"},
	} {
		if _, _, z := v.Grid(c.m, c.n, c.k, c.sms); z != c.z {
			t.Errorf("%dx%dx%d on %d SMs: z = %d, want %d (%s)", c.m, c.n, c.k, c.sms, z, c.z, c.why)
		}
	}
	var nilRule *SplitRule
	if z := nilRule.Slices(1, 1, 1000, 132); z != 1 {
		t.Errorf("nil rule: %d slices", z)
	}
}
