package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tilegen/internal/dispatch"
	"tilegen/internal/results"
)

// TestWorkloadCommand runs `runner workload` over the export fixture (nine H100-tuned shapes as a
// corpus): summary.json has every shape with its source, fold, the two dispatches' variants and
// ratios, and totals that agree with the shapes; summary.md and the chart are written.
func TestWorkloadCommand(t *testing.T) {
	fx := filepath.Join("..", "internal", "export", "testdata")
	out := filepath.Join(t.TempDir(), "workload", "h100")
	var stdout bytes.Buffer
	err := run([]string{"workload", "--results", filepath.Join(fx, "results", "tune"), "--results", filepath.Join(fx, "results", "verify"),
		"--generated", filepath.Join(fx, "generated"), "--allow-unhashed", "--corpus", filepath.Join(fx, "corpus.txt"),
		"--folds", "3", "--out", out}, &stdout, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(stdout.String())
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s dispatch.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Shapes) != 9 || s.Folds != 3 || s.GPU != "NVIDIA H100 80GB HBM3" || s.Kernels != 6 {
		t.Fatalf("%d shapes, %d folds, gpu %q, %d kernels", len(s.Shapes), s.Folds, s.GPU, s.Kernels)
	}
	var all, cv []float64
	for _, r := range s.Shapes {
		sh, err := results.ParseShape(r.Shape)
		if err != nil {
			t.Fatal(err)
		}
		if r.Fold != dispatch.Fold(sh, 3) || r.Source == "" || r.Variant == "" || r.VariantCV == "" || !(r.Ratio > 0) || !(r.RatioCV > 0) ||
			r.BestRatio < r.Ratio || r.BestRatio < r.RatioCV {
			t.Errorf("shape %+v", r)
		}
		all, cv = append(all, r.Ratio), append(cv, r.RatioCV)
	}
	if got, want := s.Totals.Ratio, dispatch.Summarize(all); got != want {
		t.Errorf("totals %+v, want %+v", got, want)
	}
	if got, want := s.Totals.RatioCV, dispatch.Summarize(cv); got != want {
		t.Errorf("held-out totals %+v, want %+v", got, want)
	}
	md, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| held out (cross-validated) | 9 |", "![ratio against problem size](ratio.png)", "| 4096x4096x32 | shallow K |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("summary.md lacks %q", want)
		}
	}
	for _, f := range []string{"ratio.png", "ratio.svg"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	// Usage errors.
	for _, args := range [][]string{
		{"workload", "--results", "x", "--out", "y"},
		{"workload", "--results", "x", "--corpus", filepath.Join(fx, "corpus.txt"), "--out", "y", "--folds", "1"},
		{"workload", "--results", "x", "--corpus", filepath.Join(fx, "corpus.txt"), "--out", "y", "--buckets-per-octave", "3"},
		{"export", "--results", "x", "--out", "y", "--corpus", filepath.Join(fx, "corpus.txt"), "--shapes", "1x1x1"},
		{"export", "--results", "x", "--out", "y", "--sass", "sm_9x"},
		{"export", "--results", "x", "--out", "y", "--sass", "sm_90,compute_90"},
	} {
		if code := exitStatus(run(args, &bytes.Buffer{}, &bytes.Buffer{}), &bytes.Buffer{}); code != 2 {
			t.Errorf("%v: exit status %d, want 2 (usage)", args, code)
		}
	}
}
