package study

import (
	"strings"
	"testing"

	"tilegen/generated"
)

// TestPlansUseCatalogVariants checks that every study names only variants the generated catalog
// has and that each accepts its shapes (a plan that skips would leave holes in the tables).
func TestPlansUseCatalogVariants(t *testing.T) {
	for _, st := range All() {
		ps := st.Pairs()
		if len(ps) == 0 {
			t.Errorf("%s: empty plan", st.Name)
		}
		for _, p := range ps {
			v, ok := generated.Lookup(p.Variant)
			if !ok {
				t.Errorf("%s: variant %q is not in the catalog", st.Name, p.Variant)
				continue
			}
			if err := v.Supports(p.Shape.M, p.Shape.N, p.Shape.K, p.Shape.K, p.Shape.N, p.Shape.N); err != nil {
				t.Errorf("%s: %s does not accept %+v: %v", st.Name, p.Variant, p.Shape, err)
			}
		}
	}
}

func TestCompareCoversSeedGrid(t *testing.T) {
	st, err := Lookup("compare")
	if err != nil {
		t.Fatal(err)
	}
	// 4 N × (4 W × 3 kernels − the missing coalesced W=4).
	if got := len(st.Pairs()); got != 4*(4*3-1) {
		t.Errorf("compare plans %d pairs, want 44", got)
	}
	for _, p := range st.Pairs() {
		if p.Shape.M != p.Shape.N || p.Shape.K > 32 {
			t.Errorf("compare shape %+v is not N×N×W", p.Shape)
		}
	}
}

func TestLookup(t *testing.T) {
	if _, err := Lookup("cpu-gpu"); err != nil {
		t.Error(err)
	}
	if _, err := Lookup("nope"); err == nil || !strings.Contains(err.Error(), "granularity") {
		t.Errorf("unknown study: %v", err)
	}
}

func TestCPUBreakdownShrinksRuns(t *testing.T) {
	opt := Options{Runs: 50, CPUBudgetMS: 1e-6}
	calls := 0
	bd := cpuBreakdown("x", 8, opt, func(a, b, c []float32) { calls++ })
	if bd.Phase.Runs != 3 || calls != 3 || len(bd.Phase.AllocMS) != 3 || bd.Note == "" {
		t.Errorf("runs %d calls %d note %q", bd.Phase.Runs, calls, bd.Note)
	}
	opt.CPUBudgetMS = 0
	if bd := cpuBreakdown("x", 8, opt, func(a, b, c []float32) {}); bd.Phase.Runs != 50 || bd.Note != "" {
		t.Errorf("no budget: runs %d note %q", bd.Phase.Runs, bd.Note)
	}
}
