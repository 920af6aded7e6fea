package orchestrator

import (
	"strings"
	"testing"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
)

// TestBenchPrecisionRows: a shape under 3xtf32 or tf32 is a row of the precision group with its
// target, and every entry carries the largest ‖C−R‖/‖R‖ of its own passing verification checks on
// that shape (a failed record, another shape's or another variant's never counts); the Markdown has
// the precision table with both errors and their ratio.
func TestBenchPrecisionRows(t *testing.T) {
	x3 := protocol.Shape{M: 4096, N: 4096, K: 4096, Precision: variant.Precision3xTF32}
	tf := protocol.Shape{M: 4096, N: 4096, K: 4096, Precision: variant.PrecisionTF32}
	fp := protocol.Shape{M: 4096, N: 4096, K: 4096}
	ws, wt := "wgws_128_wg2_k32_s4_l1_f2_3xtf32", "wgws_256_wg2_k32_s4_l0_f1_tf32"
	ranking := []results.ShapeRanking{
		{Shape: results.ShapeString(x3), Entries: []results.RankedEntry{
			{Rank: 1, Kind: results.KindTune, Variant: ws, Family: "wgmma_ws", Median: 1.25, GFLOPS: 110000},
			{Rank: 2, Kind: results.KindCublas, Variant: results.CublasName, Median: 2.65, GFLOPS: 51900},
		}},
		{Shape: results.ShapeString(tf), Entries: []results.RankedEntry{
			{Rank: 1, Kind: results.KindCublas, Variant: results.CublasName, Median: 0.35, GFLOPS: 393000},
			{Rank: 2, Kind: results.KindTune, Variant: wt, Family: "wgmma_ws", Median: 0.43, GFLOPS: 320000},
		}},
		{Shape: results.ShapeString(fp), Entries: []results.RankedEntry{
			{Rank: 1, Kind: results.KindCublas, Variant: results.CublasName, Median: 2.64, GFLOPS: 52000},
		}},
	}
	checks := func(v ...float64) []protocol.VerifyResult {
		var out []protocol.VerifyResult
		for _, x := range v {
			out = append(out, protocol.VerifyResult{Pass: true, NormRel: x})
		}
		return out
	}
	recs := []results.Record{
		{Kind: results.KindTune, Variant: ws, Shape: x3, Status: results.StatusOK, Verify: checks(5.7e-7, 5.9e-7)},
		{Kind: results.KindTune, Variant: ws, Shape: x3, Status: results.StatusFailed, Verify: checks(1)},  // failed: not counted
		{Kind: results.KindTune, Variant: ws, Shape: fp, Status: results.StatusOK, Verify: checks(2e-6)},   // another shape
		{Kind: results.KindTune, Variant: "other", Shape: x3, Status: results.StatusOK, Verify: checks(3)}, // another variant
		{Kind: results.KindCublas, Variant: results.CublasName, Shape: x3, Status: results.StatusOK, Verify: checks(1.15e-6, 1.18e-6)},
		{Kind: results.KindTune, Variant: wt, Shape: tf, Status: results.StatusOK, Verify: checks(4.2e-4)},
		{Kind: results.KindCublas, Variant: results.CublasName, Shape: tf, Status: results.StatusOK, Verify: checks(2.6e-4)},
	}
	s := summarize(ranking, recs, nil, nil, &protocol.PeakResult{GFLOPS: 60000})
	byKey := map[string]BenchShape{}
	for _, r := range s.Shapes {
		byKey[r.key()] = r
	}
	r3, rt := byKey["4096x4096x4096:3xtf32"], byKey["4096x4096x4096:tf32"]
	if r3.Group != "precision" || r3.Precision != "3xtf32" || r3.Target != 2 || r3.Met == nil || !*r3.Met {
		t.Fatalf("3xtf32 row %+v", r3)
	}
	if r3.Best == nil || r3.Best.NormRel != 5.9e-7 || r3.Cublas == nil || r3.Cublas.NormRel != 1.18e-6 {
		t.Fatalf("3xtf32 errors: best %+v cublas %+v", r3.Best, r3.Cublas)
	}
	if rt.Target != 0.9 || rt.Met == nil || *rt.Met || rt.Best.NormRel != 4.2e-4 || rt.Cublas.NormRel != 2.6e-4 {
		t.Fatalf("tf32 row %+v best %+v cublas %+v", rt, rt.Best, rt.Cublas)
	}
	if f := byKey["4096x4096x4096"]; f.Group == "precision" || f.Precision != "fp32" || f.Cublas.NormRel != 0 {
		t.Fatalf("fp32 row %+v", f)
	}
	md := BenchMarkdown(s, "x")
	for _, want := range []string{
		"| 4096x4096x4096 | 3xtf32 | `" + ws + "` | 110.0 | 2.120 | ≥ 2.00 ✓ | 5.90e-07 | 1.18e-06 | 0.50 |",
		"| 4096x4096x4096 | tf32 | `" + wt + "` | 320.0 | 0.814 | ≥ 0.90 ✗ | 4.20e-04 | 2.60e-04 | 1.62 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

// TestLargeCandidatesPerPrecision: the leaders that run a precision's large shapes come from that
// precision's largest shape of the op, never from FP32's (whose kernels cannot run it) or another
// op's.
func TestLargeCandidatesPerPrecision(t *testing.T) {
	entry := func(v string) results.RankedEntry {
		return results.RankedEntry{Kind: results.KindTune, Variant: v, Family: "f"}
	}
	ranking := []results.ShapeRanking{
		{Shape: "4096x4096x4096", Entries: []results.RankedEntry{entry("fp32_a"), entry("fp32_b")}},
		{Shape: "4096x4096x4096:3xtf32", Entries: []results.RankedEntry{entry("x3_a"), entry("x3_b"), entry("x3_c")}},
		{Shape: "2048x2048x2048:3xtf32", Entries: []results.RankedEntry{entry("x3_small")}},
		{Shape: "4096x4096x4096:NT:3xtf32", Entries: []results.RankedEntry{entry("x3_nt")}},
	}
	names, from := largeCandidates(ranking, variant.OpNN, variant.Precision3xTF32, nil, nil, 2)
	if strings.Join(names, ",") != "x3_a,x3_b" || from != "4096x4096x4096:3xtf32" {
		t.Fatalf("3xtf32 leaders %v from %s", names, from)
	}
	names, from = largeCandidates(ranking, variant.OpNN, variant.PrecisionFP32, nil, nil, 2)
	if strings.Join(names, ",") != "fp32_a,fp32_b" || from != "4096x4096x4096" {
		t.Fatalf("fp32 leaders %v from %s", names, from)
	}
	if names, _ := largeCandidates(ranking, variant.OpTT, variant.Precision3xTF32, nil, nil, 2); names != nil {
		t.Fatalf("no TT shape: %v", names)
	}
}
