package main

import (
	"io"
	"strings"
	"time"

	"tilegen/generated"
	"tilegen/internal/orchestrator"
)

func runBench(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", "[flags]", stdout)
	var c common
	// Empty --shapes means the suite's own shapes (orchestrator.BenchShapes).
	fs.AddFlagSet(c.flags("", ""))
	var t tuneFlags
	fs.AddFlagSet(t.flags())
	root := fs.String("root", "results/bench", "the suite writes into `dir`/<gpu>/")
	md := fs.String("markdown", "BENCHMARKS.md", "render the summary into `file` (empty: do not)")
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if err := t.check("bench", c.shard); err != nil {
		return err
	}
	cfg, err := c.config("bench", stdout, stderr, true)
	if err != nil {
		return err
	}
	t.apply(cfg)
	peak, err := generated.SupportPTX("peak")
	if err != nil {
		return err
	}
	return orchestrator.Bench(cfg, orchestrator.BenchSettings{Root: *root, PeakPTX: peak, Markdown: *md,
		Command: "runner bench " + strings.Join(args, " "), Now: time.Now()})
}
