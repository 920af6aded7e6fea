//go:build gpu

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestDryRunPredictsARealRun plans a small sweep with --dry-run, runs it on the GPU, and plans it
// again: the first plan's counts are what the run measured, its estimate is within a factor of
// two of the run's wall time, and the second plan finds everything cached. Run it from the runner
// directory with TILEGEN_WORKER naming the worker binary (or with tilegen-worker on PATH).
func TestDryRunPredictsARealRun(t *testing.T) {
	dir := t.TempDir()
	args := []string{"tune", "--family", "micro1d,coarse", "--shapes", "1024x1024x1024,535x792x414,4096x4096x4096",
		"--devices", "0", "--cache", filepath.Join(dir, "cache.jsonl"), "--out", filepath.Join(dir, "out"), "--progress", "none"}
	if w := os.Getenv("TILEGEN_WORKER"); w != "" {
		args = append(args, "--worker", w)
	}
	plan := func() (variants, cublas int, est time.Duration) {
		t.Helper()
		var out bytes.Buffer
		if err := run(append(args, "--dry-run"), &out, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		t.Logf("dry run:\n%s", out.String())
		m := regexp.MustCompile(`to measure: (\d+) variant runs and (\d+) cuBLAS runs`).FindStringSubmatch(out.String())
		e := regexp.MustCompile(`estimated time: (\S+) `).FindStringSubmatch(out.String())
		if m == nil || e == nil {
			t.Fatalf("no counts or estimate in the dry run")
		}
		variants, _ = strconv.Atoi(m[1])
		cublas, _ = strconv.Atoi(m[2])
		est, err := time.ParseDuration(e[1])
		if err != nil {
			t.Fatalf("estimate %q: %v", e[1], err)
		}
		return variants, cublas, est
	}
	v, c, est := plan()
	var stderr bytes.Buffer
	if err := run(args, &bytes.Buffer{}, &stderr); err != nil {
		t.Fatalf("tune: %v\n%s", err, stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "out", "cost.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cost struct {
		WallS    float64 `json:"wall_s"`
		Measured int     `json:"measured"`
	}
	if err := json.Unmarshal(b, &cost); err != nil {
		t.Fatal(err)
	}
	if cost.Measured != v+c {
		t.Errorf("the dry run planned %d+%d measurements, the run made %d", v, c, cost.Measured)
	}
	if r := est.Seconds() / cost.WallS; r < 0.5 || r > 2 {
		t.Errorf("estimated %s, the run took %.1fs (ratio %.2f)", est, cost.WallS, r)
	} else {
		t.Logf("estimated %s, the run took %.1fs (ratio %.2f)", est, cost.WallS, r)
	}
	if v, c, _ := plan(); v != 0 || c != 0 {
		t.Errorf("after the run the dry run plans %d variant and %d cuBLAS measurements, want none", v, c)
	}
}
