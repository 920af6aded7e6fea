package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"tilegen/internal/dispatch"
	"tilegen/internal/export"
	"tilegen/internal/report"
	"tilegen/internal/resultsdir"
	"tilegen/internal/variant"
	"tilegen/internal/workload"
)

// readCorpus reads a --corpus shapes file; its errors are usage errors of cmd.
func readCorpus(cmd, path string) ([]workload.Entry, error) {
	es, err := workload.ReadFile(path)
	if err != nil {
		return nil, usageErr(cmd, "--corpus: %v", err)
	}
	return es, nil
}

// runWorkload fits the export's dispatch rule on a tuned workload corpus, cross-validates it and
// writes summary.json, summary.md and the ratio chart (see package tilegen/internal/dispatch).
func runWorkload(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("workload", "--results DIR [--results DIR] --corpus FILE --out DIR [flags]", stdout)
	resultDirs := fs.StringArray("results", nil, "results `dir` of runner tune (over the corpus) and verify, or merge (repeat)")
	corpus := fs.String("corpus", "", "the corpus shapes `file` (M N K  # source per line) the results tuned (required)")
	out := fs.String("out", "", "`dir` for summary.json, summary.md and ratio.png/.svg, e.g. results/workload/<gpu> (required)")
	folds := fs.Int("folds", 5, "cross-validation `folds` (a shape's fold is a hash of the shape)")
	holdout := fs.StringArray("holdout", nil, "results `dir` of a tune apart from the corpus (every kernel timed on its shapes): judge the exported dispatch there (repeat)")
	holdoutShapes := fs.StringArray("holdout-shapes", nil, "shapes `file` naming the --holdout shapes to judge, with their sources (repeat; default: every single NN product the holdout timed)")
	opName := fs.String("op", "NN", "the `op` (NN, NT, TN, TT) whose corpus shapes the rule is fitted and cross-validated on")
	buckets := fs.Int("buckets-per-octave", 2, "dispatch table resolution: `n` buckets per octave of M, N and K (1, 2 or 4)")
	var cf catalogFlags
	fs.AddFlagSet(cf.sourceFlags())
	redefault(fs, "generated", "generated")
	reword(fs, "generated", "generated `dir` with manifest.json, cuda/ and ptx/ (hashes are checked, as by export)")
	allowUnhashed := fs.Bool("allow-unhashed", false, "accept records without source/PTX hashes (results written before they were recorded)")
	atLeast(fs, ">=1", "folds", "buckets-per-octave")
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if len(*resultDirs) == 0 || *corpus == "" || *out == "" {
		return usageErr("workload", "want --results DIR, --corpus FILE and --out DIR")
	}
	if len(*holdoutShapes) > 0 && len(*holdout) == 0 {
		return usageErr("workload", "--holdout-shapes needs --holdout DIR")
	}
	if *folds < 2 {
		return usageErr("workload", "--folds %d: want at least 2", *folds)
	}
	if *buckets != 1 && *buckets != 2 && *buckets != 4 {
		return usageErr("workload", "--buckets-per-octave %d: want 1, 2 or 4", *buckets)
	}
	op, err := variant.ParseOp(*opName)
	if err != nil {
		return usageErr("workload", "--op: %v", err)
	}
	entries, err := readCorpus("workload", *corpus)
	if err != nil {
		return err
	}
	d, gpu, dev, err := export.Workload(export.Options{Results: *resultDirs, Generated: cf.generated, Corpus: entries,
		AllowUnhashed: *allowUnhashed}, op)
	if err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	v, err := dispatch.CrossValidate(d, *folds, dispatch.Config{BucketsPerOctave: *buckets})
	if err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	s := v.Summary(d)
	s.GPU, s.Op, s.Corpus, s.Results = gpu, string(op), filepath.ToSlash(*corpus), *resultDirs
	if len(*holdout) > 0 {
		var hes []workload.Entry
		for _, f := range *holdoutShapes {
			es, err := workload.ReadFile(f)
			if err != nil {
				return usageErr("workload", "--holdout-shapes: %v", err)
			}
			hes = append(hes, es...)
		}
		hs, hgpu, err := export.HoldoutSamples(*holdout, cf.generated, *allowUnhashed, hes, d)
		if err != nil {
			return fmt.Errorf("workload: --holdout: %w", err)
		}
		if s.Holdout, err = d.Holdout(v.Full, hs); err != nil {
			return fmt.Errorf("workload: --holdout: %w", err)
		}
		s.Holdout.GPU, s.Holdout.Results = hgpu, *holdout
	}
	// DRAM bandwidth: two transfers per memory clock over the bus (GB/s).
	s.AddBandwidth(2*float64(dev.MemClockKHz)*1e3*float64(dev.MemBusWidth)/8/1e9, int64(dev.L2Bytes))
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := resultsdir.WriteAtomic(filepath.Join(*out, "summary.json"), append(b, '\n')); err != nil {
		return err
	}
	if err := report.WriteWorkload(s, *out); err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	fmt.Fprintf(stdout, "%d corpus shapes, %d exportable variants timed; ratio = cuBLAS time / tilegen time\n", len(s.Shapes), s.Kernels)
	for _, t := range []struct {
		name string
		t    dispatch.Totals
	}{{"held out (cross-validated)", s.Totals.RatioCV}, {"exported (fitted on all)", s.Totals.Ratio}, {"fastest timed per shape", s.Totals.Best}} {
		fmt.Fprintf(stdout, "  %-28s geomean %.3f  min %.3f  median %.3f  below 0.9: %d\n", t.name, t.t.Geomean, t.t.Min, t.t.Median, t.t.Below09)
	}
	if bw := s.Bandwidth; bw != nil && bw.Exported.Count > 0 {
		fmt.Fprintf(stdout, "  GEMV-like, DRAM-bound (%d shapes): median %.0f %% of %.0f GB/s (cuBLAS %.0f %%), min %.0f %%, %d at 85 %% or more\n",
			bw.Exported.Count, 100*bw.Exported.Median, bw.PeakGBps, 100*bw.Cublas.Median, 100*bw.Exported.Min, bw.Exported.AtLeast85)
	}
	if h := s.Holdout; h != nil {
		fmt.Fprintf(stdout, "  holdout on %s (%d shapes, %d untimed): exported geomean %.3f  min %.3f  median %.3f  below 0.9: %d; fastest timed geomean %.3f\n",
			h.GPU, len(h.Shapes), h.Untimed, h.Ratio.Geomean, h.Ratio.Min, h.Ratio.Median, h.Ratio.Below09, h.Best.Geomean)
	}
	if s.Rule.WaveGuard != "" {
		fmt.Fprintf(stdout, "  wave guard (fitted on all): %s\n", s.Rule.WaveGuard)
	}
	if s.Rule.BulkGuard != "" {
		fmt.Fprintf(stdout, "  bulk guard (fitted on all): %s\n", s.Rule.BulkGuard)
	}
	fmt.Fprintf(stdout, "wrote %s\n", filepath.Join(*out, "summary.json, summary.md, ratio.png, ratio.svg"))
	return nil
}
