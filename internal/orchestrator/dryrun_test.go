package orchestrator

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"tilegen/internal/results"
)

// dryRunConfig plans fast_a, fast_b, mid (made a split-K variant) and aligned_64 on three shapes:
// aligned_64 does not accept 1041x1247x139; mid splits K, pointless where its grid fills the GPU.
func dryRunConfig(t *testing.T, dir string) (*Config, *bytes.Buffer) {
	cfg, stdout, _ := testConfig(t, dir, "fast_*", "mid", "aligned_64")
	cat := testCatalog(t)
	for i := range cat.m.Variants {
		if cat.m.Variants[i].Name == "mid" {
			cat.m.Variants[i].GridZ = 2
		}
	}
	cfg.Catalog = cat
	cfg.Shapes, _ = results.ParseShapes("64x64x64,256x256x256,1041x1247x139")
	cfg.Rank.Rounds = 0
	return cfg, stdout
}

// row finds the plan table's line of a shape and returns its columns.
func row(t *testing.T, out, shape string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(shape) + `\s+(.*)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no row %s in:\n%s", shape, out)
	}
	return strings.Fields(m[1])
}

// TestDryRun: the plan without a GPU — pruned with reasons, cached, to measure, estimated time —
// reads the cache and --out's device.json and writes nothing; after a real run, everything it
// measured reads cached, and the split-K rule uses the SMs of the GPU that ran.
func TestDryRun(t *testing.T) {
	dir := t.TempDir()
	cfg, stdout := dryRunConfig(t, dir)
	if err := DryRun(cfg, 0); err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	t.Logf("empty cache:\n%s", out)
	// No GPU known: 132 SMs assumed, so mid's 64 tiles on 256x256x256 are worth splitting.
	for shape, want := range map[string]string{
		"64x64x64":      "4 0 0 0 4 measure",
		"256x256x256":   "4 0 0 0 4 measure",
		"1041x1247x139": "4 1 1 0 2 measure",
		"total":         "12 1 1 0 10 3 to measure",
	} {
		if got := strings.Join(row(t, out, shape), " "); got != want {
			t.Errorf("row %s: %q, want %q", shape, got, want)
		}
	}
	for _, want := range []string{
		"plan: 4 variants (--variants fast_*,mid,aligned_64) × 3 shapes = 12 pairs",
		"1041x1247x139: M=1041 is not a multiple of 64: 1: aligned_64",
		"1041x1247x139: split-K not tuned: 1287 output tiles already give the 132 SMs 4 or more each: 1: mid",
		"to measure: 10 variant runs and 3 cuBLAS runs, 4 modules to JIT-compile",
		"estimated time: ", "GPUs known: no GPU known, 132 SMs", "on 1 GPU (--devices 0)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q", want)
		}
	}
	if _, err := os.Stat(cfg.CachePath); !os.IsNotExist(err) {
		t.Errorf("the dry run created the cache: %v", err)
	}
	if _, err := os.Stat(cfg.Out); !os.IsNotExist(err) {
		t.Errorf("the dry run created --out: %v", err)
	}

	// A real run on the fake GPU (4 SMs): mid is left out where 16 tiles or more fill it.
	run, _ := dryRunConfig(t, dir)
	if err := Tune(run); err != nil {
		t.Fatal(err)
	}
	cache, _ := os.ReadFile(cfg.CachePath)
	cfg2, stdout2 := dryRunConfig(t, dir)
	if err := DryRun(cfg2, 0); err != nil {
		t.Fatal(err)
	}
	out = stdout2.String()
	t.Logf("after the run:\n%s", out)
	for shape, want := range map[string]string{
		"64x64x64":      "4 0 0 4 0 cached",
		"256x256x256":   "4 0 1 3 0 cached",
		"1041x1247x139": "4 1 1 2 0 cached",
		"total":         "12 1 2 9 0 0 to measure",
	} {
		if got := strings.Join(row(t, out, shape), " "); got != want {
			t.Errorf("row %s: %q, want %q", shape, got, want)
		}
	}
	for _, want := range []string{"split-K not tuned", "GPUs known: Fake GPU GPU-fake-0 driver 13000, 4 SMs",
		"to measure: 0 variant runs and 0 cuBLAS runs"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q", want)
		}
	}
	if after, _ := os.ReadFile(cfg.CachePath); !bytes.Equal(cache, after) {
		t.Error("the dry run changed the cache")
	}

	// Another plan on the same cache: --sms overrides, --param narrows.
	cfg3, stdout3 := dryRunConfig(t, dir)
	cfg3.Filter = Filter{Params: map[string][]int{"US": {500}}}
	if err := DryRun(cfg3, 1000); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(row(t, stdout3.String(), "total"), " "); got != "6 0 0 6 0 0 to measure" {
		t.Errorf("--param US=500 --sms 1000: total %q\n%s", got, stdout3.String())
	}
}

// A file that is not a cache is refused, not read as an empty one.
func TestDryRunRefusesANonCache(t *testing.T) {
	dir := t.TempDir()
	cfg, _ := dryRunConfig(t, dir)
	if err := os.WriteFile(cfg.CachePath, []byte("a,b,c\n1,2,3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := DryRun(cfg, 0); err == nil || !strings.Contains(err.Error(), "not a tilegen cache") {
		t.Errorf("got %v", err)
	}
}

func TestParamFilter(t *testing.T) {
	cat := testCatalog(t)
	for _, tc := range []struct {
		args []string
		want string // the selected names, or the error
	}{
		{[]string{"US=500"}, "fast_a fast_b"},
		{[]string{"US=500,800"}, "fast_a fast_b mid"},
		{[]string{"US=500", "US=2000"}, "fast_a fast_b slow"},
		{[]string{"US=100", "WRONG=1"}, "bad_wrong"},
		{[]string{"US=7"}, "no variant matches --param US=7 (of 11)"},
		{[]string{"SIZE=1"}, "--param SIZE: no variant has the parameter SIZE (parameters: CRASH, FATAL, GARBAGE, HANG, SLOWMS, US, WRONG)"},
		{[]string{"US"}, `--param "US": want KEY=VALUE or KEY=V1,V2`},
		{[]string{"US=x"}, `--param "US=x": "x" is not an integer`},
	} {
		var got string
		params, err := ParseParams(tc.args)
		if err == nil {
			var vs []string
			sel, serr := Filter{Params: params}.Select(cat.Variants())
			for _, v := range sel {
				vs = append(vs, v.Name)
			}
			got, err = strings.Join(vs, " "), serr
		}
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("--param %v: got %q, want %q", tc.args, got, tc.want)
		}
	}
}
