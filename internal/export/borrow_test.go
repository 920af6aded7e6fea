package export

import (
	"math"
	"testing"

	"tilegen/internal/dispatch"
	"tilegen/internal/protocol"
	"tilegen/internal/variant"
)

// borrowFixture: an NT rule's input measured on one large square, an NN corpus of a large, a
// deep-K and a small shape, and variants: a split-K family with an NN and an NT twin (both
// verified), a second NT variant whose NN twin was timed but which never passed its NT edge suite,
// an NT variant of the same parameters but batched, an NT-only large tile, and a register-tiled
// NT variant of a family of its own whose NN twin is another family of the same template.
func borrowFixture(t *testing.T) (*selection, *dispatch.Data) {
	t.Helper()
	mk := func(name, family string, op variant.Op, bm int, batched bool) *variant.Variant {
		tmpl := family + ".cu.tmpl"
		if family == "regtile_op" {
			tmpl = "regtile.cu.tmpl"
		}
		return &variant.Variant{Name: name, Family: family, Template: tmpl, Op: op, Batched: batched,
			Params: []variant.Param{{Name: "BM", Value: bm}}, Tile: variant.Tile{Rows: bm, Cols: 64}}
	}
	vs := []*variant.Variant{
		mk("sk64", "splitk", variant.OpNN, 64, false), mk("sk64_nt", "splitk", variant.OpNT, 64, false),
		mk("sk32", "splitk", variant.OpNN, 32, false), mk("sk32_nt", "splitk", variant.OpNT, 32, false),
		mk("sk64_nt_sb", "splitk", variant.OpNT, 64, true),
		mk("big_nt", "bigtile", variant.OpNT, 256, false),
		mk("rt128", "regtile", variant.OpNN, 128, false), mk("rt128_nt", "regtile_op", variant.OpNT, 128, false),
	}
	sel := &selection{byName: map[string]*variant.Variant{}, ms: map[protocol.Shape]map[string]Measure{},
		sources: map[protocol.Shape]string{}, edge: map[string]EdgeSuite{}, why: map[string]string{},
		fullEdge: map[string]bool{}, blocksPerSM: map[string]int{"sk64": 3}}
	for _, v := range vs {
		sel.byName[v.Name] = v
		if v.Name != "sk32_nt" { // never verified under NT: no records, so no edge entry
			sel.edge[v.Name] = EdgeSuite{Shapes: 16, Passed: 16}
			sel.fullEdge[v.Name] = true
		}
	}
	meas := func(s protocol.Shape, name string, ms, cub float64) {
		if sel.ms[s] == nil {
			sel.ms[s] = map[string]Measure{}
		}
		sel.ms[s][name] = Measure{Shape: s, MedianMS: ms, CublasMS: cub, Ratio: cub / ms}
	}
	square := protocol.Shape{M: 4096, N: 4096, K: 4096, Op: variant.OpNT}
	large := protocol.Shape{M: 2048, N: 2048, K: 2048}
	deep := protocol.Shape{M: 32, N: 32, K: 100000}
	small := protocol.Shape{M: 64, N: 64, K: 64}
	sel.classes = []protocol.Shape{deep, small, large, square}
	sel.sources[deep] = "gram"
	meas(square, "big_nt", 3.0, 2.8)
	meas(square, "sk64_nt", 4.0, 2.8)
	meas(protocol.Shape{M: 4096, N: 4096, K: 4096}, "sk64", 3.2, 2.7) // its NN twin on the same size: cost 4/3.2
	for _, s := range []protocol.Shape{large, deep, small} {
		meas(s, "sk64", 1.0, 2.0)
		meas(s, "sk32", 2.0, 2.0)
	}
	meas(large, "rt128", 0.8, 2.0)
	d := &dispatch.Data{SMs: 132, Samples: []dispatch.Sample{{Shape: square, CublasMS: 2.8}},
		Kernels: []dispatch.Kernel{sel.kernel("big_nt", "big_nt"), sel.kernel("sk64_nt", "sk64_nt")}, Times: [][]float64{{3.0, 4.0}}}
	return sel, d
}

func TestBorrowNN(t *testing.T) {
	sel, d := borrowFixture(t)
	if tw := sel.nnTwins(variant.OpNT); len(tw) != 2 || tw["sk64_nt"] != "sk64" || tw["rt128_nt"] != "rt128" {
		t.Fatalf("nnTwins = %v, want sk64_nt → sk64 and rt128_nt → rt128 (same template; sk32_nt unverified, sk64_nt_sb batched, big_nt without twin)", tw)
	}
	out, b := borrowNN(sel, d, variant.OpNT)
	if err := out.Check(); err != nil {
		t.Fatal(err)
	}
	// The op measured one large square, fewer than borrowBelow: the large class is borrowed too.
	if b.Shapes != 3 || b.Twins != 2 || len(b.Regimes) != 3 || b.Regimes[0] != "deep-k" || b.Regimes[1] != "small" || b.Regimes[2] != "large" {
		t.Fatalf("borrowed %+v, want 3 shapes (deep-k, small, large) through 2 twins", b)
	}
	if len(out.Samples) != 4 || len(out.Kernels) != 3 || len(d.Samples) != 1 {
		t.Fatalf("%d samples, %d kernels (input left with %d samples)", len(out.Samples), len(out.Kernels), len(d.Samples))
	}
	// The borrowed large shape times the register-tiled kernel through its twin of the other family,
	// at the op's cost (no pair of its own).
	if out.Kernels[2].Name != "rt128_nt" || math.Abs(out.Times[3][2]-0.8*1.25) > 1e-12 || out.Times[3][0] != 0 {
		t.Errorf("large: kernels %v times %v, want rt128_nt at 0.8 × 1.25 and big_nt untimed", out.Kernels[2].Name, out.Times[3])
	}
	if b.Pairs != 1 || math.Abs(b.Cost-1.25) > 1e-12 {
		t.Errorf("cost %v on %d pairs, want 1.25 on 1", b.Cost, b.Pairs)
	}
	for _, s := range out.Samples[1:] {
		if s.Shape.Op != variant.OpNT || s.CublasMS != 2.0 {
			t.Errorf("borrowed sample %+v: want op NT and NN's cuBLAS time", s)
		}
	}
	if out.Samples[1].Source != "gram" {
		t.Errorf("source %q, want the NN class's", out.Samples[1].Source)
	}
	for i := 1; i < 4; i++ {
		// big_nt was never timed there; sk64_nt at its twin's time × the measured cost.
		if out.Times[i][0] != 0 || math.Abs(out.Times[i][1]-1.25) > 1e-12 {
			t.Errorf("times at %v = %v, want [0 1.25 ...]", out.Samples[i].Shape, out.Times[i])
		}
	}
	// With borrowBelow classes of its own in the large class, the op keeps to them there.
	selB, dB := borrowFixture(t)
	for i := 0; i < borrowBelow; i++ {
		sh := protocol.Shape{M: 4096 + 64*i, N: 4096, K: 4096, Op: variant.OpNT}
		dB.Samples = append(dB.Samples, dispatch.Sample{Shape: sh, CublasMS: 2.8})
		dB.Times = append(dB.Times, []float64{3.0, 4.0})
	}
	dB.Samples, dB.Times = dB.Samples[1:], dB.Times[1:]
	if _, b := borrowNN(selB, dB, variant.OpNT); b.Shapes != 2 || len(b.Regimes) != 2 || b.Regimes[1] != "small" {
		t.Errorf("with %d large NT classes: borrowed %+v, want the deep-K and small shapes only", borrowBelow, b)
	}
	// A shape the op measured itself is never borrowed, and nothing is where the op has no twins.
	sel.classes = append(sel.classes, protocol.Shape{M: 32, N: 32, K: 100000, Op: variant.OpNT})
	d.Samples = append(d.Samples, dispatch.Sample{Shape: protocol.Shape{M: 32, N: 32, K: 100000, Op: variant.OpNT}, CublasMS: 1})
	d.Times = append(d.Times, []float64{0, 0.5})
	if _, b := borrowNN(sel, d, variant.OpNT); b.Shapes != 2 || b.Regimes[0] != "small" || b.Regimes[1] != "large" {
		t.Errorf("with the deep-K shape measured under NT: borrowed %+v, want the small and large shapes", b)
	}
	if out, b := borrowNN(sel, d, variant.OpTN); b.Shapes != 0 || out != d {
		t.Errorf("TN has no twins: borrowed %+v", b)
	}
	// The borrowed kernel keeps its own tile and takes its twin's occupancy when it has none.
	sel2, d2 := borrowFixture(t)
	d2.Kernels, d2.Times = d2.Kernels[:1], [][]float64{{3.0}}
	out2, _ := borrowNN(sel2, d2, variant.OpNT)
	if k := out2.Kernels[2]; k.Name != "sk64_nt" || k.BlocksPerSM != 3 || k.TileRows != 64 {
		t.Errorf("appended kernel %+v", k)
	}
}
