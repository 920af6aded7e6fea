package analysis

import (
	"math"
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"tilegen/generated"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestModel(t *testing.T) {
	for _, tc := range []struct {
		family               string
		bm, bn, m, n, k      int
		model                string
		reads, writes, bytes float64
	}{
		// naive: 2·M·N·K reads.
		{"naive", 8, 32, 64, 64, 16, ModelNaive, 2 * 64 * 64 * 16, 64 * 64, 4 * (2*64*64*16 + 64*64)},
		// tiled, exact multiples: M·N·K·(1/BN + 1/BM).
		{"shared", 16, 16, 1024, 1024, 1024, ModelTiled, 1024 * 1024 * 1024 * (1.0/16 + 1.0/16), 1 << 20, 0},
		// tiled with a partial tile: A is read ⌈N/BN⌉ = 2 times, B ⌈M/BM⌉ = 3 times.
		{"coarse", 32, 64, 65, 100, 7, ModelTiled, 65*7*2 + 7*100*3, 6500, 0},
		// coalesced: A per block column, B per output.
		{"coalesced", 8, 8, 16, 16, 8, ModelCoalesced, 16*8*2 + 16*16*8, 256, 0},
		// cuBLAS: compulsory.
		{"", 0, 0, 10, 20, 30, ModelCompulsory, 10*30 + 30*20, 200, 0},
		// tiled family without geometry falls back to compulsory.
		{"shared", 0, 0, 10, 20, 30, ModelCompulsory, 10*30 + 30*20, 200, 0},
	} {
		tr := Model(tc.family, tc.bm, tc.bn, tc.m, tc.n, tc.k)
		if tr.Model != tc.model || !near(tr.Reads, tc.reads) || !near(tr.Writes, tc.writes) {
			t.Errorf("%s %dx%d on %dx%dx%d: got %+v want %s reads %g writes %g", tc.family, tc.bm, tc.bn,
				tc.m, tc.n, tc.k, tr, tc.model, tc.reads, tc.writes)
		}
		if tc.bytes != 0 && !near(tr.Bytes(), tc.bytes) {
			t.Errorf("%s: bytes %g want %g", tc.family, tr.Bytes(), tc.bytes)
		}
	}
}

func TestTiledIntensityGrowsWithTile(t *testing.T) {
	prev := 0.0
	for _, w := range []int{4, 8, 16, 32} {
		i := Intensity(results.Flops(protocol.Shape{M: 2048, N: 2048, K: 2048}), Model("shared", w, w, 2048, 2048, 2048))
		// Square N: intensity = 2N³ / (4·(2N³/W + N²)) = W/(4 + 2W/N) FLOP/byte.
		want := float64(w) / (4 + 2*float64(w)/2048)
		if !near(i, want) {
			t.Errorf("W=%d: intensity %g want %g", w, i, want)
		}
		if i <= prev {
			t.Errorf("W=%d: intensity %g did not grow from %g", w, i, prev)
		}
		prev = i
	}
}

func TestTheoreticalPeaksH100(t *testing.T) {
	// The H100 SXM's hello: 132 SMs, 1980 MHz, HBM3 at 2619 MHz on 5120 bits.
	p := TheoreticalPeaks("9.0", 132, 1980000, 2619000, 5120)
	if math.Abs(p.GFLOPS-66908.16) > 0.01 {
		t.Errorf("GFLOPS %g want 66908.16", p.GFLOPS)
	}
	if math.Abs(p.GBps-3352.32) > 0.01 {
		t.Errorf("GBps %g want 3352.32", p.GBps)
	}
	if q := TheoreticalPeaks("1.0", 132, 1980000, 0, 0); q.GFLOPS != 0 || q.GBps != 0 {
		t.Errorf("unknown device: %+v", q)
	}
}

func TestPlace(t *testing.T) {
	pk := Peaks{GFLOPS: 1000, GBps: 100}
	// naive on 100³: intensity = 2e6 / (4·(2e6+1e4)) ≈ 0.2488 → memory bound, roof ≈ 24.9 GFLOP/s.
	p := Place("naive", 0, 0, 100, 100, 100, 0.1, pk)
	if p.Bound != "memory" || !near(p.GFLOPS, 20) || math.Abs(p.Attainable-24.875) > 1e-3 {
		t.Errorf("naive: %+v", p)
	}
	if math.Abs(p.PctOfRoof-100*20/p.Attainable) > 1e-9 || !near(p.GBps, p.Traffic.Bytes()/1e5) {
		t.Errorf("naive pct/GBps: %+v", p)
	}
	q := Place("shared", 64, 64, 4096, 4096, 4096, 1, pk)
	if q.Bound != "compute" || q.Attainable != 1000 {
		t.Errorf("shared 64: %+v", q)
	}
	if r := Place("naive", 0, 0, 10, 10, 10, 1, Peaks{}); r.Bound != "" || r.Attainable != 0 || r.GFLOPS == 0 {
		t.Errorf("no peaks: %+v", r)
	}
}

func TestWavesOf(t *testing.T) {
	for _, tc := range []struct {
		blocks, perSM, sms int
		waves, fill        float64
		note               string
	}{
		{264, 2, 132, 1, 1, ""},
		{300, 2, 132, 300.0 / 264, 36.0 / 264, "wave quantization: 1.14 waves, last wave 14% full"},
		{400, 2, 132, 400.0 / 264, 136.0 / 264, ""},
		{100, 2, 132, 100.0 / 264, 100.0 / 264, "under one wave: 100 of 264"},
		{0, 2, 132, 0, 0, ""},
		// 20.14 waves: the idle 86 % of one wave in 21 is 4 % of the launch, not flagged.
		{20*264 + 36, 2, 132, (20*264 + 36) / 264.0, 36.0 / 264, ""},
	} {
		w := WavesOf(tc.blocks, tc.perSM, tc.sms)
		if !near(w.Waves, tc.waves) || !near(w.LastFill, tc.fill) || !strings.HasPrefix(w.Note, tc.note) || (tc.note == "" && w.Note != "") {
			t.Errorf("%+v: got %+v", tc, w)
		}
	}
}

func TestParseParams(t *testing.T) {
	p := ParseParams("W=16 G=2 PF=0 junk X=y")
	if len(p) != 3 || p["W"] != 16 || p["G"] != 2 || p["PF"] != 0 {
		t.Errorf("got %v", p)
	}
}

// Every family in the shipped matrix has a traffic model of its own: a family added to
// variants.yaml without one would silently be placed under the compulsory (cuBLAS) model.
func TestEveryFamilyHasAModel(t *testing.T) {
	src, err := os.ReadFile("../../variants.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Families []struct {
			Name string `yaml:"name"`
		} `yaml:"families"`
	}
	if err := yaml.Unmarshal(src, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Families) == 0 {
		t.Fatal("no families in variants.yaml")
	}
	for _, f := range m.Families {
		if got := ModelFor(f.Name); got == ModelCompulsory {
			t.Errorf("family %s has no traffic model (ModelFor gives %s)", f.Name, got)
		}
	}
}

// TestBlocksPerSM: the occupancy count agrees with what the driver reported on the H100 for
// variants of the committed bench (results/bench/nvidia-h100-80gb-hbm3/2026-11-22-exhaustive: attributes.blocks_per_sm).
func TestBlocksPerSM(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		threads, regs, shared int
		want                  int
	}{
		{"coalesced_w16", 256, 32, 1024, 8},
		{"cpasync_128x64x8_w64_t8x8_s3_k1_x0", 128, 149, 19200, 3},
		{"cpasync_64x64x8_w32_t8x4_s4_k1_x1", 128, 109, 17408, 4},
		{"regtile_128x128x16_w64_t8x16_p0_f1_s1_b1", 128, 237, 32768, 2},
		{"regtile_128x128x8_w64_t8x8_p0_f1_s3_b2", 256, 128, 20480, 2},
		{"regtile_128x256x8_w64_t8x16_p0_f1_s4_b1", 256, 222, 40960, 1},
		{"regtile_64x64x16_w32_t4x4_p0_f1_s3_b1", 256, 80, 20480, 3},
		{"slicedk_64x64x16_w32_t8x4_s4_x0", 256, 125, 34816, 2},
		{"splitk_128x64x32_w64_t8x8_p0_f1_s2_b1_k2_r1", 128, 167, 81920, 2},
		{"cpasync_32x64x8_w16_t4x4_s3_k4_x1", 128, 83, 18176, 5},
		{"too much shared memory", 128, 32, 300 * 1024, 0},
		{"too many threads", 4096, 32, 0, 0},
	} {
		if got := BlocksPerSM(tc.threads, tc.regs, tc.shared, Hopper); got != tc.want {
			t.Errorf("%s: %d blocks per SM, want %d", tc.name, got, tc.want)
		}
	}
}

// TestBlocksPerSMMatchesDriver: for every variant of the committed H100 bench, the occupancy count
// from its threads, shared memory and the registers the driver gave it (its JIT may differ from
// ptxas by a few) is what the driver reported (cuOccupancyMaxActiveBlocksPerMultiprocessor).
func TestBlocksPerSMMatchesDriver(t *testing.T) {
	recs, err := results.ReadJSONL("../../results/bench/nvidia-h100-80gb-hbm3/2026-11-22-exhaustive/tune/results.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*variant.Variant{}
	vs := generated.Variants()
	for i := range vs {
		byName[vs[i].Name] = &vs[i]
	}
	checked := 0
	seen := map[string]bool{}
	for _, r := range recs {
		v := byName[r.Variant]
		if r.Attributes == nil || v == nil || seen[r.Variant] || r.Resources != v.Resources {
			continue
		}
		seen[r.Variant] = true
		checked++
		a := r.Attributes
		got := BlocksPerSM(v.Threads(), a.Registers, a.SharedStatic+v.DynamicShared, Hopper)
		if got != a.BlocksPerSM {
			t.Errorf("%s: %d blocks per SM, the driver said %d (threads %d, registers %d, shared %d)", r.Variant, got,
				a.BlocksPerSM, v.Threads(), a.Registers, a.SharedStatic+v.DynamicShared)
		}
	}
	if checked < 100 {
		t.Errorf("only %d variants checked", checked)
	}
}
