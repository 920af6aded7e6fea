//go:build !gpu

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSearchEval: runner search-eval replays the committed seed-family tune and writes eval.json
// and eval.md; every shape has its candidates, a limit of a fifth and the measurements each method
// needed.
func TestSearchEval(t *testing.T) {
	out := t.TempDir()
	var stdout bytes.Buffer
	err := run([]string{"search-eval", "--results", filepath.Join("..", "results", "h100-seeds", "tune"), "--seeds", "3",
		"--model-seeds", "1", "--out", out}, &stdout, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "eval.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sets []searchEvalSet
	if err := json.Unmarshal(b, &sets); err != nil {
		t.Fatal(err)
	}
	if len(sets) != 1 || len(sets[0].Eval.Shapes) != 9 || sets[0].GPU != "NVIDIA H100 80GB HBM3" {
		t.Fatalf("eval.json: %s", b)
	}
	for _, s := range sets[0].Eval.Shapes {
		if s.Candidates != 40 || s.Limit != 8 || s.Model < 1 || s.Random < 1 || s.Best == "" {
			t.Errorf("%+v", s)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, "eval.md"))
	if !strings.Contains(stdout.String(), "| 4096x4096x4096 | 40 |") || string(md) != stdout.String() {
		t.Errorf("stdout and eval.md differ or lack the table:\n%s", stdout.String())
	}
}
