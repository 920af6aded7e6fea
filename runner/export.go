package main

import (
	"context"
	"io"

	"tilegen/internal/export"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
	"tilegen/internal/workload"
)

// runExport writes the winners of a results set as a Go package, a CUDA C++ header and a
// provenance file (see package tilegen/internal/export).
func runExport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("export", "--results DIR [--results DIR] --out DIR [flags]", stdout)
	resultDirs := fs.StringArray("results", nil, "results `dir` of runner tune, verify or merge (repeat: a tune and a verify directory)")
	shapes := fs.String("shapes", "", "comma-separated tuned `MxNxK` shapes to fit the dispatch on (default: every tuned shape)")
	corpus := fs.StringArray("corpus", nil, "fit the dispatch on the workload corpus shapes `file` the results tuned (M N K  # source per line; see runner workload; repeat: the files' shapes together)")
	buckets := fs.Int("buckets-per-octave", 2, "dispatch table resolution: `n` buckets per octave of M, N and K (1, 2 or 4)")
	out := fs.String("out", "", "`dir` to create: the Go package, <name>.cuh and <name>.json (required)")
	name := fs.String("name", "tilegen_sgemm", "`name` of the header, its launcher <name>_sgemm and the provenance file (a C identifier)")
	goPkg := fs.String("go-package", "", "import `path` of the Go package; its last element is the package name (default: the name)")
	var cf catalogFlags
	fs.AddFlagSet(cf.sourceFlags())
	redefault(fs, "generated", "generated")
	reword(fs, "generated", "generated `dir` with manifest.json, cuda/ and ptx/ (hashes are checked)")
	force := fs.Bool("force", false, "replace the files of a previous export in --out (other files there are kept)")
	allowUnhashed := fs.Bool("allow-unhashed", false, "accept records without source/PTX hashes (results written before they were recorded)")
	precision := fs.String("precision", "fp32", "arithmetic of the exported kernels: `precision` fp32 (FP32 kernels only), 3xtf32 (also 3xTF32 tensor-core kernels, FP32-accurate) or tf32 (TF32 kernels only, labelled tf32, ratios against cuBLAS TF32)")
	sass := fs.String("sass", "", "also carry each kernel's SASS for these comma-separated GPU `archs` (e.g. sm_90; auto: the GPU the results were timed on), built by the CUDA toolkit's ptxas and fatbinary: no compile at a kernel's first launch on such a GPU (export on the GPU host: an older ptxas than its driver's may build slower code)")
	atLeast(fs, ">=1", "buckets-per-octave")
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if len(*resultDirs) == 0 || *out == "" {
		return usageErr("export", "want --results DIR and --out DIR")
	}
	if *shapes != "" && len(*corpus) > 0 {
		return usageErr("export", "--shapes and --corpus both choose the shapes to fit on: give one")
	}
	if *buckets != 1 && *buckets != 2 && *buckets != 4 {
		return usageErr("export", "--buckets-per-octave %d: want 1, 2 or 4", *buckets)
	}
	prec, err := variant.ParsePrecision(*precision)
	if err != nil {
		return usageErr("export", "--precision: %v", err)
	}
	var sassTools *export.SASS
	if *sass != "" {
		archs, err := export.ParseSASSArchs(*sass)
		if err != nil {
			return usageErr("export", "--sass: %v", err)
		}
		if sassTools, err = export.FindSASS(context.Background(), archs); err != nil {
			return err
		}
	}
	var sh []protocol.Shape
	if *shapes != "" {
		var err error
		if sh, err = results.ParseShapes(*shapes); err != nil {
			return usageErr("export", "--shapes: %v", err)
		}
	}
	var entries []workload.Entry
	for _, path := range *corpus {
		es, err := readCorpus("export", path)
		if err != nil {
			return err
		}
		entries = append(entries, es...)
	}
	return export.Run(export.Options{Results: *resultDirs, Shapes: sh, Corpus: entries, BucketsPerOctave: *buckets,
		Generated: cf.generated, Out: *out, Name: *name, GoPackage: *goPkg, Force: *force, AllowUnhashed: *allowUnhashed, Log: stdout,
		Precision: prec, SASS: sassTools})
}
