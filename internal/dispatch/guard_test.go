package dispatch

import (
	"math"
	"testing"

	"tilegen/internal/variant"
)

func TestWaveGuardReplaces(t *testing.T) {
	// Kernel 0: 128×128 tiles, one block per SM on 132 SMs; kernel 1: the guard, 64×128 tiles; kernel
	// 2: no slots.
	g := &WaveGuard{Kernel: 1, MinWork: guardWork, WavesNum: 7, WavesDen: 5, MinTiles: 132,
		Kernels: []GuardKernel{{128, 128, 1, 132}, {64, 128, 1, 0}, {}}}
	for _, c := range []struct {
		j, m, n, k int
		want       bool
	}{
		{0, 1536, 1792, 1024, true},   // 12·14 = 168 blocks: two waves for 1.27 of work (q 1.57)
		{0, 2048, 1152, 1536, true},   // 144 blocks (q 1.83)
		{0, 2048, 2048, 1024, false},  // 256 blocks: q 1.03
		{0, 1536, 1792, 256, false},   // M·N·K below guardWork
		{0, 1536, 1792, 8192, true},   // deep K, 336 guard tiles
		{0, 256, 256, 65536, false},   // 4 blocks: a cliff, but 8 guard tiles on 132 SMs
		{1, 1536, 1792, 1024, false},  // the guard itself
		{2, 1536, 1792, 1024, false},  // a kernel without slots (a split or stream-K kernel)
		{3, 1536, 1792, 1024, false},  // past the guard's entries
		{-1, 1536, 1792, 1024, false}, // nothing launched
		{0, 1 << 30, 1 << 30, 1 << 30, false},
	} {
		if got := g.Replaces(c.j, c.m, c.n, c.k); got != c.want {
			t.Errorf("Replaces(%d, %dx%dx%d) = %v, want %v", c.j, c.m, c.n, c.k, got, c.want)
		}
	}
	// The work test does not overflow at the largest dimensions.
	if !large(math.MaxInt32, 128, 1<<30, guardWork) || large(1<<10, 1<<9, 1<<10, guardWork) || !large(1<<10, 1<<10, 1<<10, guardWork) {
		t.Error("large: the work test overflows or misses")
	}
	var none *WaveGuard
	if none.Replaces(0, 1536, 1792, 1024) {
		t.Error("a nil guard replaces")
	}
	// Remap keeps the guard with the kernels' new indices and drops what f drops.
	r := &Rule{Table: []int{0}, Unaligned: []int{0}, General: []int{0}, Default: 0, Guard: g}
	m := r.Remap(func(j int) int { return []int{2, 0, -1}[j] })
	if m.Guard == nil || m.Guard.Kernel != 0 || !m.Guard.Replaces(2, 1536, 1792, 1024) || m.Guard.Replaces(1, 1536, 1792, 1024) || m.Guard.Replaces(0, 1536, 1792, 1024) {
		t.Errorf("remapped guard %+v", m.Guard)
	}
	if d := r.Remap(func(j int) int { return []int{0, -1, 1}[j] }); d.Guard != nil {
		t.Errorf("a guard whose kernel is dropped survives: %+v", d.Guard)
	}
	if u := r.Used(); len(u) != 2 || u[1] != 1 {
		t.Errorf("Used %v, want the table's kernel and the guard", u)
	}
}

// TestWaveGuardFit: on the synthetic GPU with a stream-K kernel (no wave quantization, a little
// slower per wave), Fit makes it the guard, and a large problem the tables send to a fixed-grid
// kernel with a mostly empty last wave runs it instead, while full waves keep the tables' kernel.
func TestWaveGuardFit(t *testing.T) {
	shapes := synthCorpus(120, 7)
	for _, s := range [][3]int{{1536, 1792, 1024}, {2048, 2304, 768}, {512, 5120, 1280}, {4096, 4096, 1024}, {2048, 2048, 2048}} {
		shapes = append(shapes, protoShape(s[0], s[1], s[2]))
	}
	d := synthData(shapes)
	sk := len(d.Kernels)
	d.Kernels = append(d.Kernels, Kernel{Name: "streamk64x128", TileRows: 64, TileCols: 128, BlocksPerSM: 2, General: true, Robust: true,
		Split:    &variant.SplitRule{Max: 264, KStep: 16, MinK: 64, BlocksPerSM: 2, WorkspaceFloats: 1 << 30, StreamK: true},
		Supports: func(m, n, k int) bool { return true }})
	for i, s := range d.Samples {
		tiles := float64((s.Shape.M+63)/64) * float64((s.Shape.N+127)/128)
		compute := tiles * 64 * 128 * float64(s.Shape.K) * 2 / (synthSMs * synthSMRate * 0.7)
		d.Times[i] = append(d.Times[i], 1e3*(synthLaunch+10e-6+compute)*noise("streamk", s.Shape))
	}
	r, err := Fit(d, nil, Config{BucketsPerOctave: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.Guard == nil || r.Guard.Kernel != sk {
		t.Fatalf("guard %+v, want kernel %d", r.Guard, sk)
	}
	takes := func(m, n, k int) func(j int) bool { return func(j int) bool { return d.Kernels[j].Supports(m, n, k) } }
	fits := func(m, n int) func(j int) bool { return func(j int) bool { return d.Kernels[j].Fits(m, n) } }
	replaced, kept := 0, 0
	for m := 512; m <= 8192; m += 256 {
		for _, n := range []int{1280, 1792, 2304, 3072, 5120} {
			k := 1024
			a, u, g := r.Pick(m, n, k)
			j := dispatchChain(a, u, g, r.Default, takes(m, n, k), fits(m, n))
			got := r.Dispatch(m, n, k, takes(m, n, k), fits(m, n))
			kn := &d.Kernels[j]
			if kn.Split != nil {
				if got != j {
					t.Errorf("%dx%dx%d: %s has a launch-time grid, the guard replaced it", m, n, k, kn.Name)
				}
				continue
			}
			blocks := float64(kn.Blocks(m, n, k, d.SMs))
			slots := float64(d.SMs * kn.BlocksPerSM)
			cliff := math.Ceil(blocks/slots)*slots >= 1.4*blocks
			switch {
			case cliff && got != sk:
				t.Errorf("%dx%dx%d: %s fills its waves to %.2f, the guard kept it", m, n, k, kn.Name, blocks/(math.Ceil(blocks/slots)*slots))
			case !cliff && got != j:
				t.Errorf("%dx%dx%d: %s fills its waves, the guard replaced it", m, n, k, kn.Name)
			case cliff:
				replaced++
			default:
				kept++
			}
		}
	}
	if replaced == 0 || kept == 0 {
		t.Errorf("the probes replaced %d and kept %d: both paths must be exercised", replaced, kept)
	}
	a, u, g := r.Pick(64, 64, 64)
	if got, j := r.Dispatch(64, 64, 64, takes(64, 64, 64), fits(64, 64)), dispatchChain(a, u, g, r.Default, takes(64, 64, 64), fits(64, 64)); got != j {
		t.Errorf("64x64x64: the guard replaced %s", d.Kernels[j].Name)
	}
}
