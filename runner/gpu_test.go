//go:build gpu

package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBrokenKernelsCostOneMeasurement runs a real sweep over testdata/broken (a correct kernel, a
// race, an illegal address and an endless loop) on the GPU: each broken kernel must fail with its
// own reason, the correct one and cuBLAS must pass, and the sweep must complete. Run it from the
// runner directory with TILEGEN_WORKER naming the worker binary (or with tilegen-worker on PATH).
func TestBrokenKernelsCostOneMeasurement(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	args := []string{"tune", "--generated", "testdata/broken/generated", "--shapes", "512x512x512,100x70x33",
		"--cache", filepath.Join(dir, "cache.jsonl"), "--out", filepath.Join(dir, "out"), "--progress", "plain",
		"--timeout-floor", "5s", "--timeout-cap", "10s", "--reps", "5", "--min-time", "1ms", "--rank-rounds", "0"}
	if w := os.Getenv("TILEGEN_WORKER"); w != "" {
		args = append(args, "--worker", w)
	}
	if err := run(args, &stdout, &stderr); err != nil {
		t.Fatalf("the sweep did not complete: %v\n%s", err, stderr.String())
	}
	t.Logf("stderr:\n%s", stderr.String())
	f, err := os.Open(filepath.Join(dir, "out", "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	want := map[string]struct{ status, reason string }{
		"cublas":       {"ok", ""},
		"fixture_bug0": {"ok", ""},
		"fixture_bug1": {"failed", "tolerance"},
		"fixture_bug2": {"failed", "IllegalAddress"},
		"fixture_bug3": {"failed", "watchdog"},
	}
	seen := map[string]int{}
	for _, r := range rows[1:] {
		v, status, reason := r[col["variant"]], r[col["status"]], r[col["reason"]]
		w, ok := want[v]
		if !ok {
			t.Errorf("unexpected row %v", r)
			continue
		}
		seen[v]++
		if status != w.status || !strings.Contains(reason, w.reason) {
			t.Errorf("%s %s: status %q reason %q, want %q containing %q", v, r[col["shape"]], status, reason, w.status, w.reason)
		}
	}
	for v := range want {
		if seen[v] != 2 {
			t.Errorf("%s: %d rows, want one per shape (2)", v, seen[v])
		}
	}
}
