package orchestrator

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tilegen/generated"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
)

func TestBenchSummarize(t *testing.T) {
	ranking := []results.ShapeRanking{
		{Shape: "224x256x192", Entries: []results.RankedEntry{
			{Rank: 1, Kind: results.KindTune, Variant: "regtile_broken", Family: "regtile", Median: 0.005, Lo: 0.005, Hi: 0.005, GFLOPS: 4400},
			{Rank: 2, Kind: results.KindTune, Variant: "micro1d_t32_r4", Family: "micro1d", Median: 0.008, Lo: 0.0079, Hi: 0.0081, GFLOPS: 2750},
			{Rank: 3, Kind: results.KindCublas, Variant: results.CublasName, Median: 0.010, Lo: 0.0099, Hi: 0.0101, GFLOPS: 2200},
		}},
		{Shape: "4096x4096x4096", Entries: []results.RankedEntry{
			{Rank: 1, Kind: results.KindCublas, Variant: results.CublasName, Median: 2.6, GFLOPS: 52860},
			{Rank: 2, Kind: results.KindTune, Variant: "regtile_a", Family: "regtile", Median: 2.8, GFLOPS: 49085},
			{Rank: 3, Kind: results.KindTune, Variant: "micro1d_t64_r16", Family: "micro1d", Median: 6.0, GFLOPS: 22906},
		}},
		{Shape: "100x100x100", Entries: []results.RankedEntry{
			{Rank: 1, Kind: results.KindTune, Variant: "naive_16x16", Family: "naive", Median: 0.01, GFLOPS: 200},
		}},
	}
	peak := &protocol.PeakResult{GFLOPS: 60000}
	s := summarize(ranking, nil, map[string]bool{"regtile_broken": true}, variant.SeedFamilies(generated.Variants()), peak)
	if len(s.Shapes) != 3 || s.Shapes[0].Shape != "4096x4096x4096" || s.Shapes[2].Shape != "100x100x100" {
		t.Fatalf("shape order: %+v", s.Shapes)
	}
	big := s.Shapes[0]
	if big.Best.Variant != "regtile_a" || big.BestSeed.Variant != "micro1d_t64_r16" {
		t.Errorf("4096: best %s seed %s", big.Best.Variant, big.BestSeed.Variant)
	}
	if r := big.Ratio; r < 0.928 || r > 0.929 {
		t.Errorf("4096 ratio %v, want 2.6/2.8", r)
	}
	if big.Met == nil || *big.Met {
		t.Errorf("4096: 92.9 %% must miss the 95 %% target: %+v", big.Met)
	}
	small := s.Shapes[1]
	if small.Best.Variant != "micro1d_t32_r4" {
		t.Errorf("an edge-suite failure was reported as winner: %s", small.Best.Variant)
	}
	if small.Met == nil || !*small.Met || small.Ratio < 1.24 || small.Ratio > 1.26 {
		t.Errorf("224: ratio %v met %v", small.Ratio, small.Met)
	}
	if s.Shapes[2].Cublas != nil || s.Shapes[2].Ratio != 0 || s.Shapes[2].Met != nil {
		t.Errorf("shape without cuBLAS: %+v", s.Shapes[2])
	}
	if p := big.Best.PctPeak; p < 81.8 || p > 81.9 {
		t.Errorf("pct of peak %v", p)
	}
	md := BenchMarkdown(s, "results/bench/x")
	for _, want := range []string{"| 4096x4096x4096 | `regtile_a` | 49.09 |", "≥ 0.95 ✗", "≥ 1.00 ✓", "| 100x100x100 | `naive_16x16` |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestWorkerArgs(t *testing.T) {
	dir := t.TempDir()
	writeFile := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(filepath.Join(dir, "manifest.json"), `{"generator":"g","nvcc":"n","arch":"sm_90","variants":[]}`)
	c, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if args, err := WorkerArgs(c); err != nil || args != nil {
		t.Fatalf("catalog without a reference: args %v err %v", args, err)
	}
	ref := ".version 7.8\n// reference " + t.Name() + "\n"
	writeFile(filepath.Join(dir, "support", "reference.ptx"), ref)
	args, err := WorkerArgs(c)
	if err != nil || len(args) != 2 || args[0] != "--reference-ptx" {
		t.Fatalf("args %v err %v", args, err)
	}
	if b, err := os.ReadFile(args[1]); err != nil || string(b) != ref {
		t.Fatalf("reference file %s: %q %v", args[1], b, err)
	}
	if _, err := c.SupportPTX("../manifest"); err == nil {
		t.Fatal("a support name with a path escaped the catalog")
	}
}

// TestBenchUsesWhatItWrote pins that bench's in-memory results (what tune and verify return) are
// what their results directories hold, so summary.json and BENCHMARKS.md come out as they did when
// bench read those files back.
func TestBenchUsesWhatItWrote(t *testing.T) {
	dir := t.TempDir()
	// bad_wrong fails verification, so the edge suite excludes it from the summary.
	cfg, _, _ := testConfig(t, dir, "fast_*", "mid", "bad_wrong")
	tuned, err := tune(cfg)
	if err != nil {
		t.Fatal(err)
	}
	jl, err := results.EncodeJSONL(tuned.recs)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(cfg.Out, "results.jsonl")); err != nil || !bytes.Equal(jl, b) {
		t.Errorf("tune's records differ from its results.jsonl (%v)", err)
	}
	rj, err := json.MarshalIndent(tuned.ranking, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(cfg.Out, "ranking.json")); err != nil || !bytes.Equal(append(rj, '\n'), b) {
		t.Errorf("tune's ranking differs from its ranking.json (%v)", err)
	}
	readRanking, err := results.ReadRanking(filepath.Join(cfg.Out, "ranking.json"))
	if err != nil {
		t.Fatal(err)
	}
	readRecs, err := results.ReadJSONL(filepath.Join(cfg.Out, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}

	vcfg := *cfg
	vcfg.Shapes, vcfg.Out = nil, filepath.Join(dir, "verify")
	vrecs, written, verr := verify(&vcfg)
	if !written {
		t.Fatalf("verify wrote nothing: %v", verr)
	}
	vjl, err := results.EncodeJSONL(vrecs)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(vcfg.Out, "results.jsonl")); err != nil || !bytes.Equal(vjl, b) {
		t.Errorf("verify's records differ from its results.jsonl (%v)", err)
	}
	readVerify, err := results.ReadJSONL(filepath.Join(vcfg.Out, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}

	failedOf := func(rs []results.Record) map[string]bool {
		m := map[string]bool{}
		for _, r := range rs {
			if r.Kind == results.KindVerify && r.Status == results.StatusFailed {
				m[r.Variant] = true
			}
		}
		return m
	}
	seeds := variant.SeedFamilies(cfg.Catalog.Variants())
	peak := &protocol.PeakResult{GFLOPS: 1000}
	render := func(ranking []results.ShapeRanking, recs, vrecs []results.Record) string {
		sum := summarize(ranking, recs, failedOf(vrecs), seeds, peak)
		b, err := json.MarshalIndent(sum, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n" + BenchMarkdown(sum, "results/bench/x")
	}
	if len(failedOf(vrecs)) == 0 {
		t.Error("no variant failed the edge suite; the test means to exclude one")
	}
	if got, want := render(tuned.ranking, tuned.recs, vrecs), render(readRanking, readRecs, readVerify); got != want {
		t.Errorf("summary from memory:\n%s\nfrom the files:\n%s", got, want)
	}
}

// TestKeepWritten: a bench run replaces the generated summary of BENCHMARKS.md and keeps the
// hand-written part after the marker.
func TestKeepWritten(t *testing.T) {
	old := "# Benchmarks\n\nold table\n\n" + WrittenMarker + "\n\n## Profiling\n\nnotes\n"
	got := KeepWritten("# Benchmarks\n\nnew table\n", old)
	want := "# Benchmarks\n\nnew table\n\n" + WrittenMarker + "\n\n## Profiling\n\nnotes\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if got := KeepWritten("# Benchmarks\n", "# Benchmarks\n\nno marker\n"); got != "# Benchmarks\n" {
		t.Errorf("without a marker: %q", got)
	}
}

// TestBenchPrecisionTargets: a suite square under 3xTF32 or TF32 is in the group "precision" with
// the target, and its row says its precision; other tensor-core shapes have no target.
func TestBenchPrecisionTargets(t *testing.T) {
	entries := func(cublasMS, kernelMS float64) []results.RankedEntry {
		return []results.RankedEntry{
			{Rank: 1, Kind: results.KindTune, Variant: "mma_tf32_x", Family: "mma_tf32", Median: kernelMS, GFLOPS: 1},
			{Rank: 2, Kind: results.KindCublas, Variant: results.CublasName, Median: cublasMS, GFLOPS: 1},
		}
	}
	ranking := []results.ShapeRanking{
		{Shape: "4096x4096x4096:3xtf32", Entries: entries(2.6, 2.3)}, // 1.13: misses 2.0
		{Shape: "8192x8192x8192:tf32", Entries: entries(2.7, 2.9)},   // 0.93: meets 0.9
		{Shape: "1041x1247x139:3xtf32", Entries: entries(0.02, 0.01)},
	}
	s := summarize(ranking, nil, nil, nil, &protocol.PeakResult{GFLOPS: 60000})
	type row struct {
		prec   string
		target float64
		met    *bool
	}
	f, tr := false, true
	want := map[string]row{
		"4096x4096x4096:3xtf32": {"3xtf32", 2.0, &f},
		"8192x8192x8192:tf32":   {"tf32", 0.9, &tr},
		"1041x1247x139:3xtf32":  {"3xtf32", 0, nil},
	}
	for _, sh := range s.Shapes {
		key := sh.Shape + ":" + sh.Precision
		w, ok := want[key]
		if !ok {
			t.Errorf("unexpected row %s", key)
			continue
		}
		if sh.Group != "precision" || sh.Target != w.target || sh.Precision != w.prec {
			t.Errorf("%s: group %q target %v precision %q", key, sh.Group, sh.Target, sh.Precision)
		}
		if (sh.Met == nil) != (w.met == nil) || sh.Met != nil && *sh.Met != *w.met {
			t.Errorf("%s: met %v, want %v", key, sh.Met, w.met)
		}
	}
}
