package search

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"tilegen/generated"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
)

func TestParseBudget(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Budget
		for_ int // For(364)
		str  string
	}{
		{"40", Budget{Count: 40}, 40, "40"},
		{"0.2", Budget{Fraction: 0.2}, 73, "20%"},
		{"20%", Budget{Fraction: 0.2}, 73, "20%"},
		{" 5 % ", Budget{Fraction: 0.05}, 19, "5%"},
		{"1", Budget{Count: 1}, 1, "1"},
		{"1000", Budget{Count: 1000}, 364, "1000"},
		{"1.0", Budget{Fraction: 1}, 364, "100%"},
	} {
		b, err := ParseBudget(tc.in)
		if err != nil || b != tc.want {
			t.Errorf("ParseBudget(%q) = %+v, %v; want %+v", tc.in, b, err, tc.want)
			continue
		}
		if n := b.For(364); n != tc.for_ {
			t.Errorf("%q: For(364) = %d, want %d", tc.in, n, tc.for_)
		}
		if s := b.String(); s != tc.str {
			t.Errorf("%q: String() = %q, want %q", tc.in, s, tc.str)
		}
	}
	for _, bad := range []string{"", "0", "-3", "1.5", "0%", "101%", "x", "2e", "0.0"} {
		if _, err := ParseBudget(bad); err == nil {
			t.Errorf("ParseBudget(%q) accepted", bad)
		}
	}
	if n := (Budget{Fraction: 0.001}).For(10); n != 1 {
		t.Errorf("a tiny fraction of 10 = %d, want at least 1", n)
	}
	if n := (Budget{}).For(7); n != 7 {
		t.Errorf("the zero budget of 7 = %d, want all", n)
	}
}

// TestRandomPicks: the random method's picks are a seeded sample that depends on the shape and
// seed only, the same set the replayed random search measures first.
func TestRandomPicks(t *testing.T) {
	sh := protocol.Shape{M: 256, N: 256, K: 256}
	a, b := RandomPicks(7, sh, 50, 10), RandomPicks(7, sh, 50, 10)
	c := RandomPicks(8, sh, 50, 10)
	if len(a) != 10 || !sort.IntsAreSorted(a) {
		t.Fatalf("picks %v: want 10, ascending", a)
	}
	if !equal(a, b) || equal(a, c) {
		t.Errorf("seed 7 twice: %v %v; seed 8: %v", a, b, c)
	}
	first := append([]int(nil), randomOrder(7, sh, 50)[:10]...)
	sort.Ints(first)
	if !equal(a, first) {
		t.Errorf("picks %v are not the permutation's first ten %v", a, first)
	}
	if all := RandomPicks(7, sh, 5, 10); len(all) != 5 {
		t.Errorf("a budget above the candidates picked %v", all)
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func catalog(t *testing.T) map[string]*variant.Variant {
	t.Helper()
	vs := generated.Variants()
	out := map[string]*variant.Variant{}
	for i := range vs {
		out[vs[i].Name] = &vs[i]
	}
	return out
}

// TestPrior: the prior's structure. A bigger thread tile is faster on a large square (more FMAs
// per load); splitting K helps a shape with few output tiles and only costs on one with many; a
// variant of which no block fits an SM cannot run; the memory roof bounds a shallow product.
func TestPrior(t *testing.T) {
	c := catalog(t)
	big := protocol.Shape{M: 4096, N: 4096, K: 4096}
	flag := Prior(c["regtile_128x256x16_w32_t8x16_p0_f1_s4_b1"], big, H100)
	small := Prior(c["regtile_64x64x16_w32_t4x4_p0_f1_s3_b1"], big, H100)
	if !(flag.MS < small.MS) {
		t.Errorf("4096³: 8x16 thread tile %.3f ms, 4x4 %.3f ms: want the bigger tile faster", flag.MS, small.MS)
	}
	if flag.Blocks != 32*16 || flag.BlocksPerSM != 1 || flag.Waste != 0 {
		t.Errorf("4096³ on 128x256 tiles: %+v", flag)
	}
	// 4096³ at 52 TFLOP/s (cuBLAS) is 2.64 ms: the prior must be of that order.
	if flag.MS < 1.5 || flag.MS > 4 {
		t.Errorf("4096³: prior %.3f ms, want about 2.6", flag.MS)
	}
	few := protocol.Shape{M: 1024, N: 1024, K: 1024}
	split := Prior(c["splitk_128x128x16_w64_t8x8_p0_f1_s2_b1_k2_r1"], few, H100)
	whole := Prior(c["regtile_128x128x16_w64_t8x8_p0_f1_s3_b1"], few, H100)
	if !(split.MS < whole.MS) {
		t.Errorf("1024³ (64 tiles on 132 SMs): split-K %.4f ms, unsplit %.4f ms: want split-K faster", split.MS, whole.MS)
	}
	split4k := Prior(c["splitk_128x128x16_w64_t8x8_p0_f1_s2_b1_k2_r1"], big, H100)
	whole4k := Prior(c["regtile_128x128x16_w64_t8x8_p0_f1_s3_b1"], big, H100)
	if !(split4k.MS > whole4k.MS) {
		t.Errorf("4096³: split-K %.3f ms, unsplit %.3f ms: want split-K slower", split4k.MS, whole4k.MS)
	}
	fat := *c["regtile_128x256x16_w32_t8x16_p0_f1_s4_b1"]
	fat.DynamicShared = 300 * 1024
	if e := Prior(&fat, big, H100); !math.IsInf(e.MS, 1) {
		t.Errorf("a block over the SM's shared memory: prior %v, want +Inf", e.MS)
	}
	naive := Prior(c["naive_16x16"], big, H100)
	if naive.MemoryMS <= naive.ComputeMS || naive.MS < 20*flag.MS {
		t.Errorf("4096³ naive: memory %.1f ms, compute %.1f ms: want memory-bound and far slower than 128x256 tiles",
			naive.MemoryMS, naive.ComputeMS)
	}
}

// TestPriorMathThreads: a warp-specialized block's producer threads do no arithmetic, so the prior
// counts its outputs per math thread: wgmma_ws's 128-row tile on two consumer warpgroups is rated
// as the 256-thread wgmma_tf32 block of the same tile, not as a 384-thread one with a third fewer
// outputs per thread.
func TestPriorMathThreads(t *testing.T) {
	c := catalog(t)
	big := protocol.Shape{M: 4096, N: 4096, K: 4096, Precision: variant.Precision3xTF32}
	ws := c["wgws_128_wg2_k16_s4_l1_f2_3xtf32"]
	if ws == nil || ws.MathThreads != 256 || ws.Threads() != 384 {
		t.Fatalf("wgws_128_wg2_k16_s4_l1_f2_3xtf32: %+v, want 384 threads of which 256 compute", ws)
	}
	all := *ws
	all.MathThreads = 0
	with, without := Prior(ws, big, H100), Prior(&all, big, H100)
	if !(with.ComputeMS < without.ComputeMS) || with.BlocksPerSM != without.BlocksPerSM {
		t.Errorf("math threads %.3f ms (%d blocks/SM), all threads %.3f ms (%d): want the math threads' estimate faster, same occupancy",
			with.ComputeMS, with.BlocksPerSM, without.ComputeMS, without.BlocksPerSM)
	}
}

// synthetic is an oracle whose times the prior gets wrong by a hidden factor per family and per
// parameter value (log-normal, spread sigma) plus 1 % noise: only a search that learns from what
// it measured finds the winner early.
func synthetic(t *testing.T, shapes []protocol.Shape, sigma float64, seed uint64) (Oracle, []variant.Variant) {
	t.Helper()
	// The variants that take these shapes (NN, one product, no epilogue, FP32): the others never
	// compete on them, so their factors would only shift the draws of those that do.
	var vs []variant.Variant
	for _, v := range generated.Variants() {
		if v.Op == variant.OpNN && !v.Batched && v.Epilogue == variant.EpiNone && v.Precision == variant.PrecisionFP32 {
			vs = append(vs, v)
		}
	}
	// Each factor is drawn from its own key and the seed, not from one stream in the order the keys
	// come up: a variant added to the catalog draws its own factors and moves no other's.
	f := func(key string) float64 {
		h := fnv.New64a()
		h.Write([]byte(key))
		return rand.New(rand.NewPCG(seed, h.Sum64())).NormFloat64()
	}
	o := Oracle{Results: map[protocol.Shape]map[string]Outcome{}}
	for _, sh := range shapes {
		o.Shapes = append(o.Shapes, sh)
		m := map[string]Outcome{}
		for i := range vs {
			v := &vs[i]
			lg := math.Log(Prior(v, sh, H100).MS) + sigma*f("family "+v.Family) + 0.01*f(fmt.Sprintf("%dx%dx%d %s", sh.M, sh.N, sh.K, v.Name))
			for _, p := range v.Params {
				lg += sigma * f(v.Family+p.Name+string(rune('0'+p.Value%10))) / 2
			}
			m[v.Name] = Outcome{MS: math.Exp(lg), OK: true}
		}
		o.Results[sh] = m
	}
	return o, vs
}

// TestModelLearns: on oracles the prior misjudges by hidden family and parameter factors, the
// model method reaches the winner in far fewer measurements than random, and than measuring in the
// prior's order without learning would: the refits carry what it measured. Summed over four
// oracles (each draws its own factors): on one alone the prior's order is sometimes lucky (its
// first few picks hold the winner) and sometimes the model is.
func TestModelLearns(t *testing.T) {
	shapes := []protocol.Shape{{M: 2048, N: 2048, K: 2048}, {M: 1000, N: 1000, K: 1000}, {M: 535, N: 792, K: 414},
		{M: 4096, N: 4096, K: 64}}
	stop := func(int) int { return 0 } // stop a shape once its winner is found
	var modelTotal, priorTotal, randomTotal float64
	for oracle := uint64(1); oracle <= 4; oracle++ {
		o, vs := synthetic(t, shapes, 0.4, oracle)
		model, _, err := Replay(o, vs, ReplayConfig{Method: Model, Device: H100, Until: stop})
		if err != nil {
			t.Fatal(err)
		}
		var m, p, r float64
		for i, rep := range model {
			m += float64(rep.Needed)
			// The prior's order without learning: the winner's rank among the priors, plus one.
			sh := shapes[i]
			type kv struct {
				name  string
				prior float64
			}
			var ks []kv
			for j := range vs {
				ks = append(ks, kv{vs[j].Name, Prior(&vs[j], sh, H100).MS})
			}
			sort.SliceStable(ks, func(a, b int) bool { return ks[a].prior < ks[b].prior })
			for j, k := range ks {
				if o.Results[sh][k.name].MS <= rep.BestMS*1.01 {
					p += float64(j + 1)
					break
				}
			}
		}
		for seed := uint64(1); seed <= 11; seed++ {
			rr, _, err := Replay(o, vs, ReplayConfig{Method: Random, Seed: seed, Until: stop})
			if err != nil {
				t.Fatal(err)
			}
			for _, rep := range rr {
				r += float64(rep.Needed) / 11
			}
		}
		t.Logf("oracle %d: measurements to the winner over %d shapes: model %.0f, prior order %.0f, random %.0f", oracle,
			len(shapes), m, p, r)
		modelTotal, priorTotal, randomTotal = modelTotal+m, priorTotal+p, randomTotal+r
	}
	t.Logf("four oracles: model %.0f, prior order %.0f, random %.0f", modelTotal, priorTotal, randomTotal)
	if modelTotal > randomTotal/2 || modelTotal > 0.6*priorTotal {
		t.Errorf("model needed %.0f measurements: want at most half of random's %.0f and 60 %% of the prior order's %.0f",
			modelTotal, randomTotal, priorTotal)
	}
}

// TestBudgetAndFailures: the model method hands out exactly the budget per shape, failures count
// against it, every pick is a candidate of its shape and none is handed out twice.
func TestBudgetAndFailures(t *testing.T) {
	c := catalog(t)
	var cands []*variant.Variant
	for _, v := range c {
		cands = append(cands, v)
	}
	shapes := []protocol.Shape{{M: 1024, N: 1024, K: 1024}, {M: 127, N: 4097, K: 513}}
	s, err := New(Config{Method: Model, Budget: Budget{Count: 12}, Device: H100, Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, sh := range shapes {
		if err := s.Add(sh, cands); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	per := map[protocol.Shape]int{}
	rounds := 0
	for {
		picks := s.Next()
		if len(picks) == 0 {
			break
		}
		rounds++
		for i, p := range picks {
			key := p.Variant.Name + results.ShapeString(p.Shape)
			if seen[key] {
				t.Fatalf("%s handed out twice", key)
			}
			seen[key] = true
			per[p.Shape]++
			// Every third fails: it counts, and teaches nothing.
			if err := s.Observe(p.Shape, p.Variant.Name, Prior(p.Variant, p.Shape, H100).MS, i%3 != 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, sh := range shapes {
		if per[sh] != 12 {
			t.Errorf("%s: %d measurements, want 12", results.ShapeString(sh), per[sh])
		}
	}
	if rounds != 6 {
		t.Errorf("%d rounds of 2 picks per shape, want 6", rounds)
	}
	if err := s.Add(protocol.Shape{M: 1, N: 1, K: 1}, cands); err == nil {
		t.Error("Add after Next accepted")
	}
	if err := s.Observe(protocol.Shape{M: 9, N: 9, K: 9}, "x", 1, true); err == nil {
		t.Error("an unknown shape was accepted")
	}
	if err := s.Observe(shapes[0], "no_such_variant", 1, true); err == nil {
		t.Error("an unknown variant was accepted")
	}
	if _, err := New(Config{Method: "greedy"}); err == nil {
		t.Error("method greedy accepted")
	}
}

// TestReplayCommittedBench: on the committed exhaustive H100 bench tune, the model method (every
// shape in one run, seed 1) reaches a variant within 1 % of each shape's winner within a fifth of
// its candidates — the result results/search/ records.
func TestReplayCommittedBench(t *testing.T) {
	if testing.Short() {
		t.Skip("replays 2858 measurements")
	}
	recs, info, err := results.ReadDir("../../results/bench/nvidia-h100-80gb-hbm3/2026-11-22-exhaustive/tune")
	if err != nil {
		t.Fatal(err)
	}
	rr, unknown, err := Replay(OracleOf(recs), generated.Variants(), ReplayConfig{Method: Model, Seed: 1,
		Device: DeviceOf(info.Devices[0]), Until: func(n int) int { return evalLimit(0.2, n) }})
	if err != nil {
		t.Fatal(err)
	}
	if unknown != 0 || len(rr) != 9 {
		t.Fatalf("%d shapes, %d unknown variants", len(rr), unknown)
	}
	for _, r := range rr {
		if lim := evalLimit(0.2, r.Candidates); r.Needed > lim {
			t.Errorf("%s: %d measurements to within 1 %% of %s, over a fifth of %d (%d)", results.ShapeString(r.Shape),
				r.Needed, r.Best, r.Candidates, lim)
		}
	}
}
