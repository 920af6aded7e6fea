// Package resultsdir writes a results directory's files from records: results.jsonl, results.csv
// (with the sweep rank and the roofline columns), bench.txt (Go benchmark format for benchstat),
// device.json, ranking.txt and ranking.json; it ranks a shape's candidates by median with ties
// where their confidence intervals overlap; RenderResultFiles re-renders the CSV and bench.txt of a
// committed directory without a GPU. Reading those files is internal/results; measuring them is
// the engine's (internal/orchestrator).
package resultsdir
