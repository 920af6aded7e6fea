//go:build !gpu

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runner merge refuses an incomplete set of shards unless --allow-partial, which merges what is
// there and says what is missing.
func TestMergeAllowPartialFlag(t *testing.T) {
	dir := t.TempDir()
	s0 := filepath.Join(dir, "s0")
	if err := run([]string{"tune", "--generated", catalog, "--worker", workerBin, "--shapes", "256x256x256",
		"--variants", "fast_*,mid", "--progress", "none", "--rank-rounds", "0", "--shard", "0/2",
		"--cache", filepath.Join(dir, "cache.jsonl"), "--out", s0}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "m")
	err := run([]string{"merge", s0, "--out", out}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "shard(s) 1/2 missing") {
		t.Fatalf("incomplete merge: %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("refused merge wrote %s", out)
	}
	var stderr bytes.Buffer
	if err := run([]string{"merge", "--allow-partial", s0, "--out", out}, &bytes.Buffer{}, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "partial: shard(s) 1/2 missing") {
		t.Errorf("stderr: %s", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, "results.jsonl")); err != nil {
		t.Error(err)
	}
}
