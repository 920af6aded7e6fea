package orchestrator

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
)

// TestEstimateMatchesCommittedRuns: the dry run's time model, applied to what each committed H100
// sweep measured with the settings it ran under, lands within a third of the wall time its
// cost.json records.
func TestEstimateMatchesCommittedRuns(t *testing.T) {
	bench := protocol.TimingSettings{Warmup: 3, Reps: 10, MinTimeMS: 30, MaxReps: 1000}
	deflt := protocol.TimingSettings{Warmup: 3, Reps: 20, MinTimeMS: 100, MaxReps: 1000}
	root := "../../results/bench/nvidia-h100-80gb-hbm3"
	for _, tc := range []struct {
		dir         string
		timing      protocol.TimingSettings
		sharedAbove float64
	}{
		{"2026-11-22-exhaustive/tune", bench, 1},      // runner bench --reps 10 --min-time 30ms --shared-inputs-above 1
		{"tuning-cost/t4096", deflt, 1e10},            // runner tune --shapes 4096x4096x4096
		{"probes/awkward-tune-xb", bench, 1},          // see its README.md
		{"probes/awkward-tune-slicedk", bench, 1},     // see its README.md
		{"probes/awkward-tune-edge-copies", bench, 1}, // see its README.md
	} {
		dir := filepath.Join(root, tc.dir)
		recs, err := results.ReadJSONL(filepath.Join(dir, "results.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "cost.json"))
		if err != nil {
			t.Fatal(err)
		}
		var cost Cost
		if err := json.Unmarshal(b, &cost); err != nil {
			t.Fatal(err)
		}
		cfg := &Config{Timing: tc.timing, SharedInputsAbove: tc.sharedAbove,
			Verify: protocol.VerifySettings{SubMatrix: true},
			Rank:   RankSettings{Rounds: 10, Top: 3, Timing: protocol.TimingSettings{Warmup: 2, Reps: 10, MaxReps: 10}}}
		perShape := map[protocol.Shape]int{}
		modules := map[string]bool{}
		for _, r := range recs {
			if r.Status == results.StatusSkipped || (r.Kind != results.KindTune && r.Kind != results.KindCublas) {
				continue
			}
			perShape[r.Shape]++
			if r.Kind == results.KindTune {
				modules[r.Variant] = true
			}
		}
		// results.jsonl also holds the records the run found in its cache: count only the share
		// it measured (cost.json's measured), spread evenly over the shapes.
		n := sum(perShape)
		if n < cost.Measured {
			t.Fatalf("%s: %d records, cost.json says %d measured", tc.dir, n, cost.Measured)
		}
		for s, c := range perShape {
			perShape[s] = (c*cost.Measured + n/2) / n
		}
		got := estimatePlan(cfg, perShape, len(modules), 1).Total
		want := time.Duration(cost.WallS * float64(time.Second))
		if ratio := got.Seconds() / want.Seconds(); ratio < 0.67 || ratio > 1.5 {
			t.Errorf("%s: estimated %s, the run took %s (ratio %.2f)", tc.dir, got.Round(time.Second), want.Round(time.Second), ratio)
		} else {
			t.Logf("%s: estimated %s, the run took %s (ratio %.2f)", tc.dir, got.Round(time.Second), want.Round(time.Second), ratio)
		}
	}
}

func sum(m map[protocol.Shape]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
