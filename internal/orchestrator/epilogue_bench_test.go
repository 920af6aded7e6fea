package orchestrator

import (
	"strings"
	"testing"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
)

// TestBenchSummarizeEpilogue: a shape with a fused epilogue gives two rows, against cuBLAS + the
// separate epilogue (the cuBLAS record's own time) and against cublasLt (its extra baseline), each
// with its ratio and target; plain rows say epilogue none and baseline cublas; a cublasLt that
// failed verification or only left a note gives a row without a ratio.
func TestBenchSummarizeEpilogue(t *testing.T) {
	sh := protocol.Shape{M: 4096, N: 4096, K: 1024, Epilogue: variant.EpiBiasReluCol}
	gelu := protocol.Shape{M: 8192, N: 1024, K: 4096, Epilogue: variant.EpiBiasGeluCol}
	ranking := []results.ShapeRanking{
		{Shape: results.ShapeString(gelu), Entries: []results.RankedEntry{
			{Rank: 1, Kind: results.KindCublas, Variant: results.CublasName, Median: 1.4, GFLOPS: 49000},
			{Rank: 2, Kind: results.KindTune, Variant: "regtile_x_bias_gelu_col", Family: "regtile_epi", Median: 1.42, GFLOPS: 48000},
		}},
		{Shape: results.ShapeString(sh), Entries: []results.RankedEntry{
			{Rank: 1, Kind: results.KindTune, Variant: "regtile_x_bias_relu_col", Family: "regtile_epi", Median: 0.72, GFLOPS: 47700},
			{Rank: 2, Kind: results.KindCublas, Variant: results.CublasName, Median: 0.75, GFLOPS: 45800},
		}},
		{Shape: "4096x4096x4096", Entries: []results.RankedEntry{
			{Rank: 1, Kind: results.KindCublas, Variant: results.CublasName, Median: 2.6, GFLOPS: 52860},
		}},
	}
	pass := []protocol.VerifyResult{{Pass: true}, {Pass: true}}
	recs := []results.Record{
		{Kind: results.KindCublas, Variant: results.CublasName, Shape: sh, Status: results.StatusOK, Timing: &protocol.TimingResult{MedianMS: 0.75},
			Baselines: []protocol.BaselineResult{{Name: protocol.BaselineCublasLt, Verify: pass, Timing: &protocol.TimingResult{MedianMS: 0.69, Reps: 100, Samples: []float64{0.69, 0.69, 0.70}}}}},
		{Kind: results.KindCublas, Variant: results.CublasName, Shape: gelu, Status: results.StatusOK, Timing: &protocol.TimingResult{MedianMS: 1.4},
			Baselines: []protocol.BaselineResult{{Name: protocol.BaselineCublasLt, Verify: []protocol.VerifyResult{{Pass: false}}, Timing: &protocol.TimingResult{MedianMS: 1.0}}}},
	}
	s := summarize(ranking, recs, nil, nil, &protocol.PeakResult{GFLOPS: 60000})
	if len(s.Shapes) != 5 {
		t.Fatalf("%d rows, want 2 + 2 + 1: %+v", len(s.Shapes), s.Shapes)
	}
	var keys []string
	for _, r := range s.Shapes {
		keys = append(keys, r.label())
	}
	want := "4096x4096x4096, 4096x4096x1024:bias_relu_col vs cublas+epilogue, 4096x4096x1024:bias_relu_col vs cublaslt, " +
		"8192x1024x4096:bias_gelu_col vs cublas+epilogue, 8192x1024x4096:bias_gelu_col vs cublaslt"
	if got := strings.Join(keys, ", "); got != want {
		t.Fatalf("rows %s\nwant %s", got, want)
	}
	plain, sep, lt, gsep, glt := s.Shapes[0], s.Shapes[1], s.Shapes[2], s.Shapes[3], s.Shapes[4]
	if plain.Epilogue != "none" || plain.Bias != "" || plain.Baseline != protocol.BaselineCublas {
		t.Errorf("plain row %+v", plain)
	}
	if sep.Epilogue != "bias_relu" || sep.Bias != "col" || sep.Shape != "4096x4096x1024" || sep.Group != "epilogue" || sep.Target != 1 {
		t.Errorf("epilogue row %+v", sep)
	}
	if r := sep.Ratio; r < 1.0416 || r > 1.0417 || sep.Met == nil || !*sep.Met {
		t.Errorf("vs cublas+epilogue: ratio %v met %v, want 0.75/0.72", r, sep.Met)
	}
	if lt.Baseline != protocol.BaselineCublasLt || lt.Cublas == nil || lt.Cublas.Variant != protocol.BaselineCublasLt {
		t.Fatalf("cublaslt row %+v", lt)
	}
	if r := lt.Ratio; r < 0.958 || r > 0.959 || lt.Met == nil || *lt.Met {
		t.Errorf("vs cublaslt: ratio %v met %v, want 0.69/0.72 missing the target", r, lt.Met)
	}
	if tf := lt.Cublas.TFLOPS; tf < 49.7 || tf > 49.9 {
		t.Errorf("cublaslt TFLOP/s %v", tf)
	}
	if gsep.Ratio == 0 || glt.Cublas != nil || glt.Ratio != 0 || glt.Met != nil {
		t.Errorf("a cublasLt that failed verification must give no ratio: %+v / %+v", gsep, glt)
	}
	md := BenchMarkdown(s, "x")
	if !strings.Contains(md, "| 4096x4096x1024:bias_relu_col vs cublaslt | `regtile_x_bias_relu_col` |") {
		t.Errorf("markdown:\n%s", md)
	}
}
