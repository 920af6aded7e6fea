package main

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tilegen/internal/protocol"
	"tilegen/internal/report"
	"tilegen/internal/results"
	"tilegen/internal/resultsdir"
)

// TestHybridRenderOnly redraws a sweep's chart from result.json without a GPU: PNG and SVG, within
// the chart size bound, every series in the legend, the overall time's spread as whiskers.
func TestHybridRenderOnly(t *testing.T) {
	dir := t.TempDir()
	r := hybridResult{Shape: protocol.Shape{M: 8192, N: 8192, K: 8192}, Variant: "micro1d_t64_r16"}
	for i, f := range []int{0, 32, 64, 128} {
		cpu := float64(f) * 2.8
		r.Rows = append(r.Rows, &protocol.HybridResult{CPURows: f, GPURows: 8192 - f, GPUMS: 62 + float64(i), CPUMS: cpu,
			OverallMS: max(62, cpu), OverallSamples: []float64{max(62, cpu), max(62, cpu) * 1.05, max(62, cpu) * 0.97}})
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "result.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := run([]string{"hybrid", "--render-only", "--out", dir}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	f, err := os.Open(filepath.Join(dir, "hybrid.png"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(f)
	f.Close()
	if err != nil || cfg.Width > report.MaxChartPx || cfg.Height > report.MaxChartPx {
		t.Errorf("hybrid.png %d×%d (%v)", cfg.Width, cfg.Height, err)
	}
	svg, _ := os.ReadFile(filepath.Join(dir, "hybrid.svg"))
	for _, want := range []string{">GPU part", ">CPU part", ">overall", ">all-GPU overall 62.0 ms<", results.ShapeString(r.Shape)} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("hybrid.svg lacks %q", want)
		}
	}
	if err := run([]string{"hybrid", "--render-only", "--out", t.TempDir()}, &out, &errb); err == nil {
		t.Error("render-only without result.json: want an error")
	}
}

// TestReportResultsFiles rewrites results.csv from results.jsonl through the command line.
func TestReportResultsFiles(t *testing.T) {
	dir := t.TempDir()
	sh := protocol.Shape{M: 64, N: 64, K: 64}
	recs := []results.Record{
		{Key: "c", Kind: results.KindCublas, Variant: results.CublasName, Shape: sh, Status: results.StatusOK,
			Timing: &protocol.TimingResult{Reps: 1, MedianMS: 1}},
		{Key: "v", Kind: results.KindTune, Variant: "v", Shape: sh, Status: results.StatusOK,
			Timing: &protocol.TimingResult{Reps: 1, MedianMS: 0.5}},
	}
	if err := resultsdir.WriteResults(dir, recs, results.RunInfo{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.csv"), []byte("stale\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := run([]string{"report", "--results-files", dir}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	b, _ := os.ReadFile(filepath.Join(dir, "results.csv"))
	if !strings.Contains(string(b), ",ratio,") || !strings.Contains(string(b), ",2,") {
		t.Errorf("results.csv not rewritten with ratio 2:\n%s", b)
	}
}
