package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"tilegen/internal/ooc"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
)

// writeTunes writes a results dir holding one tune record per (variant, shape, median ms).
func writeTunes(t *testing.T, rows []struct {
	variant string
	shape   protocol.Shape
	ms      float64
}) string {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	for _, r := range rows {
		rec := results.Record{Kind: results.KindTune, Variant: r.variant, Shape: r.shape, Status: results.StatusOK,
			Timing: &protocol.TimingResult{MedianMS: r.ms}}
		line, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "results.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "device.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestBestForBlocksPicksByBlockShape(t *testing.T) {
	big := protocol.Shape{M: 8192, N: 8192, K: 8192}
	small := protocol.Shape{M: 1024, N: 1024, K: 1024}
	dir := writeTunes(t, []struct {
		variant string
		shape   protocol.Shape
		ms      float64
	}{
		{"micro1d_t64_r16", small, 0.05}, // fastest at 1024³, which is not the block's shape
		{"regtile_128x128x16_w32_t8x16_p0_f1_s2_b1", small, 0.09},
		{"no_such_variant", big, 20}, // fastest at 8192³ but not in the catalog: skipped with a reason
		{"regtile_128x128x16_w32_t8x16_p0_f1_s3_b1", big, 21},
		{"regtile_128x128x16_w32_t8x16_p0_f1_s2_b1", big, 22},
		{"micro1d_t64_r16", big, 45},
	})
	// 90000³ in 77 GiB: blocks of about 45000² and K slices of 45000, nearest to 8192³.
	s := protocol.Shape{M: 90000, N: 90000, K: 90000}
	k, why, err := bestForBlocks("", dir, s, ooc.Options{Budget: 77 << 30})
	if err != nil {
		t.Fatal(err)
	}
	if k.Variant.Name != "regtile_128x128x16_w32_t8x16_p0_f1_s3_b1" {
		t.Errorf("picked %s (%s), want the fastest catalog variant at 8192³", k.Variant.Name, why)
	}
	if !strings.Contains(why, "rank 2") || !strings.Contains(why, "8192x8192x8192") || !strings.Contains(why, "blocks of 45056x45056x") {
		t.Errorf("why = %q, want the rank, the tuned shape and the block", why)
	}
	if len(k.PTX) == 0 {
		t.Error("kernel without PTX")
	}
	// The whole-problem rule would have picked by the same nearest shape; a block near 1024³ picks
	// the 1024³ winner.
	k, _, err = bestForBlocks("", dir, protocol.Shape{M: 2000, N: 2000, K: 2000}, ooc.Options{Budget: 24 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if k.Variant.Name != "micro1d_t64_r16" {
		t.Errorf("small blocks picked %s, want micro1d_t64_r16", k.Variant.Name)
	}
}

func TestBestForBlocksErrors(t *testing.T) {
	dir := writeTunes(t, []struct {
		variant string
		shape   protocol.Shape
		ms      float64
	}{{"no_such_variant", protocol.Shape{M: 64, N: 64, K: 64}, 1}})
	_, _, err := bestForBlocks("", dir, protocol.Shape{M: 512, N: 512, K: 512}, ooc.Options{Budget: 1 << 30})
	if err == nil || !strings.Contains(err.Error(), "no_such_variant") {
		t.Errorf("err = %v, want every rejected variant named", err)
	}
	_, _, err = bestForBlocks("", t.TempDir(), protocol.Shape{M: 512, N: 512, K: 512}, ooc.Options{Budget: 1 << 30})
	if err == nil || !strings.Contains(err.Error(), "--variant best") {
		t.Errorf("err = %v, want a --variant best error for a dir without results", err)
	}
}

func TestSettleDefaultVariant(t *testing.T) {
	parse := func(args ...string) *beyondFlags {
		var b beyondFlags
		fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
		fs.AddFlagSet(b.flags(""))
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		b.settle(fs)
		return &b
	}
	// The default --results does not exist in the test's directory: the seed variant, said so.
	b := parse()
	if b.variant != seedVariant || !strings.Contains(b.why("named"), "no tune timings") {
		t.Errorf("default without tunes: variant %q, why %q", b.variant, b.why("named"))
	}
	// Given on the command line, best stays best (and fails later with a clear error).
	if b := parse("--variant", "best"); b.variant != "best" || b.why("x") != "x" {
		t.Errorf("explicit best: variant %q, why %q", b.variant, b.why("x"))
	}
	// A results dir with timings keeps the default best.
	dir := writeTunes(t, []struct {
		variant string
		shape   protocol.Shape
		ms      float64
	}{{"micro1d_t64_r16", protocol.Shape{M: 64, N: 64, K: 64}, 1}})
	var bf beyondFlags
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.AddFlagSet(bf.flags(""))
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	bf.results = dir
	bf.settle(fs)
	if bf.variant != "best" {
		t.Errorf("default with tunes: variant %q, want best", bf.variant)
	}
}
