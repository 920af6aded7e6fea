package dispatch

import (
	"math"
	"testing"

	"tilegen/internal/variant"
)

// TestWaveFeatureUsesSplitRule: the wave feature of a grid_z: auto kernel counts the slices its
// split rule launches on the shape (the same number variant.Variant.Grid gives, which the exported
// launchers compute), not its fixed GridZ.
func TestWaveFeatureUsesSplitRule(t *testing.T) {
	rule := &variant.SplitRule{Max: 256, KStep: 32, MinK: 64, BlocksPerSM: 4, WorkspaceFloats: 4 << 20}
	v := variant.Variant{Name: "gemvm_like", Tile: variant.Tile{Rows: 1, Cols: 128}, Split: rule}
	kn := Kernel{Name: v.Name, TileRows: 1, TileCols: 128, GridZ: 1, Split: rule, BlocksPerSM: 2}
	fixed := Kernel{Name: "fixed", TileRows: 1, TileCols: 128, GridZ: 1, BlocksPerSM: 2}
	d := &Data{SMs: 132, Kernels: []Kernel{kn, fixed}}
	for _, s := range [][3]int{{1, 4096, 4096}, {1, 8192, 8192}, {4, 4096, 4096}, {16, 11008, 4096}, {1, 128, 64}, {1, 100, 1}, {3, 5000, 100000}} {
		m, n, k := s[0], s[1], s[2]
		_, _, z := v.Grid(m, n, k, d.SMs)
		if got := kn.Slices(m, n, k, d.SMs); got != z {
			t.Errorf("%dx%dx%d: Kernel.Slices %d, variant.Grid z %d", m, n, k, got, z)
		}
		if got := fixed.Slices(m, n, k, d.SMs); got != 1 {
			t.Errorf("%dx%dx%d: fixed kernel has %d slices", m, n, k, got)
		}
		// The feature from first principles: tiles = ⌈M/rows⌉·⌈N/cols⌉·z, slots = SMs·blocks/SM.
		tiles := float64(variant.CeilDiv(m, 1)*variant.CeilDiv(n, 128)) * float64(z)
		slots := float64(d.SMs * 2)
		want := math.Log(math.Ceil(tiles/slots) * slots / tiles)
		if lq, _ := d.features(0, m, n, k); math.Abs(lq-want) > 1e-12 {
			t.Errorf("%dx%dx%d: log q %.6f, want %.6f (z=%d)", m, n, k, lq, want, z)
		}
	}
	// On 1×4096×4096 the rule launches 32 tiles × 16 slices = 512 blocks on 264 slots (1.94 waves):
	// the feature must see that, which a GridZ of 1 (32 blocks, an eighth of one wave) hides.
	lqRule, _ := d.features(0, 1, 4096, 4096)
	lqFixed, _ := d.features(1, 1, 4096, 4096)
	if z := kn.Slices(1, 4096, 4096, 132); z != 16 {
		t.Fatalf("1x4096x4096: %d slices, want 16", z)
	}
	if math.Abs(lqRule-math.Log(2*264.0/512)) > 1e-12 || lqFixed == lqRule {
		t.Errorf("1x4096x4096: log q with the rule %.4f, fixed %.4f", lqRule, lqFixed)
	}
}
