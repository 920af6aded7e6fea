package main

import (
	"fmt"
	"io"
	"path/filepath"

	"tilegen/internal/report"
	"tilegen/internal/resultsdir"
)

// fillTiles tells the report each catalog variant's C tile, which its traffic model needs.
func fillTiles(generated string) error {
	cat, err := loadCatalog(generated)
	if err != nil {
		return err
	}
	for _, v := range cat.Variants() {
		report.Tiles[v.Name] = [2]int{v.Tile.Rows, v.Tile.Cols}
	}
	return nil
}

func runReport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report", "RESULTS_DIR... --out DIR", stdout)
	out := fs.String("out", "", "report `dir`: report.md and its charts (PNG and SVG)")
	var cf catalogFlags
	fs.AddFlagSet(cf.sourceFlags())
	reword(fs, "generated", "read variant geometry from the generated `dir` instead of the built-in catalog")
	files := fs.Bool("results-files", false, "rewrite the results.csv and bench.txt each RESULTS_DIR has from its results.jsonl (no GPU); --out is then optional")
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	if fs.NArg() == 0 || (*out == "" && !*files) {
		return usageErr("report", "want result directories and --out DIR (or --results-files)")
	}
	if *files {
		for _, dir := range fs.Args() {
			if err := resultsdir.RenderResultFiles(dir); err != nil {
				return fmt.Errorf("report: %w", err)
			}
			fmt.Fprintf(stdout, "rewrote %s\n", filepath.Join(dir, "results.csv, bench.txt"))
		}
		if *out == "" {
			return nil
		}
	}
	if err := fillTiles(cf.generated); err != nil {
		return err
	}
	var sets []*report.Set
	for _, dir := range fs.Args() {
		s, err := report.Load(dir)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		sets = append(sets, s)
	}
	if err := report.Render(sets, *out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s/report.md\n", *out)
	return nil
}
