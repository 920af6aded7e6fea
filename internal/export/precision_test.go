package export

import (
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
