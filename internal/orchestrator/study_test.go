package orchestrator

import (
	"strings"
	"testing"
	"time"

	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
	"tilegen/internal/workerproc"
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
	names := func(rs []results.Record) map[string]bool {
		m := map[string]bool{}
		for _, r := range rs {
			m[r.Variant+" "+results.ShapeString(r.Shape)] = true
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
	if err != nil || len(rs) != 1 || rs[0].Status != results.StatusOK {
		t.Fatalf("cached re-measure: %+v %v", rs, err)
	}
	if _, err := again.Measure([]Pair{{"no_such_variant", a}}, false); err == nil {
		t.Fatal("an unknown variant was measured")
	}
}

func TestExportedWorker(t *testing.T) {
	w, err := workerproc.StartWorker(fakeWorker, nil, 0, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.Device() == nil || w.Device().Name == "" {
		t.Fatalf("no device from hello: %+v", w.Device())
	}
	ts := protocol.TimingSettings{Warmup: 1, Reps: 5, MaxReps: 5}
	resp, err := w.Call(protocol.Request{Op: protocol.OpCublas, Shape: protocol.Shape{M: 8, N: 8, K: 8}, Timing: &ts}, 10*time.Second)
	if err != nil || resp.Timing == nil {
		t.Fatalf("cublas call: %+v %v", resp, err)
	}
	var fatal *variant.Variant
	for _, v := range testCatalog(t).Variants() {
		if v.Name == "bad_fatal" {
			fatal = &v
		}
	}
	req := protocol.Request{Op: protocol.OpRun, Kernel: &protocol.Kernel{Variant: *fatal}, Shape: protocol.Shape{M: 8, N: 8, K: 8}}
	if _, err := w.Call(req, 10*time.Second); err == nil || !strings.Contains(err.Error(), "IllegalAddress") {
		t.Fatalf("a fatal error response: %v", err)
	}
	if _, err := w.Call(protocol.Request{Op: protocol.OpCublas, Shape: protocol.Shape{M: 8, N: 8, K: 8}, Timing: &ts}, 10*time.Second); err == nil {
		t.Fatal("a call to the exited worker succeeded")
	}
	if _, err := workerproc.StartWorker(fakeWorker, nil, 5, 10*time.Second); err == nil {
		t.Fatal("a worker on a missing device started")
	}
}
