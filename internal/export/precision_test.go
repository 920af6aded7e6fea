package export

import (
	"strings"
	"testing"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
)

// TestPrecisionRecords: an FP32 export sees FP32 records only; a 3xtf32 export FP32 and 3xTF32
// ones; a tf32 export TF32 ones only (never mixed with FP32). Tune and cuBLAS shapes become FP32
// (the classes are problems), verify records keep their precision for the edge-suite match.
func TestPrecisionRecords(t *testing.T) {
	rec := func(kind string, p variant.Precision) results.Record {
		return results.Record{Kind: kind, Shape: protocol.Shape{M: 8, N: 8, K: 8, Precision: p}}
	}
	var recs []results.Record
	for _, p := range variant.Precisions {
		recs = append(recs, rec(results.KindTune, p), rec(results.KindCublas, p), rec(results.KindVerify, p))
	}
	for _, c := range []struct {
		p    variant.Precision
		want int
	}{{variant.PrecisionFP32, 3}, {variant.Precision3xTF32, 6}, {variant.PrecisionTF32, 3}} {
		got := precisionRecords(recs, c.p)
		if len(got) != c.want {
			t.Errorf("%s: %d records, want %d", c.p, len(got), c.want)
		}
		for _, r := range got {
			if r.Kind != results.KindVerify && r.Shape.Precision != variant.PrecisionFP32 {
				t.Errorf("%s: %s record keeps precision %s", c.p, r.Kind, r.Shape.Precision)
			}
			if c.p == variant.PrecisionTF32 && r.Kind == results.KindVerify && r.Shape.Precision != variant.PrecisionTF32 {
				t.Errorf("tf32 export admitted a %s verify record", r.Shape.Precision)
			}
		}
	}
}

// TestTargetDoc: an export holding a kernel for an arch-specific PTX target says which, and how to
// compile and load it, in the package doc and the header; one without says nothing.
func TestTargetDoc(t *testing.T) {
	p := &Plan{Name: "tg", PkgName: "tg", Variants: []Chosen{{V: variant.Variant{Name: "regtile_a"}}}}
	if d := targetDoc(p); d != "" {
		t.Errorf("no target: %q", d)
	}
	p.Variants = append(p.Variants, Chosen{V: variant.Variant{Name: "wgmma_128_wg2_k32_s4_p2_3xtf32", Target: "sm_90a"}})
	d := targetDoc(p)
	for _, want := range []string{"wgmma_128_wg2_k32_s4_p2_3xtf32 (sm_90a)", "-gencode arch=compute_90a,code=sm_90a", "Load fails on another GPU"} {
		if !strings.Contains(d, want) {
			t.Errorf("target doc lacks %q:\n%s", want, d)
		}
	}
	if !strings.Contains(packageDoc(p), d) {
		t.Errorf("the package doc lacks the target paragraph")
	}
	if got := docLines(d); len(got) < 2 || got[len(got)-1] != "" {
		t.Errorf("header lines %q: want the paragraph and an empty line", got)
	}
}
