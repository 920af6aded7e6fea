package orchestrator

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
)

// opCatalog is the fixture catalog with mid compiled for TN.
func opCatalog(t *testing.T) *DirCatalog {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/catalog")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m variant.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for i := range m.Variants {
		if m.Variants[i].Name == "mid" {
			m.Variants[i].Op = variant.OpTN
		}
	}
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTuneOps: a shape runs under its op; a variant is a candidate only for shapes of its op (and
// leaves no skipped record elsewhere); cuBLAS is timed per op; NN records keep the keys and
// strings they had before ops existed, while the same dimensions under another op are another
// problem with another key and verification seed.
func TestTuneOps(t *testing.T) {
	cfg, _, _ := testConfig(t, t.TempDir(), "fast_a", "mid")
	cfg.Catalog = opCatalog(t)
	sh, _ := results.ParseShapes("256x256x256")
	cfg.Shapes = results.WithOps(sh, []variant.Op{variant.OpNN, variant.OpTN})
	cfg.Rank.Rounds = 0
	if err := Tune(cfg); err != nil {
		t.Fatal(err)
	}
	recs := readRecords(t, cfg.Out)
	for _, want := range []string{"fast_a 256x256x256", "mid 256x256x256:TN", "cublas 256x256x256", "cublas 256x256x256:TN"} {
		if r, ok := recs[want]; !ok || r.Status != results.StatusOK {
			t.Errorf("%s: %+v (present %v)", want, r.Status, ok)
		}
	}
	for _, absent := range []string{"fast_a 256x256x256:TN", "mid 256x256x256"} {
		if _, ok := recs[absent]; ok {
			t.Errorf("%s: a record for a variant of another op", absent)
		}
	}
	if a, b := recs["cublas 256x256x256"], recs["cublas 256x256x256:TN"]; a.Key == b.Key || a.Seed == b.Seed {
		t.Errorf("NN and TN cuBLAS records share key %s / seed %d", a.Key, a.Seed)
	}
	nn := protocol.Shape{M: 256, N: 256, K: 256}
	if got, want := DeriveSeed("fast_a", nn, 1), DeriveSeed("fast_a", protocol.Shape{M: 256, N: 256, K: 256, Op: variant.OpNN}, 1); got != want {
		t.Error("seed of an NN shape depends on how NN is spelled")
	}
	if b, _ := json.Marshal(nn); string(b) != `{"m":256,"n":256,"k":256}` {
		t.Errorf("an NN shape serializes as %s: keys of earlier records would change", b)
	}
}

func TestPlanAndEdgeShapesPerOp(t *testing.T) {
	vs := []variant.Variant{
		{Name: "a", Tile: variant.Tile{Rows: 16, Cols: 16}, Requires: variant.Requirements{MMultiple: 1, NMultiple: 1, KMultiple: 1, LDMultiple: 1}},
		{Name: "b_tt", Op: variant.OpTT, Tile: variant.Tile{Rows: 16, Cols: 16}, Requires: variant.Requirements{MMultiple: 1, NMultiple: 1, KMultiple: 1, LDMultiple: 1}},
	}
	shapes := []protocol.Shape{{M: 8, N: 8, K: 8}, {M: 8, N: 8, K: 8, Op: variant.OpTT}, {M: 8, N: 8, K: 8, Op: variant.OpNT}}
	items, err := buildPlan(vs, shapes, Strategy{}, Shard{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || items[0].V.Name != "a" || items[0].Shape.Op != variant.OpNN || items[1].V.Name != "b_tt" || items[1].Shape.Op != variant.OpTT {
		t.Errorf("plan %+v", items)
	}
	for _, s := range EdgeShapes(&vs[1]) {
		if s.Op != variant.OpTT {
			t.Fatalf("edge shape %s of a TT variant", results.ShapeString(s))
		}
	}
	// Batched variants take batched shapes only, unbatched ones one product.
	sb := variant.Variant{Name: "c_sb", Batched: true, Tile: variant.Tile{Rows: 16, Cols: 16}, Requires: variant.Requirements{MMultiple: 1, NMultiple: 1, KMultiple: 1, LDMultiple: 1}}
	items, err = buildPlan([]variant.Variant{vs[0], sb}, []protocol.Shape{{M: 8, N: 8, K: 8}, {M: 8, N: 8, K: 8, Batch: 4}, {M: 8, N: 8, K: 8, Batch: 70000}}, Strategy{}, Shard{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 3 || items[0].V.Name != "a" || items[1].V.Name != "c_sb" || items[1].Skip != "" || items[2].Skip == "" {
		t.Errorf("batched plan %+v", items)
	}
	for _, s := range EdgeShapes(&sb) {
		if s.Batch != EdgeBatch {
			t.Fatalf("edge shape %s of a batched variant", results.ShapeString(s))
		}
	}
	f := Filter{Ops: []variant.Op{variant.OpTT}}
	got, err := f.Select(vs)
	if err != nil || len(got) != 1 || got[0].Name != "b_tt" {
		t.Errorf("--ops TT selected %v, %v", got, err)
	}
	if f.String() != "--ops TT" {
		t.Errorf("filter string %q", f.String())
	}
}

// TestWatchdogCountsTheBatch: a batch's verification handles every product's elements in three
// checks, so its watchdog budget grows with the batch (8×(4096×4096×64) timed out at the 10 s floor
// when it did not).
func TestWatchdogCountsTheBatch(t *testing.T) {
	w := DefaultWatchdog()
	v := &protocol.VerifySettings{SubMatrix: true, TolFactor: 2}
	one := w.timeout(protocol.Shape{M: 4096, N: 4096, K: 64}, 0.1, nil, v)
	batch := w.timeout(protocol.Shape{M: 4096, N: 4096, K: 64, Batch: 8}, 0.8, nil, v)
	if batch < 20*time.Second || batch <= one {
		t.Errorf("watchdog for 8×(4096×4096×64) %v (one product %v): too short for 3 checks of 8 products", batch, one)
	}
}
