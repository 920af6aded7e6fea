package dispatch

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"

	"tilegen/internal/protocol"
)

func TestBucket(t *testing.T) {
	for _, c := range []struct{ x, shift, want int }{
		{1, 0, 0}, {2, 0, 1}, {3, 0, 1}, {4, 0, 2}, {1 << 30, 0, 30},
		{1, 1, 0}, {2, 1, 2}, {3, 1, 3}, {4, 1, 4}, {5, 1, 4}, {6, 1, 5}, {7, 1, 5}, {8, 1, 6}, {11, 1, 6}, {12, 1, 7},
		{1, 2, 0}, {2, 2, 4}, {3, 2, 6}, {4, 2, 8}, {5, 2, 9}, {7, 2, 11}, {8, 2, 12}, {9, 2, 12}, {10, 2, 13},
	} {
		if got := Bucket(c.x, c.shift); got != c.want {
			t.Errorf("Bucket(%d, %d) = %d, want %d", c.x, c.shift, got, c.want)
		}
	}
	// BucketRange inverts Bucket: every x up to 5000 lies in its bucket's range, and the ranges of
	// consecutive non-empty buckets tile the integers.
	for shift := 0; shift <= MaxShift; shift++ {
		next := 1
		for b := 0; b <= 12<<shift; b++ {
			lo, hi, ok := BucketRange(b, shift)
			if !ok {
				continue
			}
			if lo != next || hi < lo {
				t.Fatalf("shift %d bucket %d: [%d, %d], want it to start at %d", shift, b, lo, hi, next)
			}
			for x := lo; x <= hi; x++ {
				if Bucket(x, shift) != b {
					t.Fatalf("shift %d: Bucket(%d) = %d, outside bucket %d [%d, %d]", shift, x, Bucket(x, shift), b, lo, hi)
				}
			}
			next = hi + 1
		}
	}
}

func TestRegime(t *testing.T) {
	for _, c := range []struct {
		m, n, k float64
		want    int
	}{
		{1, 4096, 4096, RegimeRows}, {4096, 16, 4096, RegimeCols}, {16, 16, 4096, RegimeTiny}, {16, 1, 256, RegimeTiny},
		{3, 3, 1000000, RegimeDeepK}, {16, 16, 16383, RegimeTiny}, {16, 16, 16384, RegimeDeepK}, {1, 1, 1, RegimeTiny}, {17, 16, 64, RegimeCols}, {16, 17, 64, RegimeRows},
		{1, 16, 256, RegimeTiny}, {8, 32, 64, RegimeRows}, {32, 32, 100000, RegimeDeepK},
		{512, 49, 4608, RegimeDeepK}, {224, 256, 192, RegimeSmall}, {128, 4096, 4096, RegimeSkinny},
		{4096, 4096, 4096, RegimeLarge}, {4096, 4096, 32, RegimeLarge},
	} {
		if got := Regime(c.m, c.n, c.k); got != c.want {
			t.Errorf("Regime(%v×%v×%v) = %s, want %s", c.m, c.n, c.k, RegimeNames[got], RegimeNames[c.want])
		}
	}
}

func ratios(os []Outcome) []float64 {
	var out []float64
	for _, o := range os {
		out = append(out, o.Ratio)
	}
	return out
}

// TestCrossValidationGeneralizes fits the rule on a synthetic GPU's corpus: held out, it must come
// within 7 % of the per-shape best and beat the nearest-tuned-shape rule it replaces, on the
// geometric mean and on the worst shape.
func TestCrossValidationGeneralizes(t *testing.T) {
	d := synthData(synthCorpus(80, 7))
	v, err := CrossValidate(d, 5, Config{})
	if err != nil {
		t.Fatal(err)
	}
	all, cv, best := Summarize(ratios(v.All)), Summarize(ratios(v.CV)), Summarize(v.Best)
	near := Summarize(ratios(v.Nearest))
	t.Logf("%d shapes: best %+v", len(d.Samples), best)
	t.Logf("fitted on all: %+v (params %+v, %d candidates)", all, v.Full.Params, len(v.Full.Candidates))
	t.Logf("held out:      %+v", cv)
	t.Logf("nearest rule:  %+v", near)
	if cv.Geomean < 0.93*best.Geomean {
		t.Errorf("held-out geomean %.3f is more than 7 %% below the per-shape best %.3f", cv.Geomean, best.Geomean)
	}
	if cv.Geomean <= near.Geomean || cv.Min <= near.Min {
		t.Errorf("held-out geomean %.3f / min %.3f: not better than the nearest-shape rule's %.3f / %.3f", cv.Geomean, cv.Min, near.Geomean, near.Min)
	}
	// Pinned cells: a corpus shape alone in its cell gets its fastest variant from the exported rule.
	if v.Full.Params.Pin {
		count := map[int]int{}
		for _, s := range d.Samples {
			count[v.Full.Cell(s.Shape.M, s.Shape.N, s.Shape.K)]++
		}
		for i, s := range d.Samples {
			if count[v.Full.Cell(s.Shape.M, s.Shape.N, s.Shape.K)] == 1 && v.All[i].Ratio != v.Best[i] {
				t.Errorf("%v alone in its pinned cell: ratio %.3f, its fastest %.3f", s.Shape, v.All[i].Ratio, v.Best[i])
			}
		}
	} else {
		t.Log("the fit did not pin cells")
	}
	for i, o := range v.CV {
		if o.Imputed {
			t.Errorf("%v: held-out pick %s was not timed (every kernel was)", d.Samples[i].Shape, d.Kernels[o.Kernel].Name)
		}
	}
}

// TestFoldsHoldOut checks that a fold's rule never saw its shapes: changing every time of a
// held-out shape does not change the rule fitted without it.
func TestFoldsHoldOut(t *testing.T) {
	d := synthData(synthCorpus(10, 3))
	v, err := CrossValidate(d, 5, Config{})
	if err != nil {
		t.Fatal(err)
	}
	var train []int
	changed := 0
	for i := range d.Samples {
		if v.Fold[i] != 2 {
			train = append(train, i)
			continue
		}
		changed++
		for j := range d.Times[i] {
			d.Times[i][j] *= 1 + float64(j%3)
		}
	}
	if changed == 0 || v.Rules[2] == nil {
		t.Fatal("fold 2 is empty")
	}
	r, err := Fit(d, train, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r, v.Rules[2]) {
		t.Error("the rule of fold 2 depends on fold 2's measurements")
	}
}

func TestFold(t *testing.T) {
	counts := make([]int, 5)
	for _, s := range synthCorpus(200, 1) {
		f := Fold(s, 5)
		if f != Fold(s, 5) || f < 0 || f >= 5 {
			t.Fatalf("Fold(%v) = %d", s, f)
		}
		counts[f]++
	}
	for f, c := range counts {
		if c < 30 {
			t.Errorf("fold %d has %d of %d shapes", f, c, len(synthCorpus(200, 1)))
		}
	}
	// Pinned: the fold depends only on the shape, so these never change.
	if got := []int{Fold(protocol.Shape{M: 4096, N: 4096, K: 4096}, 5), Fold(protocol.Shape{M: 1, N: 768, K: 768}, 5)}; !reflect.DeepEqual(got, []int{fnvFold("4096x4096x4096"), fnvFold("1x768x768")}) {
		t.Errorf("folds %v", got)
	}
}

// fnvFold is FNV-1a 64 spelled out, modulo 5.
func fnvFold(s string) int {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return int(h % 5)
}

// TestUntimedCountsAsWorst: a kernel that the rule launches, and that is fastest, on M = 1 shapes
// while it is timed there is no longer launched there once it is not (an untimed kernel counts as
// the slowest timed).
func TestUntimedCountsAsWorst(t *testing.T) {
	d := synthData(synthCorpus(60, 5))
	r, err := Fit(d, nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	launched := func(r *Rule, i int) int {
		s := d.Samples[i].Shape
		a, u, g := r.Pick(s.M, s.N, s.K)
		return d.dispatched(i, a, u, g, r.Default)
	}
	wins := map[int]int{}
	for i, s := range d.Samples {
		if j := launched(r, i); s.Shape.M == 1 && j != r.Default {
			if _, b := d.bestKernel(i); b == j {
				wins[j]++
			}
		}
	}
	k, most := -1, 0
	for j, c := range wins {
		if c > most || c == most && j < k {
			k, most = j, c
		}
	}
	if most < 2 {
		t.Fatalf("no kernel but the default is launched, and fastest, on two M = 1 shapes: %v", wins)
	}
	for i, s := range d.Samples {
		if s.Shape.M == 1 {
			d.Times[i][k] = 0
		}
	}
	if r, err = Fit(d, nil, Config{}); err != nil {
		t.Fatal(err)
	}
	for i, s := range d.Samples {
		if s.Shape.M == 1 && launched(r, i) == k {
			t.Errorf("%v: %s launched where it was never timed", s.Shape, d.Kernels[k].Name)
		}
	}
}

func TestFitDeterministicAndChecked(t *testing.T) {
	d := synthData(synthCorpus(20, 9))
	a, err := Fit(d, nil, Config{BucketsPerOctave: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Fit(d, nil, Config{BucketsPerOctave: 1})
	if err != nil || !reflect.DeepEqual(a, b) {
		t.Fatalf("two fits differ (%v)", err)
	}
	if a.Shift != 0 {
		t.Errorf("shift %d for 1 bucket per octave", a.Shift)
	}
	// Beyond the fitted range a shape is clamped to the edge cell: no panic, a valid kernel.
	for _, x := range []int{1, 2, 3, 1 << 20, 1<<31 - 1, 1 << 40} {
		if j, u, g := a.Pick(x, x, x); j < 0 || j >= len(d.Kernels) || u < 0 || u >= len(d.Kernels) || g < 0 || g >= len(d.Kernels) || !d.Kernels[g].General {
			t.Errorf("Pick(%d³) = %d", x, j)
		}
	}
	if _, err := Fit(d, nil, Config{BucketsPerOctave: 3}); err == nil {
		t.Error("3 buckets per octave accepted")
	}
	for _, k := range d.Kernels {
		k.Robust = false
	}
	noRobust := *d
	noRobust.Kernels = append([]Kernel(nil), d.Kernels...)
	for j := range noRobust.Kernels {
		noRobust.Kernels[j].Robust = false
	}
	if _, err := Fit(&noRobust, nil, Config{}); err == nil {
		t.Error("fitted without a robust default")
	}
	bad := *d
	bad.Times = d.Times[:1]
	if _, err := Fit(&bad, nil, Config{}); err == nil {
		t.Error("times of the wrong size accepted")
	}
}

func TestSummarize(t *testing.T) {
	got := Summarize([]float64{2, 0.5, 1, 0.8})
	want := Totals{Count: 4, Geomean: math.Pow(0.8, 0.25), Min: 0.5, Median: 0.9, Below09: 2}
	if math.Abs(got.Geomean-want.Geomean) > 1e-12 {
		t.Errorf("geomean %v, want %v", got.Geomean, want.Geomean)
	}
	got.Geomean = want.Geomean
	if got != want {
		t.Errorf("%+v, want %+v", got, want)
	}
}

// constData is a corpus on which every kernel has one ratio per shape (ratio[shape][kernel], 0:
// not timed), all of them robust and general.
func constData(kernels []Kernel, shapes []protocol.Shape, ratio [][]float64) *Data {
	d := &Data{SMs: 132, Kernels: kernels}
	for i, s := range shapes {
		d.Samples = append(d.Samples, Sample{Shape: s, CublasMS: 1})
		row := make([]float64, len(kernels))
		for j, r := range ratio[i] {
			if r > 0 {
				row[j] = 1 / r
			}
		}
		d.Times = append(d.Times, row)
	}
	return d
}

func anyShape(int, int, int) bool { return true }

// TestPinnedCellAlignedFollowsMeasured: a cell whose corpus shapes no candidate's tile divides (odd
// sizes) pins its aligned kernel to the one measured best there, not to the first candidate by
// name (every aligned kernel totals the same on such shapes, and the aligned problems of the cell
// would otherwise run an arbitrary kernel).
func TestPinnedCellAlignedFollowsMeasured(t *testing.T) {
	ks := []Kernel{
		{Name: "a32", TileRows: 32, TileCols: 32, GridZ: 1, Supports: anyShape, General: true, Robust: true},
		{Name: "b64", TileRows: 64, TileCols: 64, GridZ: 1, Supports: anyShape, General: true, Robust: true},
	}
	shapes := []protocol.Shape{protoShape(1009, 1013, 1019), protoShape(997, 1009, 1013), protoShape(4096, 4096, 4096), protoShape(2048, 4096, 4096)}
	ratio := [][]float64{{0.5, 1.0}, {0.5, 1.0}, {1.0, 0.9}, {1.0, 0.9}}
	r, err := Fit(constData(ks, shapes, ratio), nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	a, u, _ := r.Pick(960, 960, 1000) // in the odd shapes' cell; both tiles divide 960
	if a != 1 || u != 1 {
		t.Errorf("cell of 1009x1013x1019 picks aligned %s, unaligned %s; want b64 for both (measured best there)", ks[a].Name, ks[u].Name)
	}
}

// TestSplitKUntunedNotPicked: a fixed split-K kernel that wins on small grids is not carried over to
// a cell where even its smallest problem has a full grid without the split (the tuner never times it
// there: variant.SplitKUntuned).
func TestSplitKUntunedNotPicked(t *testing.T) {
	ks := []Kernel{
		{Name: "plain64", TileRows: 64, TileCols: 64, GridZ: 1, Supports: anyShape, General: true, Robust: true},
		{Name: "split64x4", TileRows: 64, TileCols: 64, GridZ: 4, Supports: anyShape, General: true, Robust: true},
	}
	// The last shape stretches the table's range past the full grids; the split kernel was not timed
	// there (it counts as the slowest timed, 1.0).
	shapes := []protocol.Shape{protoShape(256, 256, 8192), protoShape(512, 512, 8192), protoShape(256, 512, 8192), protoShape(512, 256, 4096),
		protoShape(4096, 4096, 64)}
	ratio := [][]float64{{1.0, 2.0}, {1.0, 1.8}, {1.0, 1.9}, {1.0, 1.7}, {1.0, 0}}
	d := constData(ks, shapes, ratio)
	r, err := Fit(d, nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if a, _, _ := r.Pick(384, 384, 8192); a != 1 {
		t.Errorf("384x384x8192 (36 tiles): aligned %s, want split64x4 (what was measured around it)", ks[a].Name)
	}
	if !d.untuned(1, 2048, 2048) || d.untuned(0, 2048, 2048) || d.untuned(1, 512, 512) {
		t.Fatalf("untuned: want only the split kernel on 2048x2048 (1024 tiles on 132 SMs)")
	}
	// Cells whose smallest problem has 24x24 = 576 tiles (at least 4 per SM), within the rule's
	// reach of the small grids (there the split kernel would be carried over without the check).
	for _, s := range []protocol.Shape{protoShape(1536, 1536, 8192), protoShape(1600, 1800, 8192)} {
		if a, u, g := r.Pick(s.M, s.N, s.K); a == 1 || u == 1 || g == 1 {
			t.Errorf("%v: picks %s/%s/%s; a fixed split-K kernel on a full grid was never timed there", s, ks[a].Name, ks[u].Name, ks[g].Name)
		}
	}
}

// TestUnvouchedNotPicked: a kernel never timed on a training shape of a regime class is not picked
// for that class's cells, however well it did on the shapes of another class nearby (here with the
// regime classes weighed alike, ρ = 1): on the H100 corpus such picks were the worst held-out
// shapes (a small-class kernel on 12544×16×32, a deep-k one on 3×3×1000000).
func TestUnvouchedNotPicked(t *testing.T) {
	ks := []Kernel{
		{Name: "wide", TileRows: 64, TileCols: 64, GridZ: 1, Supports: anyShape, General: true, Robust: true},
		{Name: "deep", TileRows: 64, TileCols: 64, GridZ: 1, Supports: anyShape, General: true, Robust: true},
	}
	// Three deep-k shapes where "deep" wins, two gemv-n shapes (N <= 16, N <= M) where only "wide"
	// was timed.
	shapes := []protocol.Shape{protoShape(256, 64, 8192), protoShape(512, 64, 8192), protoShape(256, 128, 16384),
		protoShape(4096, 1, 4096), protoShape(8192, 2, 2048)}
	ratio := [][]float64{{1.0, 2.0}, {1.0, 2.1}, {1.0, 1.9}, {1.0, 0}, {1.0, 0}}
	d := constData(ks, shapes, ratio)
	m, err := newModel(d, []int{0, 1, 2, 3, 4}, 1)
	if err != nil {
		t.Fatal(err)
	}
	p := Params{Bandwidth: 0.5, Adaptive: 1, CrossRegime: 1, Align: 1}
	w, sa, sm, sg := make([]float64, len(m.train)), make([]float64, len(m.cand)), make([]float64, len(m.cand)), make([]float64, len(m.cand))
	at := func(mm, nn, kk int) [3]float64 { return log2s(protoShape(mm, nn, kk)) }
	if Regime(256, 16, 8192) != RegimeCols || Regime(256, 64, 8192) != RegimeDeepK {
		t.Fatal("the fixture's regime classes changed")
	}
	// A gemv-n point two octaves from the deep-k shapes: "deep" is not vouched for there.
	if a, u, g := m.score(nil, nil, cellPtsAt(at(256, 16, 8192), 1), at(256, 16, 8192), w, sa, sm, sg, p, -1); ks[a].Name != "wide" || ks[u].Name != "wide" || ks[g].Name != "wide" {
		t.Errorf("256x16x8192 (gemv-n): picks %s/%s/%s, want wide (deep was never timed on a gemv-n shape)", ks[a].Name, ks[u].Name, ks[g].Name)
	}
	// A deep-k point: "deep", measured there.
	if a, _, _ := m.score(nil, nil, cellPtsAt(at(384, 96, 8192), 1), at(384, 96, 8192), w, sa, sm, sg, p, -1); ks[a].Name != "deep" {
		t.Errorf("384x96x8192 (deep-k): picks %s, want deep", ks[a].Name)
	}
}

// TestBeyondReachTakesClassRecord: a cell farther than the reach from every training shape gets
// the variants with the best mean over its regime class's training shapes, not the robust default
// (on the H100 corpus the default, a 32×32 deep-K kernel, had run 1000000×1×64 at 0.63× held out);
// a class with no training shape still gets the default.
func TestBeyondReachTakesClassRecord(t *testing.T) {
	ks := []Kernel{
		{Name: "dflt", TileRows: 32, TileCols: 32, GridZ: 1, Supports: anyShape, General: true, Robust: true},
		{Name: "big", TileRows: 128, TileCols: 128, GridZ: 1, Supports: anyShape, General: true},
		{Name: "near", TileRows: 64, TileCols: 64, GridZ: 1, Supports: anyShape, General: true},
	}
	// Large shapes: "big" best on average, "near" best on 1024³ only.
	shapes := []protocol.Shape{protoShape(4096, 4096, 4096), protoShape(8192, 8192, 2048), protoShape(2048, 4096, 1024),
		protoShape(1024, 1024, 1024)}
	ratio := [][]float64{{0.5, 1.1, 0.8}, {0.5, 1.1, 0.8}, {0.5, 1.0, 0.9}, {0.6, 0.7, 1.0}}
	d := constData(ks, shapes, ratio)
	m, err := newModel(d, []int{0, 1, 2, 3}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if ks[m.def].Name != "dflt" {
		t.Fatalf("the fixture's default is %s, want dflt", ks[m.def].Name)
	}
	w, sa, sm, sg := make([]float64, len(m.train)), make([]float64, len(m.cand)), make([]float64, len(m.cand)), make([]float64, len(m.cand))
	at := log2s(protoShape(300, 40000, 100)) // large, over five octaves from every training shape
	if Regime(300, 40000, 100) != RegimeLarge {
		t.Fatal("the probe's regime class changed")
	}
	p := Params{Bandwidth: 0.5, Adaptive: 1, CrossRegime: 1, Align: 1, Reach: 1}
	if a, u, g := m.score(nil, nil, cellPtsAt(at, 1), at, w, sa, sm, sg, p, -1); ks[a].Name != "big" || ks[u].Name != "big" || ks[g].Name != "big" {
		t.Errorf("300x40000x100 beyond reach: picks %s/%s/%s, want big (the large class's best mean)", ks[a].Name, ks[u].Name, ks[g].Name)
	}
	// Left out (leave-one-out), the class's record is the other shapes'.
	for t2 := range m.train {
		if a, _, _ := m.score(nil, nil, cellPtsAt(at, 1), at, w, sa, sm, sg, p, t2); ks[a].Name != "big" {
			t.Errorf("300x40000x100 beyond reach without training shape %d: picks %s, want big", t2, ks[a].Name)
		}
	}
	// A regime class without training shapes: the default.
	tiny := log2s(protoShape(8, 8, 8))
	if a, u, g := m.score(nil, nil, cellPtsAt(tiny, 1), tiny, w, sa, sm, sg, p, -1); ks[a].Name != "dflt" || ks[u].Name != "dflt" || ks[g].Name != "dflt" {
		t.Errorf("8x8x8 (no training shape of its class): picks %s/%s/%s, want dflt", ks[a].Name, ks[u].Name, ks[g].Name)
	}

	// Outside the large class the record is corrected for tile waste: on deep-k shapes with square
	// outputs "wide" (32×128 tiles) leads "tall" (128×32) on average (tall wins one, so it is a
	// candidate), but a far cell 32 columns wide wastes three quarters of wide's tile.
	ks = []Kernel{
		{Name: "dflt", TileRows: 16, TileCols: 16, GridZ: 1, Supports: anyShape, General: true, Robust: true},
		{Name: "wide", TileRows: 32, TileCols: 128, GridZ: 1, Supports: anyShape, General: true},
		{Name: "tall", TileRows: 128, TileCols: 32, GridZ: 1, Supports: anyShape, General: true},
	}
	shapes = []protocol.Shape{protoShape(512, 512, 20000), protoShape(1024, 1024, 65536), protoShape(256, 256, 16384)}
	ratio = [][]float64{{0.5, 1.0, 0.9}, {0.5, 1.0, 0.9}, {0.5, 0.9, 1.0}}
	m, err = newModel(constData(ks, shapes, ratio), []int{0, 1, 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	w, sa, sm, sg = make([]float64, len(m.train)), make([]float64, len(m.cand)), make([]float64, len(m.cand)), make([]float64, len(m.cand))
	far := log2s(protoShape(400, 32, 13000))
	if Regime(400, 32, 13000) != RegimeDeepK {
		t.Fatal("the deep-k probe's regime class changed")
	}
	if a, u, g := m.score(nil, nil, cellPtsAt(far, 1), far, w, sa, sm, sg, p, -1); ks[a].Name != "tall" || ks[u].Name != "tall" || ks[g].Name != "tall" {
		t.Errorf("400x32x13000 beyond reach: picks %s/%s/%s, want tall (wide wastes 3/4 of its tile there)", ks[a].Name, ks[u].Name, ks[g].Name)
	}
	near := log2s(protoShape(600, 600, 20000))
	if a, _, _ := m.score(nil, nil, cellPtsAt(near, 1), near, w, sa, sm, sg, p, -1); ks[a].Name != "wide" {
		t.Errorf("600x600x20000 within reach: picks %s, want wide", ks[a].Name)
	}
}

// TestOverflowingGridNotPicked: a kernel whose grid y overflows on a cell's M (a GEMV kernel of a
// few rows per block on a million rows) is not that cell's pick, however fast it is on the smaller
// M around it; the cell's problems would otherwise fall through to the robust default (on the H100
// corpus 1000000×8×16 and 1000000×1×64 ran at a third of cuBLAS that way).
func TestOverflowingGridNotPicked(t *testing.T) {
	rows4 := Kernel{Name: "rows4", TileRows: 4, TileCols: 1, GridZ: 1, General: true, Robust: true}
	rows4.Supports = func(m, n, k int) bool { return rows4.InGrid(m, n, k, 132) }
	ks := []Kernel{
		{Name: "tile128", TileRows: 128, TileCols: 32, GridZ: 1, Supports: anyShape, General: true, Robust: true},
		rows4,
	}
	shapes := []protocol.Shape{protoShape(50000, 1, 64), protoShape(100000, 1, 64), protoShape(200000, 1, 128),
		protoShape(1000000, 1, 32)}
	ratio := [][]float64{{0.5, 1.5}, {0.5, 1.4}, {0.6, 1.5}, {0.7, 0}}
	d := constData(ks, shapes, ratio)
	d.Kernels[1].Supports = rows4.Supports
	if rows4.InGrid(400000, 1, 64, 132) || !rows4.InGrid(200000, 1, 64, 132) {
		t.Fatal("rows4's grid y: want an overflow above 262140 rows only")
	}
	m, err := newModel(d, []int{0, 1, 2, 3}, 1)
	if err != nil {
		t.Fatal(err)
	}
	p := Params{Bandwidth: 0.5, Adaptive: 1, CrossRegime: 1, Align: 1}
	w, sa, sm, sg := make([]float64, len(m.train)), make([]float64, len(m.cand)), make([]float64, len(m.cand)), make([]float64, len(m.cand))
	if a, u, g := m.score(nil, nil, cellPtsAt(log2s(protoShape(600000, 1, 64)), 1), log2s(protoShape(600000, 1, 64)), w, sa, sm, sg, p, -1); a != 0 || u != 0 || g != 0 {
		t.Errorf("600000x1x64: picks %s/%s/%s, want tile128 (rows4's grid y overflows there)", ks[a].Name, ks[u].Name, ks[g].Name)
	}
	if a, _, _ := m.score(nil, nil, cellPtsAt(log2s(protoShape(150000, 1, 64)), 1), log2s(protoShape(150000, 1, 64)), w, sa, sm, sg, p, -1); a != 1 {
		t.Errorf("150000x1x64: picks %s, want rows4 (measured fastest around it, its grid fits)", ks[a].Name)
	}
}

// TestRareWinnerIsCandidate: a kernel fastest on one training shape only stays a candidate when
// more than MaxCandidates kernels come near the fastest on many shapes (a regime class of few
// shapes keeps its winners).
func TestRareWinnerIsCandidate(t *testing.T) {
	ks := plainKernels(MaxCandidates + 6)
	rare := len(ks) - 1
	var shapes []protocol.Shape
	var ratio [][]float64
	for i := range 10 {
		shapes = append(shapes, protoShape(1024+64*i, 1024, 1024))
		row := make([]float64, len(ks))
		for j := range ks {
			row[j] = 1.0 - 0.0001*float64(j) // all within 5 % of k00
		}
		row[rare] = 0.1
		ratio = append(ratio, row)
	}
	shapes = append(shapes, protoShape(4096, 1, 4096))
	ratio = append(ratio, soloRow(len(ks), rare, 1.5, 0.2))
	wantCandidate(t, constData(ks, shapes, ratio), rare)
}

// plainKernels are n 64x64 kernels that take any shape, named k00, k01, ...
func plainKernels(n int) []Kernel {
	var ks []Kernel
	for j := range n {
		ks = append(ks, Kernel{Name: fmt.Sprintf("k%02d", j), TileRows: 64, TileCols: 64, GridZ: 1, Supports: anyShape, General: true, Robust: true})
	}
	return ks
}

// soloRow is a shape's ratios for n kernels: kernel j at fast, the others at slow.
func soloRow(n, j int, fast, slow float64) []float64 {
	row := make([]float64, n)
	for i := range row {
		row[i] = slow
	}
	row[j] = fast
	return row
}

// wantCandidate returns the candidates a rule fitted on every shape of d chooses, and fails the
// test unless they are MaxCandidates with kernel j among them.
func wantCandidate(t *testing.T, d *Data, j int) []int {
	t.Helper()
	train := make([]int, len(d.Samples))
	for i := range train {
		train[i] = i
	}
	def, err := d.chooseDefault(train)
	if err != nil {
		t.Fatal(err)
	}
	cand := d.chooseCandidates(train, def)
	if len(cand) != MaxCandidates || !slices.Contains(cand, j) {
		t.Errorf("%d candidates (want %d), %s among them: %v", len(cand), MaxCandidates, d.Kernels[j].Name, slices.Contains(cand, j))
	}
	return cand
}

// TestCandidatesCover: when more kernels are fastest somewhere than the rule may choose from, the
// cover keeps one kernel near the best of every training shape: twins that win in turn on one group
// of shapes take one slot before any takes a second, so a small group's only good kernel stays.
func TestCandidatesCover(t *testing.T) {
	ks := plainKernels(MaxCandidates + 10)
	lone := len(ks) - 1
	var shapes []protocol.Shape
	var ratio [][]float64
	// Shapes 0..MaxCandidates+8: twin j (j < lone) fastest on shape j by a hair, all twins within
	// 1 % of each other; lone is slow there (0.3).
	for i := range lone {
		shapes = append(shapes, protoShape(1024+64*i, 1024, 1024))
		row := soloRow(len(ks), lone, 0.3, 1.0)
		row[i] = 1.009
		ratio = append(ratio, row)
	}
	// One shape where only lone is near the best (the twins at 0.5): every kernel wins one shape,
	// and ranked by near-best counts after that (each twin is near on all the twins' shapes) lone
	// would come last and fall out. The cover keeps it.
	shapes = append(shapes, protoShape(4096, 1, 4096))
	ratio = append(ratio, soloRow(len(ks), lone, 1.2, 0.5))
	d := constData(ks, shapes, ratio)
	cand := wantCandidate(t, d, lone)
	// Every training shape has a candidate within nearWinner of its best.
	for i := range shapes {
		b := d.best(i)
		ok := false
		for _, j := range cand {
			if r, _, _ := d.Ratio(i, j); r*nearWinner >= b {
				ok = true
			}
		}
		if !ok {
			t.Errorf("%v: no candidate near its best %.3f", shapes[i], b)
		}
	}
}

// cellPtsAt are the points the tables average a cell's features over (cellPoints) for the cell
// holding the point u (log2 M, N, K) at shift.
func cellPtsAt(u [3]float64, shift int) (pts [3][]int) {
	for dim := range 3 {
		_, pts[dim], _ = cellPoints(Bucket(max(int(math.Round(math.Exp2(u[dim]))), 1), shift), shift)
	}
	return pts
}

// TestRegimeParams checks that each regime class's cells are compiled with the class's own
// hyperparameters: the table fitted with per-class sets equals, on every cell of a class, the table
// compiled with that class's set everywhere; and that a class's set is the best of the grid by
// leave-one-out over the class's training shapes.
func TestRegimeParams(t *testing.T) {
	d := synthData(synthCorpus(80, 7))
	r, err := Fit(d, nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.RegimeParams) != len(RegimeNames) {
		t.Fatalf("%d regime parameter sets, want %d", len(r.RegimeParams), len(RegimeNames))
	}
	all := make([]int, len(d.Samples))
	for i := range all {
		all[i] = i
	}
	m, err := newModel(d, all, r.Shift)
	if err != nil {
		t.Fatal(err)
	}
	count := make([]int, len(RegimeNames))
	for _, reg := range m.cellReg {
		count[reg]++
	}
	distinct := map[Params]bool{}
	for reg, p := range r.RegimeParams {
		distinct[p] = true
		if !p.Pin {
			t.Errorf("%s: cells not pinned", RegimeNames[reg])
		}
		if count[reg] < minRegimeShapes {
			if p != r.Params {
				t.Errorf("%s: %d training shapes, yet a set of its own", RegimeNames[reg], count[reg])
			}
			continue
		}
		_, own := m.loo(p)
		for g := range grid {
			if _, o := m.loo(grid[g]); o[reg] > own[reg]+1e-12 {
				t.Errorf("%s: grid set %d scores %.4f over the class's shapes, the chosen set %.4f", RegimeNames[reg], g, o[reg], own[reg])
				break
			}
		}
	}
	t.Logf("%d distinct sets over %d classes", len(distinct), len(RegimeNames))
	dims := r.Dims()
	for reg, p := range r.RegimeParams {
		u := &Rule{Shift: r.Shift, Lo: r.Lo, Hi: r.Hi}
		m.compile(u, uniformParams(p))
		n := 0
		for i := range dims[0] {
			for j := range dims[1] {
				for l := range dims[2] {
					mid := func(dim, b int) float64 { c, _, _ := cellPoints(r.Lo[dim]+b, r.Shift); return c }
					if m.cellRegime([3]float64{mid(0, i), mid(1, j), mid(2, l)}) != reg {
						continue
					}
					c := (i*dims[1]+j)*dims[2] + l
					n++
					if r.Table[c] != u.Table[c] || r.Unaligned[c] != u.Unaligned[c] || r.General[c] != u.General[c] {
						t.Fatalf("%s cell (%d,%d,%d): fitted %d/%d/%d, compiled with the class's set %d/%d/%d", RegimeNames[reg], i, j, l,
							r.Table[c], r.Unaligned[c], r.General[c], u.Table[c], u.Unaligned[c], u.General[c])
					}
				}
			}
		}
		if n == 0 {
			t.Logf("%s: no cells", RegimeNames[reg])
		}
	}
}

// TestMisalignedGoesToGeneral: problems with a leading dimension not a multiple of 4 (every kernel
// loads them element by element) run the cell's general kernel, fitted on such training shapes;
// the others run the kernels fitted on shapes with float4-able leading dimensions. A pinned cell
// holding only misaligned shapes pins the general kernel and leaves the others to the model.
func TestMisalignedGoesToGeneral(t *testing.T) {
	ks := []Kernel{
		{Name: "vec4", TileRows: 64, TileCols: 64, GridZ: 1, Supports: anyShape, General: true, Robust: true},
		{Name: "scal", TileRows: 64, TileCols: 64, GridZ: 1, Supports: anyShape, General: true, Robust: true},
	}
	var shapes []protocol.Shape
	var ratio [][]float64
	for _, s := range [][3]int{{1024, 1024, 1024}, {2048, 1024, 512}, {1024, 2048, 2048}, {4096, 4096, 1024}, {512, 512, 512}, {2048, 2048, 2048}} {
		shapes = append(shapes, protoShape(s[0], s[1], s[2]))
		ratio = append(ratio, []float64{1.0, 0.8})
		// The same sizes less one: K and N odd.
		shapes = append(shapes, protoShape(s[0]-1, s[1]-1, s[2]-1))
		ratio = append(ratio, []float64{0.5, 0.9})
	}
	d := constData(ks, shapes, ratio)
	for i := range d.Samples {
		if d.vec(i) != (i%2 == 0) {
			t.Fatalf("%v: vec %v", d.Samples[i].Shape, d.vec(i))
		}
	}
	r, err := Fit(d, nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		m, n, k, lda, ldb, ldc int
		want                   string
	}{
		{1536, 1536, 1536, 1536, 1536, 1536, "vec4"},
		{1536, 1536, 1536, 1537, 1536, 1536, "scal"}, // a padded lda, not a multiple of 4
		{1537, 1535, 1533, 1533, 1535, 1535, "scal"},
		{1536, 1536, 1536, 1536, 1536, 1538, "scal"},
		{1000, 1000, 1000, 1000, 1000, 1000, "vec4"}, // the cell of 1023x1023x1023: only misaligned shapes
		{1000, 1000, 1001, 1001, 1000, 1000, "scal"},
	} {
		got := r.Dispatch(c.m, c.n, c.k, Vec(c.m, c.n, c.lda, c.ldb, c.ldc), anyTakes, func(j int) bool { return ks[j].Fits(c.m, c.n) })
		if got < 0 || ks[got].Name != c.want {
			t.Errorf("%dx%dx%d lda %d ldb %d ldc %d: dispatch %d, want %s", c.m, c.n, c.k, c.lda, c.ldb, c.ldc, got, c.want)
		}
	}
	// A misaligned problem the general kernel does not take runs the unaligned one, never the
	// aligned kernel's float4 path first.
	if j := dispatchChain(0, 1, 1, 1, false, func(j int) bool { return j == 0 }, func(int) bool { return true }); j != 0 {
		t.Errorf("misaligned chain with only the aligned kernel taking it: %d, want 0", j)
	}
	if j := dispatchChain(0, 0, 1, 1, false, anyTakes, func(int) bool { return true }); j != 1 {
		t.Errorf("misaligned chain: %d, want the general kernel 1", j)
	}
}

func anyTakes(int) bool { return true }
