// Package results is the results data model shared by the engine (internal/orchestrator) and the
// readers of its output (export, report, study): a Record is one line of the cache and of
// results.jsonl, a RunInfo is device.json, a ShapeRanking is one shape of ranking.json. It also owns
// the reading of those files (results.jsonl or its committed .gz), the order records are written
// in, and the shape helpers (MxNxK parsing and printing, FLOP counts) every table uses.
//
// It holds data and pure functions only: planning, measuring and writing results are the engine's.
package results
