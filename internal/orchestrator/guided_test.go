package orchestrator

import (
	"testing"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/search"
)

// TestModelStrategy: --strategy model measures exactly its budget per shape through the pool (a
// failed verification counts against it), each measurement verified, records the strategy, the
// budget and the shapes' sources in run.json, and a second run finds every pick in the cache: the
// picks depend only on the plan and on what was measured.
func TestModelStrategy(t *testing.T) {
	dir := t.TempDir()
	count := requestLog(t)
	cfg, _, _ := testConfig(t, dir, "fast_*", "mid", "slow", "aligned_64", "bad_wrong")
	cfg.Strategy = Strategy{Name: search.Model, Budget: search.Budget{Count: 3}, Seed: 1}
	cfg.Rank.Rounds = 0
	cfg.Sources = map[protocol.Shape]string{cfg.Shapes[0]: "test: a square (1 token)"}
	if err := Tune(cfg); err != nil {
		t.Fatal(err)
	}
	recs, err := results.ReadJSONL(cfg.Out + "/results.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, r := range recs {
		if r.Kind != results.KindTune || r.Status == results.StatusSkipped {
			continue
		}
		per[results.ShapeString(r.Shape)]++
		if len(r.Verify) == 0 && r.Status == results.StatusOK {
			t.Errorf("%s on %s: timed without verification", r.Variant, results.ShapeString(r.Shape))
		}
	}
	for _, sh := range cfg.Shapes {
		if n := per[results.ShapeString(sh)]; n != 3 {
			t.Errorf("%s: %d variants measured, want the budget, 3", results.ShapeString(sh), n)
		}
	}
	if n := count("run "); n != 6 {
		t.Errorf("%d variant requests, want 6", n)
	}
	p, err := ReadRunPlan(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	if p.Strategy != search.Model || p.Budget != 3 || p.Sources["256x256x256"] != "test: a square (1 token)" {
		t.Errorf("run.json: strategy %q budget %d sources %v", p.Strategy, p.Budget, p.Sources)
	}
	cfg2, _, _ := testConfig(t, dir, "fast_*", "mid", "slow", "aligned_64", "bad_wrong")
	cfg2.Strategy, cfg2.Rank.Rounds = cfg.Strategy, 0
	if err := Tune(cfg2); err != nil {
		t.Fatal(err)
	}
	if n := count("run "); n != 6 {
		t.Errorf("the second run sent %d more variant requests, want none (all cached)", n-6)
	}
	if p2, _ := ReadRunPlan(cfg2.Out); p2.Plan != p.Plan {
		t.Errorf("same plan, different hashes")
	}
}

// TestModelStrategyRefusesShards: an adaptive search cannot be split by items.
func TestModelStrategyRefusesShards(t *testing.T) {
	vs := testCatalog(t).Variants()
	shapes, _ := results.ParseShapes("256x256x256")
	if _, err := buildPlan(vs, shapes, Strategy{Name: search.Model}, Shard{0, 2}); err == nil {
		t.Error("a sharded model plan was accepted")
	}
}
