package main

import (
	"bytes"
	"encoding/json"
	"math"
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
	s := readSummary(t, out)
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
		{"workload", "--results", "x", "--corpus", filepath.Join(fx, "corpus.txt"), "--out", "y", "--op", "XN"},
		{"export", "--results", "x", "--out", "y", "--corpus", filepath.Join(fx, "corpus.txt"), "--shapes", "1x1x1"},
		{"workload", "--results", "x", "--corpus", filepath.Join(fx, "corpus.txt"), "--out", "y", "--holdout-shapes", filepath.Join(fx, "corpus.txt")},
		{"export", "--results", "x", "--out", "y", "--sass", "sm_9x"},
		{"export", "--results", "x", "--out", "y", "--sass", "sm_90,compute_90"},
	} {
		if code := exitStatus(run(args, &bytes.Buffer{}, &bytes.Buffer{}), &bytes.Buffer{}); code != 2 {
			t.Errorf("%v: exit status %d, want 2 (usage)", args, code)
		}
	}
}

// TestWorkloadHoldout judges the fixture's dispatch on a holdout: the fixture's own tune results
// given again as a measurement apart, so that every holdout shape must get the variant and ratio the
// exported dispatch gets on that corpus shape (the fixture's records carry no hashes: matched by
// name and resources under --allow-unhashed, as the export matches them); the shapes file gives the sources and picks the
// shapes, and a shape the holdout did not time is an error.
func TestWorkloadHoldout(t *testing.T) {
	fx := filepath.Join("..", "internal", "export", "testdata")
	dir := t.TempDir()
	pick := filepath.Join(dir, "pick.txt")
	if err := os.WriteFile(pick, []byte("1000 1000 1000  # one\n4096 4096 32  # two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"workload", "--results", filepath.Join(fx, "results", "tune"), "--results", filepath.Join(fx, "results", "verify"),
		"--generated", filepath.Join(fx, "generated"), "--allow-unhashed", "--corpus", filepath.Join(fx, "corpus.txt"), "--folds", "3"}
	// Every single NN product of the holdout.
	out := filepath.Join(dir, "all")
	apart := filepath.Join(fx, "results", "tune")
	var stdout bytes.Buffer
	if err := run(append(base, "--out", out, "--holdout", apart), &stdout, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	s := readSummary(t, out)
	h := s.Holdout
	if h == nil || h.GPU != "NVIDIA H100 80GB HBM3" || len(h.Shapes) != 9 || h.Untimed != 0 || !strings.Contains(stdout.String(), "holdout on NVIDIA H100") {
		t.Fatalf("holdout %+v\n%s", h, stdout.String())
	}
	exported := map[string]dispatch.ShapeResult{}
	for _, r := range s.Shapes {
		exported[r.Shape] = r
	}
	for _, x := range h.Shapes {
		e := exported[x.Shape]
		if x.Variant != e.Variant || math.Abs(x.Ratio-e.Ratio) > 1e-9*e.Ratio || math.Abs(x.BestRatio-e.BestRatio) > 1e-9*e.BestRatio {
			t.Errorf("%s: holdout %s %.4f (best %.4f), exported %s %.4f (best %.4f)", x.Shape, x.Variant, x.Ratio, x.BestRatio,
				e.Variant, e.Ratio, e.BestRatio)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil || !strings.Contains(string(md), "### Holdout: 9 shapes measured apart on NVIDIA H100 80GB HBM3") {
		t.Errorf("summary.md: %v", err)
	}
	// A shapes file picks the shapes and names their sources.
	if err := run(append(base, "--out", out, "--holdout", apart, "--holdout-shapes", pick), &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if h := readSummary(t, out).Holdout; h == nil || len(h.Shapes) != 2 || h.Shapes[0].Source != "two" || h.Shapes[1].Source != "one" {
		t.Fatalf("picked holdout %+v", h)
	}
	if err := os.WriteFile(pick, []byte("1000 1000 999  # never timed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = run(append(base, "--out", out, "--holdout", apart, "--holdout-shapes", pick), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "1000x1000x999") {
		t.Errorf("a holdout shape never timed: %v", err)
	}
}

// readSummary reads summary.json of a `runner workload` output directory.
func readSummary(t *testing.T, out string) dispatch.Summary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s dispatch.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}
