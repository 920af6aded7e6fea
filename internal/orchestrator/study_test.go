package orchestrator

import (
	"testing"

	"tilegen/internal/protocol"
)

// One session serves several studies: each Measure returns its own pairs (and cuBLAS on its own
// shapes) only, and a second session reuses the cache.
func TestSessionMeasureReturnsItsOwnRecords(t *testing.T) {
	dir := t.TempDir()
	cfg, _, _ := testConfig(t, dir)
	s, err := OpenSession(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := protocol.Shape{M: 256, N: 256, K: 256}
	b := protocol.Shape{M: 100, N: 70, K: 33}
	first, err := s.Measure([]Pair{{"fast_a", a}, {"mid", a}}, true)
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.Measure([]Pair{{"slow", b}}, true)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	names := func(rs []Record) map[string]bool {
		m := map[string]bool{}
		for _, r := range rs {
			m[r.Variant+" "+ShapeString(r.Shape)] = true
		}
		return m
	}
	if got := names(first); len(got) != 3 || !got["fast_a 256x256x256"] || !got["mid 256x256x256"] || !got["cublas 256x256x256"] {
		t.Errorf("first study: %v", got)
	}
	if got := names(second); len(got) != 2 || !got["slow 100x70x33"] || !got["cublas 100x70x33"] {
		t.Errorf("second study got another study's records: %v", got)
	}
	again, err := OpenSession(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	rs, err := again.Measure([]Pair{{"mid", a}}, false)
	if err != nil || len(rs) != 1 || rs[0].Status != StatusOK {
		t.Fatalf("cached re-measure: %+v %v", rs, err)
	}
	if _, err := again.Measure([]Pair{{"no_such_variant", a}}, false); err == nil {
		t.Fatal("an unknown variant was measured")
	}
}
