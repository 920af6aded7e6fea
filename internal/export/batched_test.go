package export

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"tilegen/internal/orchestrator"
	"tilegen/internal/results"
	"tilegen/internal/variant"
)

// batchTwins are the strided-batched kernels the batched fixture adds (their manifest entries,
// source and PTX as the repository's generator wrote them), each with the one-product kernel of
// the fixture whose records it takes over: synthetic times, for testing the batched dispatch only.
var batchTwins = map[string]string{
	"micro1d_t32_r8_sb":    "micro1d_t32_r8",
	"micro1d_t64_r8_sb":    "micro1d_t64_r8",
	"micro1d_t32_r8_tn_sb": "micro1d_t32_r8",
}

// batchFixtureShapes are the fixture's shapes that become batch classes, as batches of 8 (NN and
// TN), and of 64 for the first (NN only).
var batchFixtureShapes = [][3]int{{224, 256, 192}, {1024, 1024, 1024}, {4096, 4096, 32}}

// batchFixture is copyFixture plus batchTwins: each twin's edge suite is its one-product kernel's,
// as batches of orchestrator.EdgeBatch under the twin's op, and its tune records are the
// one-product kernel's on batchFixtureShapes as batches; cuBLAS's records likewise.
func batchFixture(t *testing.T) (tune, verify, gen string) {
	t.Helper()
	tune, verify, gen = copyFixture(t)
	twins := map[string][]variant.Variant{} // one-product kernel -> its batched twins
	for _, v := range addRepoVariants(t, gen, func(v variant.Variant) bool { _, ok := batchTwins[v.Name]; return ok }) {
		base := batchTwins[v.Name]
		twins[base] = append(twins[base], v)
	}
	if n := len(twins["micro1d_t32_r8"]) + len(twins["micro1d_t64_r8"]); n != len(batchTwins) {
		t.Fatalf("the repository's manifest lacks batched twins: %d of %d", n, len(batchTwins))
	}
	batches := func(s [3]int, op variant.Op) []int {
		if s == batchFixtureShapes[0] && op == variant.OpNN {
			return []int{8, 64}
		}
		return []int{8}
	}
	for _, d := range []string{tune, verify} {
		path := filepath.Join(d, "results.jsonl")
		var extra []results.Record
		editRecords(t, path, func(r *results.Record) bool {
			dims := [3]int{r.Shape.M, r.Shape.N, r.Shape.K}
			batched := false
			for _, s := range batchFixtureShapes {
				batched = batched || s == dims
			}
			if r.Kind == results.KindCublas && batched {
				for _, op := range []variant.Op{variant.OpNN, variant.OpTN} {
					for _, n := range batches(dims, op) {
						c := *r
						c.Key += fmt.Sprintf("-%s-b%d", op, n)
						c.Shape.Op, c.Shape.Batch = op, n
						extra = append(extra, c)
					}
				}
			}
			for _, tw := range twins[r.Variant] {
				if r.Kind == results.KindTune && !batched {
					continue
				}
				ns := []int{orchestrator.EdgeBatch}
				if r.Kind == results.KindTune {
					ns = batches(dims, tw.Op)
				}
				for _, n := range ns {
					c := *r
					c.Key += fmt.Sprintf("-%s-b%d", tw.Name, n)
					c.Shape.Op, c.Shape.Batch = tw.Op, n
					c.Variant, c.Params, c.SourceHash, c.PTXHash, c.Resources = tw.Name, tw.ParamString(), tw.SourceHash, tw.PTXHash, tw.Resources
					extra = append(extra, c)
				}
			}
			return true
		})
		appendRecords(t, path, extra)
	}
	return tune, verify, gen
}

func batchPlan(t *testing.T) (string, *Plan) {
	t.Helper()
	tune, verify, gen := batchFixture(t)
	return fixturePlan(t, tune, verify, gen)
}

// batchProbes are strided-batched problems (row-major op or column-major transa/transb, m, n, k,
// lda, ldb, ldc, strideA, strideB, strideC, batch) whose dispatch the Plan, the header and the Go
// package must agree on, refusals included.
var batchProbes = []struct {
	kind                             string // "op" (row-major) or "blas" (column-major)
	a, b                             byte
	m, n, k, lda, ldb, ldc           int
	strideA, strideB, strideC, batch int
}{
	{"op", 'N', 'N', 224, 256, 192, 192, 256, 256, 224 * 192, 192 * 256, 224 * 256, 8},
	{"op", 'N', 'N', 224, 256, 192, 192, 256, 256, 224 * 192, 0, 224 * 256, 64}, // broadcast B
	{"op", 'N', 'N', 1000, 1000, 1000, 1000, 1000, 1000, 1 << 20, 1 << 20, 1 << 20, 8},
	{"op", 'N', 'N', 4096, 4096, 32, 32, 4096, 4096, 4096 * 32, 32 * 4096, 4096 * 4096, 8},
	{"op", 'N', 'N', 64, 64, 64, 64, 64, 64, 4096, 4096, 4096, 1024},
	{"op", 'T', 'N', 224, 256, 192, 224, 256, 256, 224 * 192, 192 * 256, 224 * 256, 8},
	{"op", 'T', 'N', 4096, 4096, 32, 4096, 4096, 4096, 4096 * 32, 32 * 4096, 4096 * 4096, 2},
	{"op", 'N', 'T', 64, 64, 64, 64, 64, 64, 4096, 4096, 4096, 8},       // no batched NT kernel
	{"op", 'N', 'N', 64, 64, 64, 64, 64, 64, 4096, 4096, 4096, 0},       // batch 0
	{"op", 'N', 'N', 64, 64, 64, 64, 64, 64, 4096, 4096, 4096, 70000},   // batch past grid z
	{"op", 'N', 'N', 64, 64, 64, 64, 64, 64, -1, 4096, 4096, 8},         // negative stride
	{"op", 'N', 'N', 64, 64, 64, 64, 64, 64, 4096, 4096, 64*63 + 63, 8}, // C products overlap
	{"op", 'N', 'N', 64, 64, 64, 64, 64, 64, 4096, 4096, 0, 1},          // one product: strideC free
	// column-major (N,T) is row-major TN on the swapped problem; (N,N) NN; (T,N) NT (none here).
	{"blas", 'N', 'T', 256, 224, 192, 256, 224, 256, 256 * 192, 224 * 192, 256 * 224, 8},
	{"blas", 'N', 'N', 256, 224, 192, 256, 192, 256, 256 * 192, 192 * 224, 256 * 224, 8},
	{"blas", 'T', 'N', 256, 224, 192, 192, 192, 256, 256 * 192, 192 * 224, 256 * 224, 8},
	{"blas", 'N', 'T', 256, 224, 192, 255, 224, 256, 256 * 192, 224 * 192, 256 * 224, 8}, // lda < m
	{"blas", 'Q', 'T', 256, 224, 192, 256, 224, 256, 256 * 192, 224 * 192, 256 * 224, 8},
}

// batchPlanChoices renders what the Plan chooses for batchProbes, one line each.
func batchPlanChoices(p *Plan) string {
	var b strings.Builder
	for _, q := range batchProbes {
		var i int
		var err error
		if q.kind == "op" {
			var op variant.Op
			op, err = variant.ColumnMajor(q.b, q.a) // row-major (opa, opb) is column-major (opb, opa)
			if err == nil {
				i, err = p.ChooseBatched(op, q.m, q.n, q.k, q.lda, q.ldb, q.ldc, int64(q.strideA), int64(q.strideB), int64(q.strideC), q.batch)
			}
		} else {
			i, err = p.ChooseBatchedColumnMajor(q.a, q.b, q.m, q.n, q.k, q.lda, q.ldb, q.ldc, int64(q.strideA), int64(q.strideB), int64(q.strideC), q.batch)
		}
		name := "-"
		if err == nil {
			name = p.Variants[i].V.Name
		}
		fmt.Fprintf(&b, "%s %c%c %dx%dx%d b%d %s\n", q.kind, q.a, q.b, q.m, q.n, q.k, q.batch, name)
	}
	return b.String()
}

func TestBatchedDispatch(t *testing.T) {
	_, p := batchPlan(t)
	if len(p.Batched) != 2 || p.Batched[0].Op != variant.OpNN || p.Batched[1].Op != variant.OpTN {
		t.Fatalf("batched rules %+v, want NN and TN", p.Batched)
	}
	for _, r := range p.Batched {
		if len(r.Classes) == 0 {
			t.Fatalf("%s: no batch classes", r.Op)
		}
		for _, c := range r.Classes {
			v := p.Variants[c.Variant].V
			if !v.Batched || v.Op != r.Op || c.Shape.Batch < 1 || c.Shape.Op != r.Op {
				t.Errorf("%s class %s launches %s (op %s, batched %v)", r.Op, results.ShapeString(c.Shape), v.Name, v.Op, v.Batched)
			}
			// A class's own problem goes to its own kernel.
			lda, ldb, ldc := c.Shape.Dense()
			i, err := p.ChooseBatched(r.Op, c.Shape.M, c.Shape.N, c.Shape.K, lda, ldb, ldc, int64(c.Shape.M*c.Shape.K), int64(c.Shape.K*c.Shape.N),
				int64(c.Shape.M*c.Shape.N), c.Shape.Batch)
			if err != nil || i != c.Variant {
				t.Errorf("class %s: chose %d (%v), want %d", results.ShapeString(c.Shape), i, err, c.Variant)
			}
		}
		if d := p.Variants[r.Default].V; !d.Batched || d.Op != r.Op {
			t.Errorf("%s default %s", r.Op, d.Name)
		}
	}
	// The one-product rules never launch a batched kernel, and the batched entry never a one-product one.
	for _, r := range p.Rules {
		for _, j := range r.Rule.Used() {
			if p.Variants[j].V.Batched {
				t.Errorf("%s rule uses the batched %s", r.Op, p.Variants[j].V.Name)
			}
		}
	}
	seenBatched := false
	for _, c := range p.Variants {
		if seenBatched && !c.V.Batched {
			t.Errorf("one-product %s after a batched kernel (the rules' tables index the one-product kernels first)", c.V.Name)
		}
		seenBatched = seenBatched || c.V.Batched
	}
	got := batchPlanChoices(p)
	for _, refused := range []string{"op NT 64x64x64 b8 -", "op NN 64x64x64 b0 -", "op NN 64x64x64 b70000 -", "blas NT 256x224x192 b8 -", "blas QT"} {
		if !strings.Contains(got, refused) {
			t.Errorf("not refused: %q\n%s", refused, got)
		}
	}
	if _, err := p.ChooseBatched(variant.OpNT, 64, 64, 64, 64, 64, 64, 4096, 4096, 4096, 8); err == nil ||
		!strings.Contains(err.Error(), "no strided-batched NT kernel in this export (it has batched NN, TN)") {
		t.Errorf("NT: %v, want a clear refusal", err)
	}
	if _, err := p.ChooseBatched(variant.OpNN, 64, 64, 64, 64, 64, 64, 4096, 4096, 64*63+63, 8); err == nil || !strings.Contains(err.Error(), "overlaps") {
		t.Errorf("overlapping C: %v", err)
	}
	// Column-major (N, T), m×n×k = 256×224×192, is row-major TN 224×256×192 on B and A.
	i, err := p.ChooseBatched(variant.OpTN, 224, 256, 192, 224, 256, 256, 224*192, 192*256, 224*256, 8)
	j, err2 := p.ChooseBatchedColumnMajor('N', 'T', 256, 224, 192, 256, 224, 256, 256*192, 224*192, 256*224, 8)
	if err != nil || err2 != nil || i != j || p.Variants[i].V.Op != variant.OpTN {
		t.Errorf("column-major NT: %d %v, row-major TN: %d %v", j, err2, i, err)
	}
}

// TestBatchedDispatchAgrees: the header's and the Go package's strided-batched entries choose what
// the Plan chooses, refusals included, on this host without a GPU.
func TestBatchedDispatchAgrees(t *testing.T) {
	nvcc := needTool(t, "nvcc")
	out, p := batchPlan(t)
	want := batchPlanChoices(p)

	dir := t.TempDir()
	var src strings.Builder
	src.WriteString("#include \"tg.cuh\"\n#include <stdio.h>\n\nint main() {\n    const float* x = (const float*)256;\n")
	for _, q := range batchProbes {
		fn := "tg_variant_strided_batched_op"
		if q.kind == "blas" {
			fn = "tg_variant_strided_batched"
		}
		fmt.Fprintf(&src, "    { const char* v = %s('%c', '%c', %d, %d, %d, %d, %dLL, %d, %dLL, %d, %dLL, %d, x, x, x); printf(\"%s %c%c %dx%dx%d b%d %%s\\n\", v ? v : \"-\"); }\n",
			fn, q.a, q.b, q.m, q.n, q.k, q.lda, q.strideA, q.ldb, q.strideB, q.ldc, q.strideC, q.batch, q.kind, q.a, q.b, q.m, q.n, q.k, q.batch)
	}
	src.WriteString("    return 0;\n}\n")
	if err := os.WriteFile(filepath.Join(dir, "probe.cu"), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-arch=sm_90", "-Xcompiler", "-Wall,-Werror", "-I", out, "-o", filepath.Join(dir, "probe"), filepath.Join(dir, "probe.cu")}
	if _, err := exec.LookPath("g++-11"); err == nil {
		args = append([]string{"-ccbin", "g++-11"}, args...)
	}
	if b, err := exec.Command(nvcc, args...).CombinedOutput(); err != nil {
		t.Fatalf("nvcc: %v\n%s", err, b)
	}
	b, err := exec.Command(filepath.Join(dir, "probe")).CombinedOutput()
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, b)
	}
	if string(b) != want {
		t.Errorf("header:\n%s\nPlan:\n%s", b, want)
	}

	mod, gocmd := goModule(t, out)
	var g strings.Builder
	g.WriteString("package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/consumer/tgsgemm\"\n)\n\nfunc main() {\n")
	g.WriteString("\tops := map[string]tgsgemm.Op{\"NN\": tgsgemm.OpNN, \"NT\": tgsgemm.OpNT, \"TN\": tgsgemm.OpTN, \"TT\": tgsgemm.OpTT}\n\t_ = ops\n")
	for _, q := range batchProbes {
		if q.kind == "op" {
			fmt.Fprintf(&g, "\t{\n\t\tname := \"-\"\n\t\tif o, ok := ops[\"%c%c\"]; ok {\n\t\t\tif v, err := tgsgemm.ChooseStridedBatchedOp(o, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d); err == nil {\n\t\t\t\tname = v\n\t\t\t}\n\t\t}\n"+
				"\t\tfmt.Printf(\"op %c%c %dx%dx%d b%d %%s\\n\", name)\n\t}\n", q.a, q.b, q.m, q.n, q.k, q.lda, q.strideA, q.ldb, q.strideB, q.ldc, q.strideC, q.batch,
				q.a, q.b, q.m, q.n, q.k, q.batch)
		} else {
			fmt.Fprintf(&g, "\t{\n\t\tname := \"-\"\n\t\tif v, err := tgsgemm.ChooseStridedBatched('%c', '%c', %d, %d, %d, %d, %d, %d, %d, %d, %d, %d); err == nil {\n\t\t\tname = v\n\t\t}\n"+
				"\t\tfmt.Printf(\"blas %c%c %dx%dx%d b%d %%s\\n\", name)\n\t}\n", q.a, q.b, q.m, q.n, q.k, q.lda, q.strideA, q.ldb, q.strideB, q.ldc, q.strideC, q.batch,
				q.a, q.b, q.m, q.n, q.k, q.batch)
		}
	}
	g.WriteString("\tfor _, c := range tgsgemm.BatchClasses() {\n\t\tfmt.Printf(\"class %s %dx%dx%d b%d %s\\n\", c.Op, c.M, c.N, c.K, c.Batch, c.Variant)\n\t}\n}\n")
	bin := buildMain(t, mod, gocmd, g.String(), "CGO_ENABLED=0")
	var classes strings.Builder
	for _, r := range p.Batched {
		for _, c := range r.Classes {
			fmt.Fprintf(&classes, "class %s %dx%dx%d b%d %s\n", r.Op, c.Shape.M, c.Shape.N, c.Shape.K, c.Shape.Batch, p.Variants[c.Variant].V.Name)
		}
	}
	if got := runConsumer(t, bin); got != want+classes.String() {
		t.Errorf("Go package:\n%s\nPlan:\n%s%s", got, want, classes.String())
	}
}
