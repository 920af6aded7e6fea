package orchestrator

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"tilegen/internal/cache"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/search"
	"tilegen/internal/testutil"
	"tilegen/internal/variant"
)

// fakeWorker is the test-double worker binary (internal/workerproc/testdata/fakeworker), built once
// for the package's tests.
var fakeWorker string

func TestMain(m *testing.M) { testutil.MainWithFakeWorker(m.Run, &fakeWorker) }

func testCatalog(t *testing.T) *DirCatalog {
	t.Helper()
	c, err := LoadDir("testdata/catalog")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// testConfig is a fast configuration over the fixture catalog, writing into a temporary directory.
func testConfig(t *testing.T, dir string, globs ...string) (*Config, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	wd := DefaultWatchdog()
	wd.Floor, wd.Cap = time.Second, time.Second
	shapes, _ := results.ParseShapes("256x256x256,1041x1247x139")
	return &Config{
		Catalog: testCatalog(t), Worker: fakeWorker, Devices: []int{0}, Shapes: shapes,
		Filter:   Filter{Globs: globs},
		Strategy: Strategy{Name: "exhaustive", Seed: 1}, Shard: Shard{0, 1},
		Timing:   protocol.TimingSettings{Warmup: 1, Reps: 20, MaxReps: 20},
		Verify:   protocol.VerifySettings{SubMatrix: true, CPUCheckMaxFlops: 1e8, TolFactor: 2},
		Watchdog: wd, CachePath: filepath.Join(dir, "cache.jsonl"), Out: filepath.Join(dir, "out"),
		Rank:     RankSettings{Rounds: 3, Top: 3, NearPct: 5, Timing: protocol.TimingSettings{Warmup: 1, Reps: 10, MaxReps: 10}},
		Progress: "plain", Stdout: &stdout, Stderr: &stderr,
	}, &stdout, &stderr
}

func readRecords(t *testing.T, dir string) map[string]results.Record {
	t.Helper()
	rs, err := results.ReadJSONL(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]results.Record{}
	for _, r := range rs {
		out[r.Variant+" "+results.ShapeString(r.Shape)] = r
	}
	return out
}

// requestLog makes the fake worker log its requests and returns a function counting the lines
// that contain a substring.
func requestLog(t *testing.T) func(substr string) int {
	path := filepath.Join(t.TempDir(), "requests.log")
	t.Setenv("FAKEWORKER_LOG", path)
	return func(substr string) int {
		b, _ := os.ReadFile(path)
		n := 0
		for _, l := range strings.Split(string(b), "\n") {
			if l != "" && strings.Contains(l, substr) {
				n++
			}
		}
		return n
	}
}

func TestFaultIsolation(t *testing.T) {
	dir := t.TempDir()
	cfg, stdout, _ := testConfig(t, dir)
	cfg.Shapes = cfg.Shapes[:1]
	start := time.Now()
	if err := Tune(cfg); err != nil {
		t.Fatal(err)
	}
	recs := readRecords(t, cfg.Out)
	for _, tc := range []struct{ name, status, reason string }{
		{"bad_crash", results.StatusFailed, "worker crashed (exit status 2) while running: fake: illegal memory access"},
		{"bad_fatal", results.StatusFailed, "fatal: kernel under test: IllegalAddress"},
		// bad_garbage runs right after bad_fatal's worker exited: it must get a fresh worker.
		{"bad_hang", results.StatusFailed, "timeout after 1s (watchdog)"},
		{"bad_garbage", results.StatusFailed, `worker wrote garbage while running: "this is not JSON"`},
		{"bad_wrong", results.StatusFailed, "wrong results: 12.5% of elements over tolerance, first at (0,7)"},
		{"fast_a", results.StatusOK, ""}, {"mid", results.StatusOK, ""}, {"slow", results.StatusOK, ""}, {"aligned_64", results.StatusOK, ""},
		{"cublas", results.StatusOK, ""},
	} {
		r, ok := recs[tc.name+" 256x256x256"]
		if !ok {
			t.Errorf("%s: no record", tc.name)
			continue
		}
		if r.Status != tc.status || r.Reason != tc.reason {
			t.Errorf("%s: got %s %q, want %s %q", tc.name, r.Status, r.Reason, tc.status, tc.reason)
		}
	}
	// Every variant after a crash, hang or garbage still ran: each cost only its own request.
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s: the hang cost more than its watchdog", d)
	}
	f, _ := os.Open(filepath.Join(cfg.Out, "results.csv"))
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows[1:] {
		if row[5] == "bad_wrong" && (row[8] != results.StatusFailed || row[10] != "") {
			t.Errorf("wrong variant ranked or not failed: %v", row)
		}
		if row[5] == "fast_a" && row[10] != "=1" {
			t.Errorf("fast_a rank %q, want =1", row[10])
		}
	}
	if strings.Contains(stdout.String(), "bad_") {
		t.Errorf("failed variant in the ranked table:\n%s", stdout)
	}
}

func TestWatchdogTimeout(t *testing.T) {
	wd := Watchdog{Floor: 10 * time.Second, Cap: 120 * time.Second, Factor: 20, FloorGFLOPS: 200}
	ts := &protocol.TimingSettings{Warmup: 3, Reps: 20, MinTimeMS: 100}
	vs := &protocol.VerifySettings{CPUCheckMaxFlops: 1e8}
	big := protocol.Shape{M: 4096, N: 4096, K: 4096}
	for _, tc := range []struct {
		name   string
		shape  protocol.Shape
		cublas float64
		want   time.Duration
	}{
		{"small shape gets the floor", protocol.Shape{M: 64, N: 64, K: 64}, 0, 10 * time.Second},
		{"huge shape without cuBLAS hits the cap", protocol.Shape{M: 16384, N: 16384, K: 16384}, 0, 120 * time.Second},
		// 2 s + 29 · 687.19 ms (2·4096³ at 200 GFLOP/s) + 100 ms + verification host work and
		// reference: 2 checks · (3·4096² elements · 50 ns + 2·4096³ / 1 TFLOP/s) = 5.308 s.
		{"big shape without cuBLAS", big, 0, 27337 * time.Millisecond},
		// 2 s + (6 + 3 + 20) · 2.7 ms · 20 + 100 ms + 5.308 s = 8.974 s → floor.
		{"big shape with cuBLAS time", big, 2.7, 10 * time.Second},
		// 2 s + 29 · 50 ms · 20 + 100 ms + 5.308 s = 36.408 s.
		{"slow cuBLAS scales", big, 50, 36408 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := wd.timeout(tc.shape, tc.cublas, ts, vs).Round(time.Millisecond); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestCacheTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache.jsonl")
	good := `{"key":"a","kind":"tune","variant":"x","shape":{"m":1,"n":1,"k":1},"status":"ok","resources":{"registers":0,"shared_static":0,"spill_stores":0,"spill_loads":0,"stack_frame":0}}`
	for _, tc := range []struct {
		name, content string
		keys          int
		warnings      int
	}{
		{"torn last line", good + "\n" + `{"key":"b","kind":"tu`, 1, 1},
		{"corrupt middle line", good + "\ngarbage\n" + strings.Replace(good, `"a"`, `"c"`, 1) + "\n", 2, 1},
		{"last line without newline", good, 1, 0},
		{"empty", "", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.WriteFile(path, []byte(tc.content), 0o644)
			c, err := cache.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if c.Len() != tc.keys || len(c.Warnings) != tc.warnings {
				t.Fatalf("keys %d warnings %q, want %d and %d", c.Len(), c.Warnings, tc.keys, tc.warnings)
			}
			if err := c.Put(results.Record{Key: "new", Kind: results.KindTune, Variant: "y", Status: results.StatusOK}); err != nil {
				t.Fatal(err)
			}
			c.Close()
			c, err = cache.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, ok := c.Get("new"); !ok || len(c.Warnings) != tc.warnings-min(tc.warnings, boolInt(tc.name == "torn last line")) {
				t.Errorf("after append: new found %v, warnings %q", ok, c.Warnings)
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestCacheResumeAndTemplateChange(t *testing.T) {
	dir := t.TempDir()
	count := requestLog(t)
	cfg, _, stderr := testConfig(t, dir, "fast_*", "mid", "bad_wrong")
	if err := Tune(cfg); err != nil {
		t.Fatal(err)
	}
	first := count("run ")
	if first != 8+2*2*3 { // 4 variants x 2 shapes, then 3 rounds of 2 leaders per shape
		t.Fatalf("first run: %d run requests", first)
	}
	// One preload of the 4 planned modules before the sweep; later runs with fewer than two
	// modules to measure preload nothing.
	if n := count("preload 4 modules"); n != 1 {
		t.Errorf("first run: %d preloads of 4 modules, want 1", n)
	}
	var cost Cost
	if b, err := os.ReadFile(filepath.Join(cfg.Out, "cost.json")); err != nil {
		t.Error(err)
	} else if err := json.Unmarshal(b, &cost); err != nil {
		t.Error(err)
	} else if cost.Measured != 8+2 || cost.Cached != 0 || cost.PreloadModules != 4 || cost.WallS <= 0 || cost.VerifyS != 0 {
		// (the fake worker reports no phases)
		t.Errorf("cost.json: %+v, want 10 measured, 0 cached, 4 modules preloaded", cost)
	}
	before, _ := os.ReadFile(filepath.Join(cfg.Out, "results.csv"))

	cfg2, _, stderr2 := testConfig(t, dir, "fast_*", "mid", "bad_wrong")
	cfg2.Rank.Rounds = 0
	if err := Tune(cfg2); err != nil {
		t.Fatal(err)
	}
	if n := count("run "); n != first {
		t.Errorf("rerun measured again: %d run requests after %d\n%s", n, first, stderr2)
	}
	if n := count("preload"); n != 1 {
		t.Errorf("rerun from the cache preloaded modules (%d preloads in all)", n)
	}
	after, _ := os.ReadFile(filepath.Join(cfg.Out, "results.csv"))
	if !bytes.Equal(before, after) {
		t.Errorf("rerun from the cache changed results.csv")
	}

	// A changed template changes the variant's source hash: only it is measured again.
	cat := testCatalog(t)
	for i := range cat.m.Variants {
		if cat.m.Variants[i].Name == "mid" {
			cat.m.Variants[i].SourceHash = "changed"
		}
	}
	cfg3, _, _ := testConfig(t, dir, "fast_*", "mid", "bad_wrong")
	cfg3.Catalog, cfg3.Rank.Rounds = cat, 0
	if err := Tune(cfg3); err != nil {
		t.Fatal(err)
	}
	if n, mid := count("run ")-first, count("run mid ")-2; n != 2 || mid != 2 {
		t.Errorf("after changing mid: %d new run requests, %d of mid; want 2 and 2\n%s", n, mid, stderr)
	}
}

func TestShardMergeEqualsSingleRun(t *testing.T) {
	dir := t.TempDir()
	single, _, _ := testConfig(t, filepath.Join(dir, "single"), "fast_*", "mid", "slow", "aligned_64", "bad_wrong")
	single.Rank.Rounds = 0
	if err := Tune(single); err != nil {
		t.Fatal(err)
	}
	var outs []string
	for i := 0; i < 3; i++ {
		cfg, _, _ := testConfig(t, filepath.Join(dir, fmt.Sprint("shard", i)), "fast_*", "mid", "slow", "aligned_64", "bad_wrong")
		cfg.Shard, cfg.Rank.Rounds = Shard{i, 3}, 0
		if err := Tune(cfg); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, cfg.Out)
	}
	merged := filepath.Join(dir, "merged")
	if err := Merge(outs, merged, MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"results.jsonl", "results.csv", "bench.txt", "device.json"} {
		a, _ := os.ReadFile(filepath.Join(single.Out, f))
		b, _ := os.ReadFile(filepath.Join(merged, f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s: merged shards differ from the single run\nsingle:\n%s\nmerged:\n%s", f, a, b)
		}
	}
	// A shard given twice is refused (merge_test.go tests each refusal).
	if err := Merge(append(outs, outs[0]), filepath.Join(dir, "again"), MergeOptions{}); err == nil ||
		!strings.Contains(err.Error(), "shard 0/3 given 2 times") {
		t.Errorf("merging a shard twice: %v", err)
	}
}

func TestRandomStrategyDeterministic(t *testing.T) {
	vs := testCatalog(t).Variants()
	shapes, _ := results.ParseShapes("256x256x256,1041x1247x139")
	names := func(seed uint64) string {
		items, err := buildPlan(vs, shapes, Strategy{Name: "random", Budget: search.Budget{Count: 3}, Seed: seed}, Shard{0, 1})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, it := range items {
			if it.Skip == "" {
				fmt.Fprintf(&b, "%s@%s ", it.V.Name, results.ShapeString(it.Shape))
			}
		}
		return b.String()
	}
	a, b, c := names(7), names(7), names(8)
	if a != b {
		t.Errorf("same seed, different plans:\n%s\n%s", a, b)
	}
	if a == c {
		t.Errorf("seeds 7 and 8 gave the same plan %s", a)
	}
	if n := strings.Count(a, "@256x256x256"); n != 3 {
		t.Errorf("budget 3 picked %d variants: %s", n, a)
	}
	if _, err := buildPlan(vs, shapes, Strategy{Name: "random"}, Shard{0, 1}); err == nil {
		t.Error("random without a budget accepted")
	}
}

func TestRankedTableEndToEnd(t *testing.T) {
	cfg, stdout, _ := testConfig(t, t.TempDir(), "fast_*", "mid", "slow")
	cfg.Shapes = cfg.Shapes[:1]
	if err := Tune(cfg); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(stdout.String(), "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] != "rank" && f[0] != "shape" {
			got = append(got, f[0]+" "+f[1])
		}
	}
	// fast_a and fast_b have equal medians; cuBLAS (1 ms) sits between mid (0.8 ms) and slow.
	want := "=1 fast_a, =1 fast_b, 3 mid, 4 cublas, 5 slow"
	if s := strings.Join(got, ", "); s != want {
		t.Errorf("ranking %s, want %s\n%s", s, want, stdout)
	}
	if !strings.Contains(stdout.String(), "2.000") {
		t.Errorf("no ratio column value for fast_a:\n%s", stdout)
	}
}

func TestSkippedShapes(t *testing.T) {
	cfg, _, _ := testConfig(t, t.TempDir(), "aligned_64")
	cfg.Rank.Rounds = 0
	if err := Tune(cfg); err != nil {
		t.Fatal(err)
	}
	recs := readRecords(t, cfg.Out)
	if r := recs["aligned_64 1041x1247x139"]; r.Status != results.StatusSkipped || r.Reason != "M=1041 is not a multiple of 64" {
		t.Errorf("odd shape: %s %q", r.Status, r.Reason)
	}
	if r := recs["aligned_64 256x256x256"]; r.Status != results.StatusOK {
		t.Errorf("aligned shape: %s %q", r.Status, r.Reason)
	}
}

func TestPlainProgress(t *testing.T) {
	cfg, _, stderr := testConfig(t, t.TempDir(), "fast_a", "bad_wrong")
	cfg.Shapes = cfg.Shapes[:1]
	cfg.Rank.Rounds = 0
	if err := Tune(cfg); err != nil {
		t.Fatal(err)
	}
	want := "tune: 3 measurements, 0 cached, 3 to run on 1 device(s)\n" +
		"[1/3] cublas 256x256x256 ok 0.0 TFLOP/s\n" +
		"[2/3] bad_wrong 256x256x256 failed: wrong results: 12.5% of elements over tolerance, first at (0,7)\n" +
		"[3/3] fast_a 256x256x256 ok 0.1 TFLOP/s\n"
	got, cost, _ := strings.Cut(stderr.String(), "tune: 3 measured (0 cached, 0 skipped) in ")
	if got != want || !strings.Contains(cost, "to preload 2 modules (0 helper processes, then 1 threads)") {
		t.Errorf("progress:\n%s\nwant:\n%stune: 3 measured (0 cached, 0 skipped) in ... to preload 2 modules (0 helper processes, then 1 threads) ...", stderr, want)
	}
}

func TestJITHelpers(t *testing.T) {
	cpus := runtime.NumCPU()
	for _, tc := range []struct{ modules, devices, want int }{
		{1, 1, 0}, {15, 1, 1}, {16, 1, min(2, cpus)}, {194, 1, min(8, cpus)},
		{194, 2, min(8, max(1, cpus/2), 12)}, {31, 2, 1}, {15, 2, 0},
	} {
		if got := jitHelpers(tc.modules, tc.devices); got != tc.want {
			t.Errorf("jitHelpers(%d modules, %d devices) = %d, want %d", tc.modules, tc.devices, got, tc.want)
		}
	}
}

// TestJITShares: the modules are dealt once over the helpers of all devices, not once per device.
func TestJITShares(t *testing.T) {
	for _, tc := range []struct{ modules, devices int }{{194, 1}, {194, 2}, {232, 2}, {40, 3}, {17, 2}} {
		shares := jitShares(tc.modules, tc.devices)
		per := jitHelpers(tc.modules, tc.devices)
		if len(shares) != per*tc.devices {
			t.Fatalf("%+v: %d shares, want %d helpers on each of %d devices", tc, len(shares), per, tc.devices)
		}
		seen := make([]int, tc.modules)
		onSlot := make([]int, tc.devices)
		lo, hi := tc.modules, 0
		for _, sh := range shares {
			onSlot[sh.slot]++
			lo, hi = min(lo, len(sh.modules)), max(hi, len(sh.modules))
			for _, m := range sh.modules {
				seen[m]++
			}
		}
		for m, n := range seen {
			if n != 1 {
				t.Errorf("%+v: module %d compiled %d times", tc, m, n)
			}
		}
		for d, n := range onSlot {
			if n != per {
				t.Errorf("%+v: device %d runs %d helpers, want %d", tc, d, n, per)
			}
		}
		if hi-lo > 1 {
			t.Errorf("%+v: shares of %d to %d modules", tc, lo, hi)
		}
	}
	if s := jitShares(10, 2); s != nil {
		t.Errorf("10 modules on 2 devices: %d shares, want none (too few to be worth a helper)", len(s))
	}
}

func TestNoGPU(t *testing.T) {
	t.Setenv("FAKEWORKER_NOGPU", "1")
	cfg, _, _ := testConfig(t, t.TempDir(), "fast_a")
	err := Tune(cfg)
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "no usable GPU 0: cuInit") {
		t.Fatalf("got %v", err)
	}
	if err := Devices(fakeWorker, nil, DefaultWatchdog(), &bytes.Buffer{}); err == nil {
		t.Error("devices without a GPU succeeded")
	}
}

func TestDevicesAllSharesWork(t *testing.T) {
	t.Setenv("FAKEWORKER_DEVICES", "2")
	var out bytes.Buffer
	if err := Devices(fakeWorker, nil, DefaultWatchdog(), &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "GPU-fake-0") || !strings.Contains(out.String(), "GPU-fake-1") || strings.Contains(out.String(), "GPU-fake-2") {
		t.Errorf("devices all:\n%s", out.String())
	}
	cfg, _, _ := testConfig(t, t.TempDir(), "slow_sleepy", "fast_*", "mid", "bad_crash")
	cfg.Devices, cfg.Rank.Rounds = nil, 0
	if err := Tune(cfg); err != nil {
		t.Fatal(err)
	}
	used := map[string]int{}
	for _, r := range readRecords(t, cfg.Out) {
		if r.Device != nil {
			used[r.Device.UUID]++
		}
	}
	if len(used) != 2 {
		t.Errorf("work went to %v, want both devices", used)
	}
}

func TestVerifyEdgeSuite(t *testing.T) {
	cfg, stdout, _ := testConfig(t, t.TempDir(), "fast_a", "bad_wrong", "aligned_64")
	cfg.Shapes = nil
	err := Verify(cfg)
	if err == nil || !strings.Contains(err.Error(), "1 variant(s) failed") {
		t.Fatalf("got %v", err)
	}
	out := stdout.String()
	for _, want := range []string{
		"bad_wrong   any shape           0       0        failed at 1x1x1: wrong results",
		"fast_a      any shape           16      0        passed",
		"aligned_64  M%64 N%64 K%8 ld%4  0       16       not run (no shape fits)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	recs := readRecords(t, cfg.Out)
	if r := recs["fast_a 31x33x127"]; r.Kind != results.KindVerify || r.Status != results.StatusOK || r.Timing != nil {
		t.Errorf("tile-1 shape record: %+v", r)
	}
}

func TestEdgeShapes(t *testing.T) {
	v := &variant.Variant{Tile: variant.Tile{Rows: 64, Cols: 128}}
	got := map[string]bool{}
	for _, s := range EdgeShapes(v) {
		got[results.ShapeString(s)] = true
	}
	for _, want := range []string{"1x1x1", "1x256x256", "256x1x256", "97x89x83", "127x129x131", "4099x17x513", "1x4097x3",
		"63x127x63", "63x127x65", "65x129x63", "63x129x127", "65x127x129"} {
		if !got[want] {
			t.Errorf("edge suite lacks %s (has %v)", want, got)
		}
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ok   bool
		want Shard
	}{{"", true, Shard{0, 1}}, {"2/4", true, Shard{2, 4}}, {"4/4", false, Shard{}}, {"x/2", false, Shard{}}, {"1", false, Shard{}}} {
		got, err := ParseShard(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseShard(%q) = %v, %v", tc.in, got, err)
		}
	}
	if _, err := results.ParseShapes("4096x4096"); err == nil {
		t.Error("two-dimensional shape accepted")
	}
	if s, err := results.ParseShapes("1x2x3, 1x2x3,4x5x6"); err != nil || len(s) != 2 {
		t.Errorf("ParseShapes: %v %v", s, err)
	}
}

func TestSplitKPointless(t *testing.T) {
	v := &variant.Variant{Name: "s", GridZ: 2, Tile: variant.Tile{Rows: 64, Cols: 64}}
	if r := splitKPointless(v, protocol.Shape{M: 4096, N: 4096, K: 4096}, 132); !strings.Contains(r, "4096 output tiles") {
		t.Errorf("4096^3 with 64x64 tiles: %q, want a skip reason", r)
	}
	if r := splitKPointless(v, protocol.Shape{M: 1000, N: 1000, K: 1000}, 132); r != "" {
		t.Errorf("1000^3 (256 tiles on 132 SMs): %q, want no skip", r)
	}
	v.GridZ = 1
	if r := splitKPointless(v, protocol.Shape{M: 4096, N: 4096, K: 4096}, 132); r != "" {
		t.Errorf("no split: %q", r)
	}
}

// TestCostPerDevice: with two GPUs, cost.json says how the measurements spread: one entry per
// slot, in pool order, the counts adding up to the run's.
func TestCostPerDevice(t *testing.T) {
	t.Setenv("FAKEWORKER_DEVICES", "2")
	dir := t.TempDir()
	cfg, _, _ := testConfig(t, dir, "fast_*", "mid")
	cfg.Devices = []int{0, 1}
	if err := Tune(cfg); err != nil {
		t.Fatal(err)
	}
	var cost Cost
	b, err := os.ReadFile(filepath.Join(cfg.Out, "cost.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cost); err != nil {
		t.Fatal(err)
	}
	if len(cost.Devices) != 2 {
		t.Fatalf("cost.json devices: %+v, want 2", cost.Devices)
	}
	sum := 0
	for i, d := range cost.Devices {
		if d.Slot != i || d.UUID != fmt.Sprintf("GPU-fake-%d", i) || d.Name != "Fake GPU" {
			t.Errorf("device %d: %+v", i, d)
		}
		if d.Measured > 0 && d.PerMinute <= 0 {
			t.Errorf("device %d measured %d but rates %.1f per minute", i, d.Measured, d.PerMinute)
		}
		sum += d.Measured
	}
	if sum != cost.Measured {
		t.Errorf("per-device measurements add up to %d, the run measured %d", sum, cost.Measured)
	}
	if !strings.Contains(cost.String(), "per GPU: [0]") {
		t.Errorf("cost line %q does not give the per-GPU split", cost.String())
	}
	// Every kernel timed on a device is compared with cuBLAS timed on that device in this run.
	recs, err := results.ReadJSONL(filepath.Join(cfg.Out, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	devices := map[string]bool{}
	for i := range recs {
		r := &recs[i]
		if r.Kind != results.KindTune || r.Status != results.StatusOK {
			continue
		}
		devices[results.DeviceUUID(*r)] = true
		c := results.CublasFor(recs, r)
		if c == nil || results.DeviceUUID(*c) != results.DeviceUUID(*r) {
			t.Errorf("%s at %s on %s: no cuBLAS record of that device", r.Variant, results.ShapeString(r.Shape), results.DeviceUUID(*r))
		}
	}
	if len(devices) != 2 {
		t.Errorf("kernels timed on %d devices, want both", len(devices))
	}
	// A rerun finds every cuBLAS record, per device, in the cache.
	cfg2, _, _ := testConfig(t, dir, "fast_*", "mid")
	cfg2.Devices = []int{0, 1}
	if err := Tune(cfg2); err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile(filepath.Join(cfg2.Out, "cost.json"))
	if err != nil {
		t.Fatal(err)
	}
	var again Cost
	if err := json.Unmarshal(b, &again); err != nil {
		t.Fatal(err)
	}
	if again.Measured != 0 {
		t.Errorf("rerun measured %d, want everything from the cache", again.Measured)
	}
}

// copiesCatalog is the fixture catalog with n renamed copies of one variant (enough modules for
// JIT helpers).
type copiesCatalog struct {
	*DirCatalog
	of string
	n  int
}

func (c copiesCatalog) Variants() []variant.Variant {
	var out []variant.Variant
	for _, v := range c.DirCatalog.Variants() {
		if v.Name != c.of {
			continue
		}
		for i := range c.n {
			cp := v
			cp.Name = fmt.Sprintf("%s_%02d", v.Name, i)
			out = append(out, cp)
		}
	}
	return out
}

func (c copiesCatalog) PTX(name string) (string, error) {
	return c.DirCatalog.PTX(c.of)
}

// TestJITAlongside: with enough modules for helpers, the helpers compile them while the slot
// measures (no preload on the slot's worker), every module once, and cost.json says so.
func TestJITAlongside(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: one helper, no helper path")
	}
	count := requestLog(t)
	cfg, _, stderr := testConfig(t, t.TempDir())
	cfg.Catalog = copiesCatalog{testCatalog(t), "fast_a", 16}
	cfg.Shapes = cfg.Shapes[:1]
	cfg.Rank.Rounds = 0
	if err := Tune(cfg); err != nil {
		t.Fatal(err)
	}
	if n := count("preload 8 modules"); n != 2 {
		t.Errorf("%d helpers preloaded 8 modules each, want 2 (16 modules, 2 helpers)", n)
	}
	if n := count("preload 16 modules"); n != 0 {
		t.Errorf("the slot's worker preloaded all modules (%d), want it to load them as it runs", n)
	}
	if n := count("run fast_a_"); n != 16 {
		t.Errorf("%d runs, want 16", n)
	}
	b, err := os.ReadFile(filepath.Join(cfg.Out, "cost.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c Cost
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if !c.PreloadOverlapped || c.JITHelpers != 2 || c.PreloadModules != 16 || c.Measured != 17 {
		t.Errorf("cost: overlapped %v, %d helpers, %d modules, %d measured; want true, 2, 16, 17", c.PreloadOverlapped,
			c.JITHelpers, c.PreloadModules, c.Measured)
	}
	if !strings.Contains(stderr.String(), "16 modules compiled by 2 helper processes in") {
		t.Errorf("the summary line does not say the JIT ran alongside:\n%s", stderr)
	}
}
