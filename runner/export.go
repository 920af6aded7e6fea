package main

import (
	"io"

	"tilegen/internal/export"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
)

// runExport writes the winners of a results set as a Go package, a CUDA C++ header and a
// provenance file (see package tilegen/internal/export).
func runExport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("export", "--results DIR [--results DIR] --out DIR [flags]", stdout)
	resultDirs := fs.StringArray("results", nil, "results `dir` of runner tune, verify or merge (repeat: a tune and a verify directory)")
	shapes := fs.String("shapes", "", "comma-separated tuned `MxNxK` shapes to dispatch by (default: every tuned shape)")
	out := fs.String("out", "", "`dir` to create: the Go package, <name>.cuh and <name>.json (required)")
	name := fs.String("name", "tilegen_sgemm", "`name` of the header, its launcher <name>_sgemm and the provenance file (a C identifier)")
	goPkg := fs.String("go-package", "", "import `path` of the Go package; its last element is the package name (default: the name)")
	var cf catalogFlags
	fs.AddFlagSet(cf.sourceFlags())
	redefault(fs, "generated", "generated")
	reword(fs, "generated", "generated `dir` with manifest.json, cuda/ and ptx/ (hashes are checked)")
	force := fs.Bool("force", false, "replace the files of a previous export in --out (other files there are kept)")
	allowUnhashed := fs.Bool("allow-unhashed", false, "accept records without source/PTX hashes (results written before they were recorded)")
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if len(*resultDirs) == 0 || *out == "" {
		return usageErr("export", "want --results DIR and --out DIR")
	}
	var sh []protocol.Shape
	if *shapes != "" {
		var err error
		if sh, err = results.ParseShapes(*shapes); err != nil {
			return usageErr("export", "--shapes: %v", err)
		}
	}
	return export.Run(export.Options{Results: *resultDirs, Shapes: sh, Generated: cf.generated, Out: *out, Name: *name,
		GoPackage: *goPkg, Force: *force, AllowUnhashed: *allowUnhashed, Log: stdout})
}
