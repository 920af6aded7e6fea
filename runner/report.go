package main

import (
	"fmt"
	"io"

	"tilegen/internal/report"
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
	fs := newFlags("report", "RESULTS_DIR... --out DIR", stderr)
	out := fs.String("out", "", "report `dir`: report.md and its charts (PNG and SVG)")
	generated := fs.String("generated", "", "read variant geometry from the generated `dir` instead of the built-in catalog")
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	if *out == "" || fs.NArg() == 0 {
		return fmt.Errorf("report: want result directories and --out DIR")
	}
	if err := fillTiles(*generated); err != nil {
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
