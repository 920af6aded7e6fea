package export

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
)

// addTwin adds to a fixture a misaligned-B twin of variant base: a manifest entry with MIS = 1
// appended to base's parameters and base's kernel renamed (source and PTX, hashes recomputed), the
// edge-suite records of base under the twin's name, and base's tune records with every time scaled
// by scale(shape) (below 1: the twin is faster there). Synthetic times, for testing the dispatch.
func addTwin(t *testing.T, tune, verify, gen, base string, scale func(protocol.Shape) float64) variant.Variant {
	t.Helper()
	twin := base + "_m1"
	var tv variant.Variant
	editJSON(t, filepath.Join(gen, "manifest.json"), func(m map[string]any) {
		vs := m["variants"].([]any)
		for _, x := range vs {
			v := x.(map[string]any)
			if v["name"] != base {
				continue
			}
			c := map[string]any{}
			for k, val := range v {
				c[k] = val
			}
			c["name"] = twin
			c["params"] = append(append([]any{}, v["params"].([]any)...), map[string]any{"name": "MIS", "value": 1})
			for _, f := range []struct{ dir, ext, hash string }{{"cuda", ".cu", "source_hash"}, {"ptx", ".ptx", "ptx_hash"}} {
				b, err := os.ReadFile(filepath.Join(gen, f.dir, base+f.ext))
				if err != nil {
					t.Fatal(err)
				}
				// The kernel's name ends in a non-identifier character wherever it appears.
				renamed := []byte(strings.ReplaceAll(string(b), base, twin))
				if err := os.WriteFile(filepath.Join(gen, f.dir, twin+f.ext), renamed, 0o644); err != nil {
					t.Fatal(err)
				}
				c[f.hash] = sha(renamed)
			}
			m["variants"] = append(vs, c)
			b, _ := json.Marshal(c)
			if err := json.Unmarshal(b, &tv); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Fatalf("the fixture has no variant %s", base)
	})
	for _, d := range []string{tune, verify} {
		path := filepath.Join(d, "results.jsonl")
		var extra []results.Record
		editRecords(t, path, func(r *results.Record) bool {
			if r.Variant == base && r.Kind != results.KindCublas {
				c := *r
				c.Key += "-m1"
				c.Variant, c.Params, c.SourceHash, c.PTXHash = tv.Name, tv.ParamString(), tv.SourceHash, tv.PTXHash
				if c.Timing != nil {
					tm := *c.Timing
					f := scale(c.Shape)
					tm.MedianMS, tm.MinMS, tm.MaxMS, tm.MeanMS, tm.Samples = tm.MedianMS*f, tm.MinMS*f, tm.MaxMS*f, tm.MeanMS*f, nil
					c.Timing = &tm
				}
				extra = append(extra, c)
			}
			return true
		})
		appendRecords(t, path, extra)
	}
	return tv
}

// misalignedB is a tuned shape whose packed ldb (N under op(B) = B) is not a multiple of 4.
func misalignedB(s protocol.Shape) bool { return !s.Op.TransB() && s.N%4 != 0 }

// twinScale makes a twin 10 % faster than its variant where B is misaligned and 10 % slower
// elsewhere, as the MIS twins measured on an H200 (results/workload/nvidia-h200/misaligned-b).
func twinScale(s protocol.Shape) float64 {
	if misalignedB(s) {
		return 0.9
	}
	return 1.1
}

// TestMisalignedTwin: an exported variant whose twin the results show faster on misaligned-B shapes
// is replaced by it on problems with ldb not a multiple of 4, and only there; a twin the results
// show slower is not exported.
func TestMisalignedTwin(t *testing.T) {
	tune, verify, gen := copyFixture(t)
	_, base := fixturePlan(t, tune, verify, gen)
	// The fixture's choice at 2048^3, and its twin.
	i, err := base.Choose(variant.OpNN, 2048, 2048, 2048, 2048, 2048, 2048)
	if err != nil {
		t.Fatal(err)
	}
	name := base.Variants[i].V.Name
	addTwin(t, tune, verify, gen, name, twinScale)
	out, p := fixturePlan(t, tune, verify, gen)
	at := map[string]int{}
	for j, c := range p.Variants {
		at[c.V.Name] = j
	}
	v, ok := at[name]
	tw, ok2 := at[name+"_m1"]
	if !ok || !ok2 {
		t.Fatalf("export holds %v; want %s and its twin", at, name)
	}
	if c := p.Variants[v]; c.TwinB != tw || c.TwinShapes < 1 || c.TwinGain < 1.1 {
		t.Fatalf("%s: twin %d (gain %.3f on %d shapes), want %d with a gain of 1/0.9", name, c.TwinB, c.TwinGain, c.TwinShapes, tw)
	}
	checked := 0
	for _, c := range []struct {
		m, n, k, lda, ldb, ldc int
		want                   int
	}{
		{2048, 2048, 2048, 2048, 2048, 2048, v},  // aligned: the variant
		{2048, 2048, 2048, 2048, 2049, 2048, tw}, // ldb odd: the twin
		{2048, 2047, 2048, 2048, 2048, 2047, v},  // N odd, B padded: the variant
		{2048, 2047, 2048, 2048, 2047, 2047, tw}, // N odd, packed
		{2048, 2048, 2047, 2047, 2048, 2048, v},  // A misaligned only
	} {
		got, err := p.Choose(variant.OpNN, c.m, c.n, c.k, c.lda, c.ldb, c.ldc)
		if err != nil {
			t.Fatal(err)
		}
		// The twin replaces the variant wherever the variant would run: compare through the map.
		if base.Variants[must(base.Choose(variant.OpNN, c.m, c.n, c.k, c.lda, c.ldb, c.ldc))].V.Name != name {
			continue
		}
		checked++
		if got != c.want {
			t.Errorf("%dx%dx%d lda=%d ldb=%d ldc=%d: launches %s, want %s", c.m, c.n, c.k, c.lda, c.ldb, c.ldc,
				p.Variants[got].V.Name, p.Variants[c.want].V.Name)
		}
	}
	if checked < 4 {
		t.Errorf("%s ran %d of the 5 probes before the twin; want at least 4", name, checked)
	}
	t.Logf("%s: twin %s, gain %.3f on %d shapes", name, p.Variants[tw].V.Name, p.Variants[v].TwinGain, p.Variants[v].TwinShapes)
	if !strings.Contains(string(mustRead(t, filepath.Join(out, "tg.json"))), `"misaligned_b_twin": "`+name+`_m1"`) {
		t.Errorf("the provenance does not name the twin")
	}

	// A twin the results show slower where B is misaligned is not exported.
	tune, verify, gen = copyFixture(t)
	addTwin(t, tune, verify, gen, name, func(protocol.Shape) float64 { return 1.1 })
	_, q := fixturePlan(t, tune, verify, gen)
	for _, c := range q.Variants {
		if c.V.Name == name+"_m1" || c.TwinB != 0 {
			t.Errorf("a twin slower on the misaligned shapes is exported: %s (twin %d)", c.V.Name, c.TwinB)
		}
	}
}

func must(i int, err error) int {
	if err != nil {
		panic(err)
	}
	return i
}
