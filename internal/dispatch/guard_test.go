package dispatch

import (
	"math"
	"slices"
	"testing"

	"tilegen/internal/variant"
)

func TestWaveGuardReplaces(t *testing.T) {
	// Kernel 0: 128×128 tiles, one block per SM on 132 SMs; kernel 1: the guard, 64×128 tiles; kernel
	// 2: no slots.
	g := &WaveGuard{Kernel: 1, MinWork: guardWork, WavesNum: guardWavesNum, WavesDen: guardWavesDen, MinTiles: 132, EdgeDen: guardEdgeDen, SMs: 132,
		Kernels: []GuardKernel{{TileRows: 128, TileCols: 128, GridZ: 1, Slots: 132}, {TileRows: 64, TileCols: 128, GridZ: 1}, {}}}
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
	// A launch-time split-K kernel (kernel 3, 64×128 tiles, three blocks per SM): its blocks are
	// tiles × the slices its rule picks on the guard's SMs. A fixed-grid kernel with 1200 slots
	// (kernel 4) shows the edge test: the guard's 128 columns on N = 130 would cover twice M×N.
	split := &variant.SplitRule{Max: 512, KStep: 16, MinK: 128, BlocksPerSM: 3, Balance: true, WorkspaceFloats: 4194304}
	g.Kernels = append(g.Kernels, GuardKernel{TileRows: 64, TileCols: 128, GridZ: 1, Slots: 396, Split: split},
		GuardKernel{TileRows: 128, TileCols: 128, GridZ: 1, Slots: 1200})
	for _, c := range []struct {
		j, m, n, k int
		want       bool
	}{
		{3, 768, 3072, 4096, true},    // 288 tiles, one slice: 288 blocks on 396 slots
		{3, 1024, 1024, 1024, false},  // 128 tiles, three slices: 384 blocks
		{4, 100000, 256, 1024, true},  // 1564 blocks on 1200 slots
		{4, 100000, 130, 1024, false}, // the same blocks, but the guard's tiles half outside N
		{0, 2048, 1152, 1536, true},   // as above
	} {
		if got := g.Replaces(c.j, c.m, c.n, c.k); got != c.want {
			t.Errorf("Replaces(%d, %dx%dx%d) = %v, want %v", c.j, c.m, c.n, c.k, got, c.want)
		}
	}
	// Kept training shapes are left alone, the others not.
	g.Keep = [][3]int{{768, 3072, 4096}, {1536, 1792, 1024}}
	if g.Replaces(0, 1536, 1792, 1024) || g.Replaces(3, 768, 3072, 4096) || !g.Replaces(0, 2048, 1152, 1536) || !g.Replaces(3, 768, 3072, 4097) {
		t.Error("the guard acts on a kept shape, or not next to one")
	}
	if err := g.check(5); err != nil {
		t.Error(err)
	}
	g.Keep = [][3]int{{1536, 1792, 1024}, {768, 3072, 4096}}
	if err := g.check(5); err == nil {
		t.Error("an unsorted keep list passes the check")
	}
	g.Keep = nil
	g.Kernels = g.Kernels[:3]
	// A stream-K guard (396 blocks on 132 SMs) acts only where it splits some tile's K: 600 tiles of
	// 64×128 leave a last wave of 204 blocks, more than half full, which it runs whole.
	g.Kernels[1].Split = &variant.SplitRule{Max: 396, KStep: 16, MinK: 64, BlocksPerSM: 3, WorkspaceFloats: 1 << 30, StreamK: true}
	if g.Replaces(0, 3200, 1536, 3072) || !g.Replaces(0, 768, 3072, 4096) {
		t.Error("a stream-K guard that would run whole tiles acts, or one that splits does not")
	}
	g.Kernels[1].Split = nil
	// The cover test: a 128-row tile on 64 rows covers twice M×N whatever its waves (kernel 3: 132
	// blocks of 128×128 on 132 slots fill one wave on 64×16896), and only with Cover set.
	g.Kernels = append(g.Kernels, GuardKernel{TileRows: 128, TileCols: 128, GridZ: 1, Slots: 132})
	for _, c := range []struct {
		j, m, n, k, cover int
		want              bool
	}{
		{3, 64, 16896, 4544, 0, false},  // one full wave
		{3, 64, 16896, 4544, 2, true},   // 128 rows on 64: twice M×N
		{3, 96, 16896, 4544, 2, false},  // 128 rows on 96 cover 1.33 M×N (and the guard's 64 rows too)
		{3, 128, 16896, 4544, 2, false}, // whole tiles
		{3, 64, 16896, 256, 2, false},   // M·N·K below guardWork
		{3, 40, 16896, 4544, 2, false},  // the guard's own 64 rows cover 1.6 M×N
		{3, 1 << 30, 1 << 30, 1 << 30, 2, false},
	} {
		g.Cover = c.cover
		if got := g.Replaces(c.j, c.m, c.n, c.k); got != c.want {
			t.Errorf("cover %d: Replaces(%d, %dx%dx%d) = %v, want %v", c.cover, c.j, c.m, c.n, c.k, got, c.want)
		}
	}
	g.Cover = -1
	if err := g.check(4); err == nil {
		t.Error("a negative cover passes the check")
	}
	g.Cover = 0
	g.Kernels = g.Kernels[:3]
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
			j := dispatchChain(a, u, g, r.Default, vecOf(m, n, k), takes(m, n, k), fits(m, n))
			got := r.Dispatch(m, n, k, vecOf(m, n, k), takes(m, n, k), fits(m, n))
			kn := &d.Kernels[j]
			if kn.Split != nil && (kn.Split.StreamK || !kn.General) {
				if got != j {
					t.Errorf("%dx%dx%d: %s is a stream-K kernel or has requirements, the guard replaced it", m, n, k, kn.Name)
				}
				continue
			}
			// The guard's own 64×128 tiles: enough of them, at most a quarter of M×N beyond it.
			tiles := int64((m+63)/64) * int64((n+127)/128)
			edge := tiles*64*128 - int64(m)*int64(n)
			blocks := kn.Blocks(m, n, k, d.SMs) // a launch-time split kernel: tiles × its slices
			slots := int64(d.SMs * kn.BlocksPerSM)
			// The stream-K kernel splits some tile's K: fewer tiles than blocks, or a last wave at most half full.
			ctas := int64(d.Kernels[sk].Split.CTAs(int(tiles), 64*128, k, d.SMs))
			splits := tiles < ctas || tiles%ctas > 0 && 2*(tiles%ctas) <= ctas
			cliff := (blocks+slots-1)/slots*slots*10 >= 13*blocks && large(m, n, k, guardWork) && tiles >= int64(d.SMs) &&
				edge*4 <= int64(m)*int64(n) && splits && !slices.Contains(r.Guard.Keep, [3]int{m, n, k})
			switch {
			case cliff && got != sk:
				t.Errorf("%dx%dx%d: %s fills its waves to %.2f, the guard kept it", m, n, k, kn.Name, float64(blocks)/float64((blocks+slots-1)/slots*slots))
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
	if got, j := r.Dispatch(64, 64, 64, vecOf(64, 64, 64), takes(64, 64, 64), fits(64, 64)), dispatchChain(a, u, g, r.Default, vecOf(64, 64, 64), takes(64, 64, 64), fits(64, 64)); got != j {
		t.Errorf("64x64x64: the guard replaced %s", d.Kernels[j].Name)
	}
	// On the training shapes the guard acts only where its kernel was measured at least as fast as
	// the one it replaces; the others are in its keep list.
	for i, smp := range d.Samples {
		m, n, k := smp.Shape.M, smp.Shape.N, smp.Shape.K
		a, u, g := r.Pick(m, n, k)
		j := dispatchChain(a, u, g, r.Default, vecOf(m, n, k), takes(m, n, k), fits(m, n))
		kept := slices.Contains(r.Guard.Keep, [3]int{m, n, k})
		saved := r.Guard.Keep
		r.Guard.Keep = nil
		would := r.Dispatch(m, n, k, vecOf(m, n, k), takes(m, n, k), fits(m, n)) == sk && j != sk
		r.Guard.Keep = saved
		tj, tg := d.Times[i][j], d.Times[i][sk]
		slower := tj > 0 && (tg <= 0 || tj < tg)
		if kept != (would && slower) {
			t.Errorf("%dx%dx%d: kept %v, the guard would replace %s (%.4f ms) by its own (%.4f ms): %v", m, n, k, kept, d.Kernels[j].Name, tj, tg, would)
		}
	}
	if len(r.Guard.Keep) == 0 {
		t.Error("the guard keeps no training shape: the test exercises nothing")
	}
}

func TestBulkGuardTakes(t *testing.T) {
	// Kernel 2: 128×256 tiles, one block per SM on 132 SMs.
	g := &BulkGuard{Kernel: 2, TileRows: 128, TileCols: 256, Slots: 132, MinWaves: 2, MinK: 1024, FullNum: 11, FullDen: 10}
	for _, c := range []struct {
		j, m, n, k int
		want       bool
	}{
		{0, 8192, 8192, 8192, true},              // 64·32 = 2048 blocks, 16 waves with 1.5 % to spare
		{0, 7000, 7000, 7000, true},              // 55·28 = 1540 blocks, 12 waves: 7.3 % beyond M×N
		{0, 5000, 5000, 5000, false},             // 40·20 = 800 blocks: a 7th wave for 8 blocks, 15 % beyond M×N
		{0, 3072, 3072, 3072, false},             // 288 blocks: 3 waves for 2.2, 37 % beyond
		{0, 4096, 4096, 1023, false},             // shallower than MinK
		{0, 4096, 4096, 1024, true},              // 512 blocks: 3.9 waves, 3 % beyond
		{0, 401408, 128, 1152, false},            // half of every tile outside N
		{0, 2048, 4096, 2048, false},             // 256 blocks: fewer than two waves
		{2, 8192, 8192, 8192, false},             // the guard's own kernel
		{-1, 8192, 8192, 8192, true},             // nothing launched yet (fitting asks so)
		{0, 1<<31 - 1, 1<<31 - 1, 1 << 20, true}, // the largest dimensions: no overflow
	} {
		if got := g.Takes(c.j, c.m, c.n, c.k); got != c.want {
			t.Errorf("Takes(%d, %dx%dx%d) = %v, want %v", c.j, c.m, c.n, c.k, got, c.want)
		}
	}
	var none *BulkGuard
	if none.Takes(0, 8192, 8192, 8192) {
		t.Error("a nil bulk guard takes")
	}
	// Remap moves its kernel and drops it with its kernel; Used and Check see it.
	r := &Rule{Table: []int{0}, Unaligned: []int{0}, General: []int{0}, Default: 0, Bulk: g}
	if err := r.Check(3); err != nil {
		t.Fatal(err)
	}
	if err := r.Check(2); err == nil {
		t.Error("Check took a bulk kernel past the kernels")
	}
	if u := r.Used(); len(u) != 2 || u[1] != 2 {
		t.Errorf("Used %v, want the table's kernel and the bulk guard's", u)
	}
	if m := r.Remap(func(j int) int { return []int{1, -1, 0}[j] }); m.Bulk == nil || m.Bulk.Kernel != 0 || !m.Bulk.Takes(1, 8192, 8192, 8192) {
		t.Errorf("remapped bulk guard %+v", m.Bulk)
	}
	if d := r.Remap(func(j int) int { return []int{0, 1, -1}[j] }); d.Bulk != nil {
		t.Errorf("a bulk guard whose kernel is dropped survives: %+v", d.Bulk)
	}
	bad := *g
	bad.FullNum = 9
	if err := (&Rule{Table: []int{0}, Unaligned: []int{0}, General: []int{0}, Bulk: &bad}).Check(3); err == nil {
		t.Error("Check took a bulk guard whose spare area is negative")
	}
}

// TestBulkGuardFit: on the synthetic GPU with a general 128×256 kernel that is the fastest per
// full wave, Fit makes it the bulk guard, and every probe in its range runs it while the others
// keep the tables' kernel.
func TestBulkGuardFit(t *testing.T) {
	shapes := synthCorpus(120, 11)
	for _, s := range [][3]int{{8192, 8192, 2048}, {4096, 4096, 4096}, {16384, 2048, 2048}, {6144, 6144, 1024}, {2048, 2048, 2048}} {
		shapes = append(shapes, protoShape(s[0], s[1], s[2]))
	}
	d := synthData(shapes)
	bk := len(d.Kernels)
	big := synthKernel{"bulk128x256", 128, 256, 1, 1, 0.995, 1, false, 1.1}
	d.Kernels = append(d.Kernels, Kernel{Name: big.name, TileRows: 128, TileCols: 256, GridZ: 1, BlocksPerSM: 1, General: true,
		Supports: func(m, n, k int) bool { return true }})
	for i, s := range d.Samples {
		d.Times[i] = append(d.Times[i], 1e3*synthTime(big, s.Shape.M, s.Shape.N, s.Shape.K)*noise(big.name, s.Shape))
	}
	r, err := Fit(d, nil, Config{BucketsPerOctave: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.Bulk == nil || r.Bulk.Kernel != bk {
		t.Fatalf("bulk guard %+v, want kernel %d", r.Bulk, bk)
	}
	takes := func(m, n, k int) func(j int) bool { return func(j int) bool { return d.Kernels[j].Supports(m, n, k) } }
	fits := func(m, n int) func(j int) bool { return func(j int) bool { return d.Kernels[j].Fits(m, n) } }
	in, out := 0, 0
	for m := 1024; m <= 16384; m += 1536 {
		for _, n := range []int{1000, 2048, 5000, 8192} {
			for _, k := range []int{512, 4096} {
				got := r.Dispatch(m, n, k, vecOf(m, n, k), takes(m, n, k), fits(m, n))
				blocks := float64((m+127)/128) * float64((n+255)/256)
				spare := math.Ceil(blocks/132)*132*128*256/(float64(m)*float64(n)) - 1
				want := k >= 1024 && blocks >= 264 && spare <= 0.1
				switch {
				case want && got != bk:
					t.Errorf("%dx%dx%d: in the bulk guard's range, %s launched", m, n, k, d.Kernels[got].Name)
				case want:
					in++
				default:
					out++
				}
			}
		}
	}
	if in == 0 || out == 0 {
		t.Errorf("%d probes in the bulk guard's range, %d outside: both must be exercised", in, out)
	}
}

// vecOf is Vec of an M×N×K problem's packed row-major NN leading dimensions.
func vecOf(m, n, k int) bool { return Vec(m, n, k, n, n) }
