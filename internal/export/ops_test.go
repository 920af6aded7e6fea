package export

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"tilegen/internal/results"
	"tilegen/internal/variant"
)

// opFixture is copyFixture plus two TN variants (micro1d_t32_r4_tn and micro1d_t64_r16_tn, their
// manifest entries, source and PTX as the repository's generator wrote them) whose records are
// their NN twins' records under op TN, cuBLAS's NN records likewise: synthetic times, for testing
// the dispatch per op only.
func opFixture(t *testing.T) (tune, verify, gen string) {
	t.Helper()
	tune, verify, gen = copyFixture(t)
	twins := map[string]variant.Variant{}
	for _, v := range addRepoVariants(t, gen, func(v variant.Variant) bool {
		return v.Name == "micro1d_t32_r4_tn" || v.Name == "micro1d_t64_r16_tn"
	}) {
		twins[strings.TrimSuffix(v.Name, "_tn")] = v
	}
	if len(twins) != 2 {
		t.Fatalf("the repository's manifest lacks the TN twins: %v", twins)
	}
	for _, d := range []string{tune, verify} {
		path := filepath.Join(d, "results.jsonl")
		var extra []results.Record
		editRecords(t, path, func(r *results.Record) bool {
			tw, ok := twins[r.Variant]
			if r.Kind == results.KindCublas || ok {
				c := *r
				c.Key += "-tn"
				c.Shape.Op = variant.OpTN
				if ok {
					c.Variant, c.Params, c.SourceHash, c.PTXHash, c.Resources = tw.Name, tw.ParamString(), tw.SourceHash, tw.PTXHash, tw.Resources
				}
				extra = append(extra, c)
			}
			return true
		})
		appendRecords(t, path, extra)
	}
	return tune, verify, gen
}

func opPlan(t *testing.T) (string, *Plan) {
	t.Helper()
	tune, verify, gen := opFixture(t)
	return fixturePlan(t, tune, verify, gen)
}

// opProbes are (op or column-major transa/transb, m, n, k, lda, ldb, ldc) problems whose dispatch
// the Plan, the header and the Go package must agree on.
var opProbes = []struct {
	kind               string // "op" (row-major) or "blas" (column-major)
	a, b               byte
	m, n, k, x, y, ldc int
}{
	{"op", 'N', 'N', 224, 256, 192, 192, 256, 256}, {"op", 'T', 'N', 224, 256, 192, 224, 256, 256},
	{"op", 'T', 'N', 4096, 4096, 4096, 4096, 4096, 4096}, {"op", 'T', 'N', 224, 256, 192, 192, 256, 256},
	{"op", 'N', 'T', 224, 256, 192, 192, 192, 256}, {"op", 'T', 'T', 64, 64, 64, 64, 64, 64},
	{"op", 'X', 'N', 64, 64, 64, 64, 64, 64},
	// column-major (N,T) is row-major TN on the swapped problem; (N,N) is NN; (T,N) is NT (none here).
	{"blas", 'N', 'T', 256, 224, 192, 256, 224, 256}, {"blas", 'N', 'T', 4096, 4096, 4096, 4096, 4096, 4096},
	{"blas", 'N', 'N', 256, 224, 192, 256, 192, 256}, {"blas", 'T', 'N', 256, 224, 192, 192, 192, 256},
	{"blas", 'N', 'T', 256, 224, 192, 255, 224, 256}, {"blas", 'N', 'T', 256, 224, 192, 256, 224, 255},
	{"blas", 'Q', 'T', 256, 224, 192, 256, 224, 256},
	// vectors (variant.Op.Restate): TN with a packed A column is an NN row; TN M×1 with packed B and C
	// is NN 1×M; NT 1×N and M×1 run NN's kernels though the export has no NT kernel; a strided
	// column stays TN; NT ldb < K stays refused.
	{"op", 'T', 'N', 1, 256, 192, 1, 256, 256}, {"op", 'T', 'N', 1, 256, 192, 3, 256, 256},
	{"op", 'T', 'N', 224, 1, 192, 224, 1, 1}, {"op", 'N', 'T', 1, 256, 192, 192, 192, 256},
	{"op", 'N', 'T', 224, 1, 192, 192, 192, 1}, {"op", 'N', 'T', 1, 256, 192, 192, 100, 256},
	{"blas", 'T', 'N', 1, 224, 192, 192, 192, 1}, {"blas", 'N', 'T', 224, 1, 192, 224, 1, 224},
}

// opPlanChoices renders what the Plan chooses for opProbes, one line each.
func opPlanChoices(p *Plan) string {
	var b strings.Builder
	for _, q := range opProbes {
		var i int
		var err error
		if q.kind == "op" {
			var op variant.Op
			op, err = variant.ColumnMajor(q.b, q.a) // row-major (opa, opb) is column-major (opb, opa)
			if err == nil {
				i, err = p.Choose(op, q.m, q.n, q.k, q.x, q.y, q.ldc)
			}
		} else {
			i, err = p.ChooseColumnMajor(q.a, q.b, q.m, q.n, q.k, q.x, q.y, q.ldc)
		}
		name := "-"
		if err == nil {
			name = p.Variants[i].V.Name
		}
		fmt.Fprintf(&b, "%s %c%c %dx%dx%d %s\n", q.kind, q.a, q.b, q.m, q.n, q.k, name)
	}
	return b.String()
}

func TestOpsDispatch(t *testing.T) {
	_, p := opPlan(t)
	if d := p.DefaultOf(variant.OpTN); d < 0 || p.Variants[d].V.Op != variant.OpTN {
		t.Fatalf("TN default %d", d)
	}
	for _, op := range []variant.Op{variant.OpNT, variant.OpTT} {
		if p.DefaultOf(op) != -1 {
			t.Errorf("%s has a default without a class", op)
		}
		if _, err := p.Choose(op, 64, 64, 64, 64, 64, 64); err == nil || !strings.Contains(err.Error(), "no "+op.String()+" kernel in this export (it has NN, TN)") {
			t.Errorf("%s: %v, want a clear refusal", op, err)
		}
	}
	for _, c := range p.Classes {
		if v := p.Variants[c.Variant].V; v.Op != c.Shape.Op {
			t.Errorf("class %s got %s (%s)", results.ShapeString(c.Shape), v.Name, v.Op)
		}
	}
	// A TN problem goes to a TN kernel, with TN's leading-dimension rules (lda >= M).
	i, err := p.Choose(variant.OpTN, 224, 256, 192, 224, 256, 256)
	if err != nil || p.Variants[i].V.Op != variant.OpTN {
		t.Errorf("TN 224x256x192: %v %v", i, err)
	}
	if _, err := p.Choose(variant.OpTN, 224, 256, 192, 192, 256, 256); err == nil || !strings.Contains(err.Error(), "too small for TN") {
		t.Errorf("TN with lda = K < M: %v", err)
	}
	// Column-major (N, T), m×n×k = 256×224×192, is row-major TN 224×256×192 on B and A.
	j, err := p.ChooseColumnMajor('N', 'T', 256, 224, 192, 256, 224, 256)
	if err != nil || j != i {
		t.Errorf("column-major NT: %v %v, want %d", j, err, i)
	}
	for _, bad := range [][3]int{{255, 224, 256}, {256, 223, 256}, {256, 224, 255}} {
		if _, err := p.ChooseColumnMajor('N', 'T', 256, 224, 192, bad[0], bad[1], bad[2]); err == nil || !strings.Contains(err.Error(), "too small for transa=N transb=T") {
			t.Errorf("column-major lda/ldb/ldc %v: %v, want cublasSgemm's leading-dimension rule", bad, err)
		}
	}
	if !strings.Contains(opPlanChoices(p), "op XN 64x64x64 -\n") {
		t.Error("a bad op was not refused")
	}
	// Vector problems run as NN where variant.Op.Restate restates them, on NN's kernel for the
	// restated problem; the others keep their op (or its refusal).
	for _, c := range []struct {
		op                     variant.Op
		m, n, k, lda, ldb, ldc int
		want                   variant.Op // "-" refused
	}{
		{variant.OpTN, 1, 256, 192, 1, 256, 256, variant.OpNN},
		{variant.OpTN, 1, 256, 192, 3, 256, 256, variant.OpTN},
		{variant.OpTN, 224, 1, 192, 224, 1, 1, variant.OpNN},
		{variant.OpNT, 1, 256, 192, 192, 192, 256, variant.OpNN},
		{variant.OpNT, 224, 1, 192, 192, 192, 1, variant.OpNN},
		{variant.OpNT, 1, 256, 192, 192, 100, 256, "-"},
		{variant.OpNT, 2, 256, 192, 192, 192, 256, "-"},
	} {
		i, r, err := p.ChooseRestated(c.op, c.m, c.n, c.k, c.lda, c.ldb, c.ldc)
		if c.want == "-" {
			if err == nil {
				t.Errorf("%s %dx%dx%d: launched %s, want a refusal", c.op, c.m, c.n, c.k, p.Variants[i].V.Name)
			}
			continue
		}
		if err != nil || p.Variants[i].V.Op != c.want || r.Op != c.want {
			t.Errorf("%s %dx%dx%d lda=%d ldb=%d ldc=%d: %v %+v %v, want an %s kernel", c.op, c.m, c.n, c.k, c.lda, c.ldb, c.ldc, i, r, err, c.want)
			continue
		}
		if j, err := p.chooseOp(r.Op, r.M, r.N, r.K, r.LDA, r.LDB, r.LDC); r.Op != c.op && (err != nil || j != i) {
			t.Errorf("%s %dx%dx%d: %d, but the restated %+v chooses %d (%v)", c.op, c.m, c.n, c.k, i, r, j, err)
		}
	}
}

// TestOpsDispatchAgrees: the header's and the Go package's row-major-op and column-major entries
// choose what the Plan chooses, on this host without a GPU.
func TestOpsDispatchAgrees(t *testing.T) {
	nvcc := needTool(t, "nvcc")
	out, p := opPlan(t)
	want := opPlanChoices(p)

	dir := t.TempDir()
	var src strings.Builder
	src.WriteString("#include \"tg.cuh\"\n#include <stdio.h>\n\nint main() {\n    const float* x = (const float*)256;\n")
	for _, q := range opProbes {
		fn := "tg_variant_op"
		if q.kind == "blas" {
			fn = "tg_variant_blas"
		}
		fmt.Fprintf(&src, "    { const char* v = %s('%c', '%c', %d, %d, %d, %d, %d, %d, x, x, x); printf(\"%s %c%c %dx%dx%d %%s\\n\", v ? v : \"-\"); }\n",
			fn, q.a, q.b, q.m, q.n, q.k, q.x, q.y, q.ldc, q.kind, q.a, q.b, q.m, q.n, q.k)
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
	for _, q := range opProbes {
		if q.kind == "op" {
			fmt.Fprintf(&g, "\t{\n\t\top := map[string]tgsgemm.Op{\"NN\": tgsgemm.OpNN, \"NT\": tgsgemm.OpNT, \"TN\": tgsgemm.OpTN, \"TT\": tgsgemm.OpTT}\n"+
				"\t\tname := \"-\"\n\t\tif o, ok := op[\"%c%c\"]; ok {\n\t\t\tif v, err := tgsgemm.ChooseOp(o, %d, %d, %d, %d, %d, %d); err == nil {\n\t\t\t\tname = v\n\t\t\t}\n\t\t}\n"+
				"\t\tfmt.Printf(\"op %c%c %dx%dx%d %%s\\n\", name)\n\t}\n", q.a, q.b, q.m, q.n, q.k, q.x, q.y, q.ldc, q.a, q.b, q.m, q.n, q.k)
		} else {
			fmt.Fprintf(&g, "\t{\n\t\tname := \"-\"\n\t\tif v, err := tgsgemm.ChooseBLAS('%c', '%c', %d, %d, %d, %d, %d, %d); err == nil {\n\t\t\tname = v\n\t\t}\n"+
				"\t\tfmt.Printf(\"blas %c%c %dx%dx%d %%s\\n\", name)\n\t}\n", q.a, q.b, q.m, q.n, q.k, q.x, q.y, q.ldc, q.a, q.b, q.m, q.n, q.k)
		}
	}
	g.WriteString("}\n")
	bin := buildMain(t, mod, gocmd, g.String(), "CGO_ENABLED=0")
	if got := runConsumer(t, bin); got != want {
		t.Errorf("Go package:\n%s\nPlan:\n%s", got, want)
	}
}
