package orchestrator

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"tilegen/internal/results"
	"tilegen/internal/resultsdir"
	"tilegen/internal/variant"
)

// Verify runs the edge-shape suite (or cfg.Shapes' dimensions) for every selected variant, each
// under its own op, without timing,
// writes the results into cfg.Out and prints one line per variant. It fails when a variant fails a
// shape it accepts.
func Verify(cfg *Config) error {
	_, _, err := verify(cfg)
	return err
}

// verify is Verify that also returns the records it wrote into cfg.Out's results.jsonl (in the
// file's order), and whether it wrote them, so that bench need not read them back.
func verify(cfg *Config) ([]results.Record, bool, error) {
	vs, err := cfg.Filter.Select(cfg.Catalog.Variants())
	if err != nil {
		return nil, false, err
	}
	var items []item
	for i := range vs {
		shapes := EdgeShapes(&vs[i])
		if cfg.Shapes != nil {
			// The dimensions of --shapes, under the variant's own op (and as batches of EdgeBatch
			// for a batched variant, unless the shape names its batch).
			shapes = results.WithOps(cfg.Shapes, []variant.Op{vs[i].Op})
			for j := range shapes {
				shapes[j].Precision = vs[i].Precision
				switch {
				case !vs[i].Batched:
					shapes[j].Batch = 0
				case shapes[j].Batch == 0:
					shapes[j].Batch = EdgeBatch
				}
			}
		}
		it, err := buildPlan(vs[i:i+1], shapes, Strategy{}, Shard{0, 1})
		if err != nil {
			return nil, false, err
		}
		items = append(items, it...)
	}
	if cfg.Shard.N > 1 {
		var part []item
		for i, it := range items {
			if i%cfg.Shard.N == cfg.Shard.I {
				part = append(part, it)
			}
		}
		items = part
	}
	s, err := openSession(cfg)
	if err != nil {
		return nil, false, err
	}
	defer s.close()
	s.index(vs)
	s.prog = noProgress{}
	tasks := s.planVariants(results.KindVerify, items)
	s.start("verify", runnable(items), len(tasks))
	if err := s.runPhases(tasks); err != nil {
		return nil, false, err
	}
	recs := s.records()
	// Edge order (not SortRecords order) decides which failure is "first" for a variant.
	summary, failed := edgeSummary(vs, items, recs)
	if err := resultsdir.WriteResults(cfg.Out, recs, s.runInfo()); err != nil {
		return nil, false, err
	}
	if err := writeRunPlan(cfg.Out, planOf(cfg, results.KindVerify, vs)); err != nil {
		return recs, true, err
	}
	if err := resultsdir.WriteAtomic(outPath(cfg.Out, "edge.txt"), []byte(summary)); err != nil {
		return recs, true, err
	}
	if _, err := io.WriteString(cfg.Stdout, summary); err != nil {
		return recs, true, err
	}
	if failed > 0 {
		return recs, true, fmt.Errorf("%d variant(s) failed verification (see %s)", failed, outPath(cfg.Out, "results.csv"))
	}
	return recs, true, nil
}

// edgeSummary renders one line per variant: what it claims, how many shapes passed, were skipped,
// and its first failure.
func edgeSummary(vs []variant.Variant, items []item, recs []results.Record) (string, int) {
	byID := map[string]results.Record{}
	for _, r := range recs {
		byID[ident(r.Kind, r.Variant, r.Shape)] = r
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "variant\tclaims\tpassed\tskipped\tedge_suite\t")
	failedVariants := 0
	for i := range vs {
		v := &vs[i]
		var passed, skipped, checked int
		verdict := ""
		for _, it := range items {
			if it.V.Name != v.Name {
				continue
			}
			r, ok := byID[ident(results.KindVerify, v.Name, it.Shape)]
			if !ok {
				continue
			}
			checked++
			switch r.Status {
			case results.StatusOK:
				passed++
			case results.StatusSkipped:
				skipped++
			case results.StatusFailed:
				if verdict == "" {
					verdict = fmt.Sprintf("failed at %s: %s", results.ShapeString(r.Shape), r.Reason)
				}
			}
		}
		if checked == 0 {
			continue
		}
		switch {
		case verdict != "":
			failedVariants++
		case passed == 0:
			verdict = "not run (no shape fits)"
		default:
			verdict = "passed"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t\n", v.Name, claims(v.Requires), passed, skipped, verdict)
	}
	tw.Flush()
	return b.String(), failedVariants
}
