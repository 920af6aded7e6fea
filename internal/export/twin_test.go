package export

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
)

// addTwin adds to a fixture a misaligned twin of variant base: a manifest entry with MIS = mis
// appended to base's parameters (named base_m<mis>) and base's kernel renamed (source and PTX,
// hashes recomputed), the edge-suite records of base under the twin's name, and base's tune records
// with every time scaled by scale(shape) (below 1: the twin is faster there). Synthetic times, for
// testing the dispatch.
func addTwin(t *testing.T, tune, verify, gen, base string, mis int, scale func(protocol.Shape) float64) variant.Variant {
	t.Helper()
	twin := fmt.Sprintf("%s_m%d", base, mis)
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
			c["params"] = append(append([]any{}, v["params"].([]any)...), map[string]any{"name": "MIS", "value": mis})
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
				c.Key += "-" + twin
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

// cloneShape adds to a fixture's tune records a copy of every record of shape from under shape to
// (the same times), so that the fixture holds a tuned shape of another misalignment class (before
// addTwin, which scales the twin's times by shape).
func cloneShape(t *testing.T, tune string, from, to protocol.Shape) {
	t.Helper()
	path := filepath.Join(tune, "results.jsonl")
	var extra []results.Record
	editRecords(t, path, func(r *results.Record) bool {
		if r.Shape == from {
			c := *r
			c.Key += "-" + results.ShapeString(to)
			c.Shape = to
			extra = append(extra, c)
		}
		return true
	})
	if len(extra) == 0 {
		t.Fatalf("the fixture has no record of %s", results.ShapeString(from))
	}
	appendRecords(t, path, extra)
}

// twinScale makes a MIS = 1 twin 10 % faster than its variant where B is misaligned (misalignment
// classes 1 and 3) and 10 % slower elsewhere, as the MIS = 1 twins measured on an H200
// (results/workload/nvidia-h200/misaligned-b).
func twinScale(s protocol.Shape) float64 {
	if MisClass(s.K, s.N)&1 != 0 {
		return 0.9
	}
	return 1.1
}

// twinScaleA makes a MIS = 3 twin 15 % faster where only A is misaligned, 5 % where both are (so
// that the MIS = 1 twin wins there) and 10 % slower elsewhere, roughly as the MIS = 3 twins measured
// (results/workload/nvidia-h200/misaligned-a).
func twinScaleA(s protocol.Shape) float64 {
	switch MisClass(s.K, s.N) {
	case 2:
		return 0.85
	case 3:
		return 0.95
	}
	return 1.1
}

// TestMisalignedTwin: an exported variant whose twins the results show faster on a misalignment
// class is replaced on problems of that class by the fastest of them, and only there; a class
// without measurements keeps the variant; a twin the results show slower is not exported.
func TestMisalignedTwin(t *testing.T) {
	tune, verify, gen := copyFixture(t)
	_, base := fixturePlan(t, tune, verify, gen)
	// The fixture's choice at 2048^3, and its twins.
	i, err := base.Choose(variant.OpNN, 2048, 2048, 2048, 2048, 2048, 2048)
	if err != nil {
		t.Fatal(err)
	}
	name := base.Variants[i].V.Name
	// The fixture's tuned shapes hold classes 2 and 3; a class-1 shape (N = 4094) from 4096^3, a cell
	// away from the probes (there the rule may take the twin itself).
	cloneShape(t, tune, protocol.Shape{M: 4096, N: 4096, K: 4096}, protocol.Shape{M: 4096, N: 4094, K: 4096})
	addTwin(t, tune, verify, gen, name, 1, twinScale)
	addTwin(t, tune, verify, gen, name, 3, twinScaleA)
	out, p := fixturePlan(t, tune, verify, gen)
	at := map[string]int{}
	for j, c := range p.Variants {
		at[c.V.Name] = j
	}
	v, ok := at[name]
	t1, ok1 := at[name+"_m1"]
	t3, ok3 := at[name+"_m3"]
	if !ok || !ok1 || !ok3 {
		t.Fatalf("export holds %v; want %s and its twins", at, name)
	}
	for cls, want := range map[int]struct {
		twin int
		gain float64
	}{1: {t1, 1 / 0.9}, 2: {t3, 1 / 0.85}, 3: {t1, 1 / 0.9}} {
		if c := p.Variants[v].Twins[cls]; c.Index != want.twin || c.Shapes < 1 || math.Abs(c.Gain-want.gain) > 1e-9 {
			t.Errorf("%s class %d: twin %d (gain %.4f on %d shapes), want %d with a gain of %.4f", name, cls, c.Index, c.Gain, c.Shapes, want.twin, want.gain)
		}
	}
	checked := 0
	for _, c := range []struct {
		m, n, k, lda, ldb, ldc int
		want                   int
	}{
		{2048, 2048, 2048, 2048, 2048, 2048, v},  // aligned: the variant
		{2048, 2048, 2048, 2048, 2049, 2048, t1}, // ldb odd: B's twin
		{2048, 2047, 2048, 2048, 2048, 2047, v},  // N odd, B padded: the variant
		{2048, 2047, 2048, 2048, 2047, 2047, t1}, // N odd, packed
		{2048, 2048, 2047, 2047, 2048, 2048, t3}, // A misaligned only: A's twin
		{2048, 2048, 2048, 2049, 2048, 2048, t3}, // lda odd
		{2048, 2047, 2047, 2047, 2047, 2047, t1}, // both: the faster there
	} {
		got, err := p.Choose(variant.OpNN, c.m, c.n, c.k, c.lda, c.ldb, c.ldc)
		if err != nil {
			t.Fatal(err)
		}
		// A twin replaces the variant wherever the variant would run: compare through the map.
		if base.Variants[must(base.Choose(variant.OpNN, c.m, c.n, c.k, c.lda, c.ldb, c.ldc))].V.Name != name {
			continue
		}
		checked++
		if got != c.want {
			t.Errorf("%dx%dx%d lda=%d ldb=%d ldc=%d: launches %s, want %s", c.m, c.n, c.k, c.lda, c.ldb, c.ldc,
				p.Variants[got].V.Name, p.Variants[c.want].V.Name)
		}
	}
	if checked < 5 {
		t.Errorf("%s ran %d of the 7 probes before the twins; want at least 5", name, checked)
	}
	prov := string(mustRead(t, filepath.Join(out, "tg.json")))
	for _, w := range []string{`"twin": "` + name + `_m1"`, `"twin": "` + name + `_m3"`, `"class": "A+B"`} {
		if !strings.Contains(prov, w) {
			t.Errorf("the provenance does not say %s", w)
		}
	}

	// Without a tuned shape of class 1 the variant keeps class-1 problems.
	tune, verify, gen = copyFixture(t)
	addTwin(t, tune, verify, gen, name, 1, twinScale)
	_, q := fixturePlan(t, tune, verify, gen)
	for _, c := range q.Variants {
		if c.V.Name == name && (c.Twins[1].Index != 0 || c.Twins[3].Index == 0) {
			t.Errorf("%s without class-1 shapes: twins %+v, want one for class 3 only", name, c.Twins)
		}
	}

	// A twin the results show slower where B is misaligned is not exported.
	tune, verify, gen = copyFixture(t)
	addTwin(t, tune, verify, gen, name, 1, func(protocol.Shape) float64 { return 1.1 })
	_, q = fixturePlan(t, tune, verify, gen)
	for _, c := range q.Variants {
		if c.V.Name == name+"_m1" || c.Twins != [4]Twin{} {
			t.Errorf("a twin slower on the misaligned shapes is exported: %s (twins %+v)", c.V.Name, c.Twins)
		}
	}
}

func must(i int, err error) int {
	if err != nil {
		panic(err)
	}
	return i
}
