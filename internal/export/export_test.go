package export

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tilegen/internal/dispatch"
	"tilegen/internal/orchestrator"
	"tilegen/internal/protocol"
	"tilegen/internal/results"
	"tilegen/internal/variant"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

var fixtureResults = []string{"testdata/results/tune", "testdata/results/verify"}

// fixtureOptions export the fixture as committed: H100 records from before results carried
// source/PTX hashes, as the committed examples are (copyFixture makes a hashed copy).
func fixtureOptions(out string) Options {
	return Options{Results: fixtureResults, Generated: "testdata/generated", Out: out, Name: "tg",
		GoPackage: "example.com/consumer/tgsgemm", AllowUnhashed: true}
}

// needTool skips when a tool is missing, except in CI where the toolchain must be there.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not found (CI=true)", name)
		}
		t.Skipf("%s not found", name)
	}
	return p
}

func exportFixture(t *testing.T) (string, *Plan) {
	t.Helper()
	return runPlan(t, fixtureOptions(filepath.Join(t.TempDir(), "tgsgemm")))
}

func TestSelection(t *testing.T) {
	_, p := exportFixture(t)
	// From the H100 sweep: micro1d_t64_r16 has the best worst-case ratio to cuBLAS of the six
	// fixture variants (0.44 at 4096³) and passed its whole edge suite.
	if d := p.Variants[p.DefaultOf(variant.OpNN)].V.Name; d != "micro1d_t64_r16" {
		t.Errorf("default %s, want micro1d_t64_r16", d)
	}
	// The exported variants are those the rule launches, and the default.
	used := map[int]bool{}
	for _, j := range p.RuleOf(variant.OpNN).Rule.Used() {
		used[j] = true
	}
	if len(used) != len(p.Variants) {
		t.Errorf("%d variants exported, the rule uses %d", len(p.Variants), len(used))
	}
	for i := 1; i < len(p.Variants); i++ {
		if p.Variants[i-1].V.Name >= p.Variants[i].V.Name {
			t.Errorf("variants not sorted by name: %s, %s", p.Variants[i-1].V.Name, p.Variants[i].V.Name)
		}
	}
	// Fitted on the 9 tuned shapes, every one of which had every variant timed: each gets the variant
	// the rule launches there, within 6 % of the shape's fastest exportable variant (the smoother
	// trades a little on the tuned shapes for shapes it never saw), and the clear winners exactly.
	if len(p.Classes) != 9 || len(p.Untimed) != 0 || p.RuleOf(variant.OpNN).FitShapes != 9 || p.Corpus {
		t.Errorf("%d classes, %d untimed, fitted on %d (corpus %v); want 9, 0, 9, false", len(p.Classes), len(p.Untimed), p.RuleOf(variant.OpNN).FitShapes, p.Corpus)
	}
	fastest := map[string]float64{"127x4097x513": 0.0412, "224x256x192": 0.0108, "535x792x414": 0.0322, "1000x1000x1000": 0.1045,
		"1024x1024x1024": 0.1045, "1041x1247x139": 0.0304, "2048x2048x2048": 0.7682, "4096x4096x32": 0.0648, "4096x4096x4096": 6.0180}
	want := map[string]string{"224x256x192": "micro1d_t32_r4", "4096x4096x32": "micro1d_t32_r8", "4096x4096x4096": "micro1d_t64_r16",
		"2048x2048x2048": "micro1d_t64_r16"}
	for _, c := range p.Classes {
		sh := results.ShapeString(c.Shape)
		i, err := p.Choose(variant.OpNN, c.Shape.M, c.Shape.N, c.Shape.K, c.Shape.K, c.Shape.N, c.Shape.N)
		if err != nil || i != c.Variant {
			t.Errorf("class %s: %s, but Choose gives %d %v", sh, p.Variants[c.Variant].V.Name, i, err)
		}
		if f := fastest[sh]; c.MedianMS > 1.06*f+5e-5 {
			t.Errorf("class %s: %s takes %.4f ms, more than 6 %% over the fastest's %.4f", sh, p.Variants[c.Variant].V.Name, c.MedianMS, f)
		}
		if w, ok := want[sh]; ok && p.Variants[c.Variant].V.Name != w {
			t.Errorf("class %s: %s, want %s", sh, p.Variants[c.Variant].V.Name, w)
		}
	}
}

// requirementsFixture exports a copy of the fixture in which micro1d_t32_r8 and micro1d_t64_r8
// demand K and the leading dimensions in multiples of 4 and M in multiples of 2 (as vectorized
// kernels do), so that the rule's cells hold variants with requirements and its general table
// differs from its first. Its rule also carries a wave guard and a bulk guard (injectGuard), so
// that the artifacts' guard code is exercised too.
func requirementsFixture(t *testing.T) (string, *Plan) {
	t.Helper()
	tune, verify, gen := copyFixture(t)
	editJSON(t, filepath.Join(gen, "manifest.json"), func(m map[string]any) {
		for _, v := range m["variants"].([]any) {
			v := v.(map[string]any)
			if n := v["name"]; n == "micro1d_t32_r8" || n == "micro1d_t64_r8" {
				v["requires"] = map[string]any{"m_multiple": 2, "n_multiple": 1, "k_multiple": 4, "ld_multiple": 4}
			}
		}
	})
	// Misaligned twins (twin_test.go) and a tuned shape of each misalignment class, so that the
	// artifacts' tests cover every twin launch too.
	cloneShape(t, tune, protocol.Shape{M: 4096, N: 4096, K: 4096}, protocol.Shape{M: 4096, N: 4094, K: 4096})
	for _, base := range []string{"micro1d_t64_r16", "shared_w16_pad0"} {
		addTwin(t, tune, verify, gen, base, 1, twinScale)
		addTwin(t, tune, verify, gen, base, 3, twinScaleA)
	}
	o := Options{Results: []string{tune, verify}, Generated: gen, Out: filepath.Join(t.TempDir(), "tgsgemm"), Name: "tg",
		GoPackage: "example.com/consumer/tgsgemm"}
	p, files, err := Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	injectGuard(t, p)
	gf, err := goFiles(p)
	if err != nil {
		t.Fatal(err)
	}
	maps.Copy(files, gf)
	if files["tg.cuh"], err = cuhFile(p); err != nil {
		t.Fatal(err)
	}
	if err := writeNew(o.Out, files); err != nil {
		t.Fatal(err)
	}
	return o.Out, p
}

// injectGuard gives p's NN rule a wave guard, as Fit gives a corpus with a stream-K kernel (the
// fixture has none): a 32×32 kernel without requirements (else its robust default) replaces every other variant on problems of M·N·K ≥ 2^18
// on which it has 16 tiles or more covering at most a quarter of M×N beyond it and whose blocks
// (a launch-time split kernel's slices computed for 132 SMs) would fill their waves to at most 5/7
// on 132 SMs at two blocks per SM, or whose tiles cover twice M×N (Cover), except on the first two
// probes it acts on (kept); and a bulk guard (the fixture has no big tile): the first other
// fixed-grid variant without requirements runs where K ≥ 64 and its tiles fill two waves of 16
// blocks or more with at most a tenth of M×N to spare.
func injectGuard(t *testing.T, p *Plan) {
	t.Helper()
	r := p.RuleOf(variant.OpNN)
	// The guard: the robust default, or a smaller tile without requirements where the fixture has
	// one, so that the cover test can act (a 64-row tile on 32 rows, where the guard's 32 fit).
	at := r.Default
	for i, c := range p.Variants {
		if d := &p.Variants[at].V; c.V.Op == variant.OpNN && c.V.Tile.Rows*2 <= d.Tile.Rows && c.V.Tile.Cols*2 <= d.Tile.Cols && c.V.Split == nil &&
			atLeast1(c.V.GridZ) == 1 && supports(&c.V, 7, 7, 7, 7, 7, 7) == nil {
			at = i
			break
		}
	}
	g := &dispatch.WaveGuard{Kernel: at, MinWork: 1 << 18, WavesNum: 7, WavesDen: 5, MinTiles: 16, EdgeDen: 4, SMs: 132, Cover: 2,
		Kernels: make([]dispatch.GuardKernel, len(p.Variants))}
	d := &p.Variants[at].V
	g.Kernels[at] = dispatch.GuardKernel{TileRows: d.Tile.Rows, TileCols: d.Tile.Cols, GridZ: 1}
	for i, c := range p.Variants {
		if i != at && c.V.Op == variant.OpNN && (c.V.Split == nil || !c.V.Split.StreamK) {
			g.Kernels[i] = dispatch.GuardKernel{TileRows: c.V.Tile.Rows, TileCols: c.V.Tile.Cols, GridZ: atLeast1(c.V.GridZ), Slots: 264, Split: c.V.Split}
		}
	}
	// The guard keeps the first two probes on which it would act.
	for _, q := range probes {
		if len(g.Keep) == 2 {
			break
		}
		m, n, k := q[0], q[1], q[2]
		if m < 1 || n < 1 || k < 1 {
			continue
		}
		a, _, _ := r.Rule.Pick(m, n, k)
		if g.Replaces(a, m, n, k) && !slices.Contains(g.Keep, [3]int{m, n, k}) {
			g.Keep = append(g.Keep, [3]int{m, n, k})
		}
	}
	slices.SortFunc(g.Keep, func(x, y [3]int) int { return slices.Compare(x[:], y[:]) })
	r.Rule.Guard = g
	// A bulk guard on another fixed-grid kernel without requirements, at thresholds the probes reach.
	for i, c := range p.Variants {
		if i != r.Default && i != at && c.V.Split == nil && c.V.Op == variant.OpNN && atLeast1(c.V.GridZ) == 1 && supports(&c.V, 7, 7, 7, 7, 7, 7) == nil {
			r.Rule.Bulk = &dispatch.BulkGuard{Kernel: i, TileRows: c.V.Tile.Rows, TileCols: c.V.Tile.Cols, Slots: 16, MinWaves: 2, MinK: 64,
				FullNum: 11, FullDen: 10}
			break
		}
	}
	if r.Rule.Bulk == nil {
		t.Fatal("the fixture has no second fixed-grid kernel without requirements for a bulk guard")
	}
	if err := r.Rule.Check(len(p.Variants)); err != nil {
		t.Fatal(err)
	}
}

// TestChooseFollowsRule: Plan.Choose, which the artifacts' tests compare with, is the dispatch
// package's rule followed by the requirement checks.
func TestChooseFollowsRule(t *testing.T) {
	_, p := requirementsFixture(t)
	used := map[string]int{}
	for _, q := range probes {
		m, n, k := q[0], q[1], q[2]
		if m < 1 || n < 1 || k < 1 {
			continue
		}
		i, err := p.Choose(variant.OpNN, m, n, k, k, n, n)
		j := p.RuleOf(variant.OpNN).Rule.Dispatch(m, n, k, dispatch.Vec(m, n, k, n, n), func(j int) bool { return supports(&p.Variants[j].V, m, n, k, k, n, n) == nil },
			func(j int) bool { return m%p.Variants[j].V.Tile.Rows == 0 && n%p.Variants[j].V.Tile.Cols == 0 })
		want := j
		// Then the twin of the problem's misalignment class (lda = K, ldb = N).
		if tw := p.Variants[max(j, 0)].Twins[MisClass(k, n)].Index; j >= 0 && MisClass(k, n) > 0 && tw > 0 && supports(&p.Variants[tw].V, m, n, k, k, n, n) == nil {
			want = tw
			used[fmt.Sprintf("twin%d", MisClass(k, n))]++
		}
		if (err == nil) != (j >= 0) || err == nil && i != want {
			t.Errorf("%dx%dx%d: Choose %d (%v), the rule %d, want %d", m, n, k, i, err, j, want)
		}
		if j < 0 {
			continue
		}
		if slices.Contains(p.RuleOf(variant.OpNN).Rule.Guard.Keep, [3]int{m, n, k}) {
			used["kept"]++
		}
		// The path the launch took (a cell's aligned and unaligned kernels may be one kernel).
		unguarded := *p.RuleOf(variant.OpNN).Rule
		unguarded.Guard, unguarded.Bulk = nil, nil
		if jc := unguarded.Dispatch(m, n, k, dispatch.Vec(m, n, k, n, n), func(j int) bool { return supports(&p.Variants[j].V, m, n, k, k, n, n) == nil },
			func(j int) bool { return m%p.Variants[j].V.Tile.Rows == 0 && n%p.Variants[j].V.Tile.Cols == 0 }); jc != j {
			if b := p.RuleOf(variant.OpNN).Rule.Bulk; j == b.Kernel && b.Takes(jc, m, n, k) {
				used["bulk"]++
			} else {
				used["guard"]++
				// By its cover test alone: the replaced kernel's tiles cover twice M×N.
				if vc := &p.Variants[jc].V; int64((m+vc.Tile.Rows-1)/vc.Tile.Rows*vc.Tile.Rows)*int64((n+vc.Tile.Cols-1)/vc.Tile.Cols*vc.Tile.Cols) >= 2*int64(m)*int64(n) {
					used["cover"]++
				}
			}
			continue
		}
		a, u, g := p.RuleOf(variant.OpNN).Rule.Pick(m, n, k)
		va := &p.Variants[a].V
		switch fitsA := m%va.Tile.Rows == 0 && n%va.Tile.Cols == 0 && supports(va, m, n, k, k, n, n) == nil; {
		case fitsA && j == a:
			used["aligned"]++
		case j == u:
			used["unaligned"]++
		case j == g:
			used["general"]++
		default:
			used["default"]++
		}
	}
	t.Logf("launched from: %v", used)
	for _, from := range []string{"aligned", "unaligned", "guard", "cover", "bulk", "kept", "twin1", "twin2", "twin3"} {
		if used[from] == 0 {
			t.Errorf("no probe launched the cell's %s kernel: that path is not exercised", from)
		}
	}
}

// goldenFiles are the files of the fixture's export compared with testdata/golden.
var goldenFiles = []string{"dispatch.go", "sgemm.go", "batched.go", "restate.go", "driver.go", "driver_unsupported.go", "tg.cuh", "tg.json"}

func TestGolden(t *testing.T) {
	out, _ := exportFixture(t)
	for _, name := range goldenFiles {
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join("testdata", "golden", name+".golden")
		if *update {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s (run go test -update and review the diff)", name, golden)
		}
	}
	// Deterministic: a second export is byte-identical.
	out2 := filepath.Join(t.TempDir(), "again")
	if err := Run(fixtureOptions(out2)); err != nil {
		t.Fatal(err)
	}
	for _, name := range append(goldenFiles, "ptx/micro1d_t32_r4.ptx") {
		a, _ := os.ReadFile(filepath.Join(out, name))
		b, _ := os.ReadFile(filepath.Join(out2, name))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two exports", name)
		}
	}
}

// probes are problems whose dispatch the three implementations (Plan.Choose, the Go package, the
// header) must agree on: hand-picked ones, then every dimension at and around each bucket edge
// (2^e and 1.5·2^e, ±1) and log-uniform random shapes, with packed, padded and odd leading
// dimensions.
var probes = append([][6]int{
	{1, 1, 1, 1, 1, 1}, {224, 256, 192, 192, 256, 256}, {230, 250, 200, 200, 250, 250}, {4096, 4096, 4096, 4096, 4096, 4096},
	{4096, 4096, 40, 40, 4096, 4096}, {100, 5000, 600, 600, 5000, 5000}, {3000, 3000, 50, 50, 3000, 3000},
	{535, 792, 414, 414, 792, 792}, {1, 4097, 3, 3, 4097, 4097}, {64, 64, 64, 60, 64, 64}, {0, 5, 5, 5, 5, 5},
	{10000, 10, 10, 10, 10, 10}, {5000000, 2, 2, 2, 2, 2},
}, generatedProbes()...)

func generatedProbes() [][6]int {
	const maxInt32 = 1<<31 - 1
	var edges []int
	for e := range 31 {
		for _, x := range []int{1 << e, 3 << e >> 1} {
			for _, d := range []int{-1, 0, 1} {
				if v := x + d; v >= 1 && v <= maxInt32 && (len(edges) == 0 || v > edges[len(edges)-1]) {
					edges = append(edges, v)
				}
			}
		}
	}
	// ld pads a leading dimension: packed, +1, +3 (odd), or doubled, within 32 bits.
	ld := func(x, i int) int {
		if v := []int{x, x + 1, x + 3, 2 * x}[i%4]; v <= maxInt32 {
			return v
		}
		return x
	}
	var out [][6]int
	for i, x := range edges {
		out = append(out, [6]int{x, 517, 129, ld(129, i), 517, 517}, [6]int{300, x, 64, 64, ld(x, i), ld(x, i+1)},
			[6]int{64, 48, x, ld(x, i), 48, 48}, [6]int{x, x, x, x, x, x})
	}
	rng := rand.New(rand.NewPCG(17, 17))
	dim := func(octaves float64) int { return int(math.Round(math.Exp2(rng.Float64() * octaves))) }
	for i := range 600 {
		m, n, k := dim(17), dim(17), dim(20)
		out = append(out, [6]int{m, n, k, ld(k, i), ld(n, i/4), ld(n, i/16)})
	}
	return out
}

func planChoices(p *Plan) string {
	var b strings.Builder
	for _, q := range probes {
		i, err := p.Choose(variant.OpNN, q[0], q[1], q[2], q[3], q[4], q[5])
		name := "-"
		if err == nil {
			name = p.Variants[i].V.Name
		}
		fmt.Fprintf(&b, "%dx%dx%d %s\n", q[0], q[1], q[2], name)
	}
	return b.String()
}

// goModule copies the exported package in out into a module of its own that requires nothing (no
// tilegen code, no module outside the standard library: it must build with GOPROXY=off on a machine
// whose module cache is empty) and returns the module's directory and a go command runner.
func goModule(t *testing.T, out string) (mod string, gocmd func(dir string, env []string, args ...string) string) {
	t.Helper()
	goBin := needTool(t, "go")
	mod = t.TempDir()
	if err := os.CopyFS(filepath.Join(mod, "tgsgemm"), os.DirFS(out)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/consumer\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gocmd = func(dir string, env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command(goBin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), append([]string{"GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off"}, env...)...)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
		}
		return string(b)
	}
	return mod, gocmd
}

// buildInModule vets and builds the exported package in out in a module of its own (goModule),
// with cgo and without, and checks that it depends on the standard library only and links
// nothing but libdl/libc.
func buildInModule(t *testing.T, out string) (mod string, gocmd func(dir string, env []string, args ...string) string) {
	t.Helper()
	mod, gocmd = goModule(t, out)
	gocmd(mod, nil, "vet", "./...")
	gocmd(mod, nil, "build", "./...")
	gocmd(mod, []string{"CGO_ENABLED=0"}, "vet", "./...")
	deps := gocmd(mod, nil, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./tgsgemm")
	if got := strings.Fields(deps); len(got) != 1 || got[0] != "example.com/consumer/tgsgemm" {
		t.Errorf("the exported package depends on %v beyond the standard library", got)
	}
	if ld := gocmd(mod, nil, "list", "-f", "{{.CgoLDFLAGS}}", "./tgsgemm"); strings.TrimSpace(ld) != "[-ldl]" {
		t.Errorf("cgo LDFLAGS %s, want [-ldl] (libcuda.so.1 is opened at run time)", strings.TrimSpace(ld))
	}
	return mod, gocmd
}

// TestHeaderCompiles compiles a tiny .cu that includes the header with nvcc, runs its dispatch on
// the host (no GPU needed) over every probe and compares it with Plan.Choose (which
// TestChooseFollowsRule ties to internal/dispatch's rule). The export has variants with
// requirements, so both of the rule's tables are exercised.
func TestHeaderCompiles(t *testing.T) {
	nvcc := needTool(t, "nvcc")
	out, p := requirementsFixture(t)
	dir := t.TempDir()
	var src strings.Builder
	src.WriteString("#include \"tg.cuh\"\n#include <stdio.h>\n\nstatic const int probes[][6] = {\n")
	for _, q := range probes {
		fmt.Fprintf(&src, "    {%d, %d, %d, %d, %d, %d},\n", q[0], q[1], q[2], q[3], q[4], q[5])
	}
	// 256: an address aligned for every variant; the dispatch does not dereference it.
	src.WriteString(`};

int main() {
    for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
        const int* q = probes[i];
        const char* v = tg_variant(q[0], q[1], q[2], q[3], q[4], q[5], (const float*)256, (const float*)256, (const float*)256);
        printf("%dx%dx%d %s\n", q[0], q[1], q[2], v ? v : "-");
    }
    return 0;
}
`)
	if err := os.WriteFile(filepath.Join(dir, "probe.cu"), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-arch=sm_90", "-Xcompiler", "-Wall,-Werror", "-I", out}
	if _, err := exec.LookPath("g++-11"); err == nil {
		args = append(args, "-ccbin", "g++-11")
	}
	// -c: the header alone compiles into an object (kernels included).
	cmd := exec.Command(nvcc, append(args, "-c", "-o", filepath.Join(dir, "probe.o"), filepath.Join(dir, "probe.cu"))...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nvcc -c: %v\n%s", err, b)
	}
	cmd = exec.Command(nvcc, append(args, "-o", filepath.Join(dir, "probe"), filepath.Join(dir, "probe.cu"))...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nvcc: %v\n%s", err, b)
	}
	b, err := exec.Command(filepath.Join(dir, "probe")).CombinedOutput()
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, b)
	}
	if got, want := string(b), planChoices(p); got != want {
		t.Errorf("header dispatch:\n%s\nPlan.Choose:\n%s", got, want)
	}
}

func TestChooseFallsBackToDefault(t *testing.T) {
	_, p := exportFixture(t)
	small := -1
	for i, c := range p.Variants {
		if c.V.Name == "micro1d_t32_r4" {
			small = i
		}
	}
	// Make the 224x256x192 winner demand M % 32: a nearby problem with M = 225 must go to the default,
	// and when the default cannot take it either, an error.
	p.Variants[small].V.Requires.MMultiple = 32
	if i, err := p.Choose(variant.OpNN, 224, 256, 192, 192, 256, 256); err != nil || i != small {
		t.Errorf("224x256x192: %d %v, want the class winner", i, err)
	}
	if i, err := p.Choose(variant.OpNN, 225, 256, 192, 192, 256, 256); err != nil || i != p.DefaultOf(variant.OpNN) {
		t.Errorf("225x256x192: %d %v, want the default", i, err)
	}
	p.Variants[p.DefaultOf(variant.OpNN)].V.Requires.MMultiple = 64
	if i, err := p.Choose(variant.OpNN, 225, 256, 192, 192, 256, 256); err == nil {
		t.Errorf("225x256x192: %d, want an error when the default cannot take it", i)
	} else if !strings.Contains(err.Error(), "not a multiple") {
		t.Errorf("error %q does not say why", err)
	}
	if _, err := p.Choose(variant.OpNN, 10, 10, 10, 5, 10, 10); err == nil {
		t.Error("lda < K accepted")
	}
}

// copyFixture copies the fixture results and generated directories so a test can alter them, and
// gives the copy's tune and verify records the source and PTX hashes of the fixture's manifest, as
// runner tune and verify now record them.
func copyFixture(t *testing.T) (tune, verify, gen string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "results"), os.DirFS("testdata/results")); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(dir, "generated"), os.DirFS("testdata/generated")); err != nil {
		t.Fatal(err)
	}
	tune, verify, gen = filepath.Join(dir, "results", "tune"), filepath.Join(dir, "results", "verify"), filepath.Join(dir, "generated")
	cat, err := orchestrator.LoadDir(gen)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]variant.Variant{}
	for _, v := range cat.Variants() {
		byName[v.Name] = v
	}
	for _, d := range []string{tune, verify} {
		editRecords(t, filepath.Join(d, "results.jsonl"), func(r *results.Record) bool {
			if v, ok := byName[r.Variant]; ok && r.Kind != results.KindCublas {
				r.SourceHash, r.PTXHash = v.SourceHash, v.PTXHash
			}
			return true
		})
	}
	return tune, verify, gen
}

// addRepoVariants adds to a fixture's generated directory the repository's variants that keep
// selects (their manifest entries, sources and PTX as the repository's generator wrote them), in the
// repository manifest's order, and returns them.
func addRepoVariants(t *testing.T, gen string, keep func(variant.Variant) bool) []variant.Variant {
	t.Helper()
	b, err := os.ReadFile("../../generated/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var repo variant.Manifest
	if err := json.Unmarshal(b, &repo); err != nil {
		t.Fatal(err)
	}
	mpath := filepath.Join(gen, "manifest.json")
	if b, err = os.ReadFile(mpath); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var added []variant.Variant
	for _, v := range repo.Variants {
		if !keep(v) {
			continue
		}
		added = append(added, v)
		m["variants"] = append(m["variants"].([]any), v)
		for _, f := range []string{"cuda/" + v.Name + ".cu", "ptx/" + v.Name + ".ptx"} {
			src, err := os.ReadFile(filepath.Join("../../generated", f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(gen, f), src, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mpath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return added
}

// appendRecords appends records to a results.jsonl.
func appendRecords(t *testing.T, path string, recs []results.Record) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(append(line, '\n')); err != nil {
			t.Fatal(err)
		}
	}
}

// fixturePlan exports a fixture's tune and verify records (Run, into a temporary tgsgemm) and
// returns the output directory and the plan.
func fixturePlan(t *testing.T, tune, verify, gen string) (string, *Plan) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "tgsgemm")
	return runPlan(t, Options{Results: []string{tune, verify}, Generated: gen, Out: out, Name: "tg", GoPackage: "example.com/consumer/tgsgemm"})
}

// runPlan exports with o and returns o.Out and the export's plan.
func runPlan(t *testing.T, o Options) (string, *Plan) {
	t.Helper()
	if err := Run(o); err != nil {
		t.Fatal(err)
	}
	p, _, err := Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	return o.Out, p
}

// editRecords rewrites the records of a results.jsonl through f.
func editRecords(t *testing.T, path string, f func(r *results.Record) bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var r results.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if !f(&r) {
			continue
		}
		line, _ := json.Marshal(r)
		out.Write(append(line, '\n'))
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRefusals(t *testing.T) {
	t.Run("failed verification excludes the variant", func(t *testing.T) {
		tune, verify, gen := copyFixture(t)
		editRecords(t, filepath.Join(verify, "results.jsonl"), func(r *results.Record) bool {
			if r.Variant == "micro1d_t64_r16" && r.Shape.M == 97 {
				r.Status, r.Reason = results.StatusFailed, "12 elements over the tolerance"
				r.Verify[0].Pass = false
			}
			return true
		})
		var log bytes.Buffer
		out := filepath.Join(t.TempDir(), "x")
		if err := Run(Options{Results: []string{tune, verify}, Generated: gen, Out: out, Name: "tg", Log: &log}); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(out, "tg.json"))
		var pv Provenance
		if err := json.Unmarshal(b, &pv); err != nil {
			t.Fatal(err)
		}
		for _, v := range pv.Variants {
			if v.Name == "micro1d_t64_r16" {
				t.Errorf("a variant that failed verification was exported")
			}
		}
		if !strings.Contains(log.String(), "excluded micro1d_t64_r16") || !strings.Contains(log.String(), "12 elements over the tolerance") {
			t.Errorf("log does not give the reason:\n%s", log.String())
		}
		if len(pv.Excluded) != 1 || pv.Excluded[0].Variant != "micro1d_t64_r16" || len(pv.Excluded[0].WouldHaveWon) == 0 {
			t.Errorf("excluded: %+v", pv.Excluded)
		}
	})
	t.Run("no edge suite", func(t *testing.T) {
		tune, _, gen := copyFixture(t)
		err := Run(Options{Results: []string{tune}, Generated: gen, Out: filepath.Join(t.TempDir(), "x"), Name: "tg"})
		if err == nil || !strings.Contains(err.Error(), "never verified on the edge suite") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("one edge shape missing", func(t *testing.T) {
		tune, verify, gen := copyFixture(t)
		editRecords(t, filepath.Join(verify, "results.jsonl"), func(r *results.Record) bool {
			return !(r.Variant == "micro1d_t32_r4" && r.Shape.M == 1 && r.Shape.N == 1)
		})
		p, _, err := Prepare(Options{Results: []string{tune, verify}, Generated: gen, Name: "tg"})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range p.Variants {
			if c.V.Name == "micro1d_t32_r4" {
				t.Error("a variant with an unverified edge shape was exported")
			}
		}
	})
	t.Run("stale source", func(t *testing.T) {
		tune, verify, gen := copyFixture(t)
		f := filepath.Join(gen, "cuda", "micro1d_t64_r16.cu")
		b, _ := os.ReadFile(f)
		if err := os.WriteFile(f, append(b, []byte("// edited\n")...), 0o644); err != nil {
			t.Fatal(err)
		}
		err := Run(Options{Results: []string{tune, verify}, Generated: gen, Out: filepath.Join(t.TempDir(), "x"), Name: "tg"})
		if err == nil || !strings.Contains(err.Error(), "stale generated directory") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("resources differ from the manifest", func(t *testing.T) {
		tune, verify, gen := copyFixture(t)
		editRecords(t, filepath.Join(tune, "results.jsonl"), func(r *results.Record) bool {
			if r.Variant == "micro1d_t32_r8" {
				r.Resources.Registers++
			}
			return true
		})
		p, _, err := Prepare(Options{Results: []string{tune, verify}, Generated: gen, Name: "tg"})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range p.Excluded {
			if e.Variant == "micro1d_t32_r8" && strings.Contains(e.Reason, "stale") {
				return
			}
		}
		t.Errorf("micro1d_t32_r8 not excluded as stale: %+v", p.Excluded)
	})
}

func TestValidation(t *testing.T) {
	for _, c := range []struct {
		name, pkg string
		ok        bool
	}{
		{"tg", "example.com/x/tgsgemm", true},
		{"my_sgemm", "", true},
		{"1abc", "x", false},
		{"a-b", "x", false},
		{"../evil", "x", false},
		{"_tg", "x", false},
		{"class", "x", false},
		{"tg", "../up/pkg", false},
		{"tg", "/abs/pkg", false},
		{"tg", "example.com/x/my-pkg", false},
		{"tg", "example.com/x/func", false},
		{"tg", "example.com/x/main", false},
		{"tg", "example.com//x", false},
		{"tg", "example.com/x/", false},
	} {
		err := ValidName(c.name)
		if err == nil && c.pkg != "" {
			_, err = PackageName(c.pkg)
		}
		if (err == nil) != c.ok {
			t.Errorf("name %q package %q: err = %v, want ok=%v", c.name, c.pkg, err, c.ok)
		}
	}
	if err := Run(Options{Results: fixtureResults, Generated: "testdata/generated", Out: "..", Name: "tg"}); err == nil {
		t.Error("--out .. accepted")
	}
	o := fixtureOptions(filepath.Join(t.TempDir(), "x"))
	o.Shapes = nil
	o.Name = "bad name"
	if err := Run(o); err == nil {
		t.Error("bad name accepted")
	}
}

// TestGzippedResults exports from results.jsonl.gz (how committed evidence keeps its records) and
// gets the same plan and provenance hashes as from the plain file.
func TestGzippedResults(t *testing.T) {
	tune, verify, gen := copyFixture(t)
	plain := filepath.Join(tune, "results.jsonl")
	b := mustRead(t, plain)
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plain+".gz", z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(plain); err != nil {
		t.Fatal(err)
	}
	p, files, err := Prepare(Options{Results: []string{tune, verify}, Generated: gen, Name: "tg"})
	if err != nil {
		t.Fatal(err)
	}
	_, want := exportFixture(t)
	if got, want := planChoices(p), planChoices(want); got != want {
		t.Errorf("dispatch from the gzipped results:\n%s\nwant:\n%s", got, want)
	}
	var pv Provenance
	if err := json.Unmarshal(files["tg.json"], &pv); err != nil {
		t.Fatal(err)
	}
	if len(pv.Inputs) == 0 || pv.Inputs[0].ResultsSHA256 != sha(b) {
		t.Errorf("inputs %+v: want the uncompressed results' hash %s first", pv.Inputs, sha(b))
	}
}

// TestTableRowsAreTrigraphSafe: a table row holding "??<", "??>" or "??=" (kernel indices 15 and
// 12, 14, 13), and one holding every index character an export may use ('0' to '~', the backslash
// at index 44 among them), read back unchanged in the header even under a compiler that replaces
// trigraphs (ISO C++14: g++ -std=c++14).
func TestTableRowsAreTrigraphSafe(t *testing.T) {
	for _, row := range []string{"0??<1??>2??=3?4??", func() string {
		var b strings.Builder
		for i := range maxRuleKernels {
			b.WriteByte(byte('0' + i))
		}
		if b.String()[maxRuleKernels-1] != '~' {
			t.Fatalf("the index characters end at %q, want '~'", b.String()[maxRuleKernels-1])
		}
		return b.String()
	}()} {
		rowReadsBack(t, row)
	}
}

func rowReadsBack(t *testing.T, row string) {
	cxx := "g++-11"
	if _, err := exec.LookPath(cxx); err != nil {
		cxx = needTool(t, "g++")
	}
	dir := t.TempDir()
	src := "#include <stdio.h>\nstatic const char row[] = \"" + cString(row) + "\";\nint main() { fputs(row, stdout); return 0; }\n"
	if err := os.WriteFile(filepath.Join(dir, "row.cpp"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command(cxx, "-std=c++14", "-trigraphs", "-o", filepath.Join(dir, "row"), filepath.Join(dir, "row.cpp")).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cxx, err, b)
	}
	b, err := exec.Command(filepath.Join(dir, "row")).Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != row {
		t.Errorf("the header's row %q reads back as %q", cString(row), b)
	}
}
