package export

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"tilegen/internal/variant"
)

// restateProbes are vector problems (M or N of 1) for opFixture's export, which has NN and TN
// kernels: some restated under NN (variant.Op.Restate), some kept under their op, some refused.
var restateProbes = []struct {
	op                     variant.Op
	m, n, k, lda, ldb, ldc int
}{
	{variant.OpTN, 1, 256, 192, 1, 256, 256},   // a packed A column: an NN row
	{variant.OpTN, 1, 256, 192, 3, 256, 256},   // a strided A column: TN's kernel
	{variant.OpTN, 224, 1, 192, 224, 1, 1},     // packed B and C: NN 1×224 on B and A
	{variant.OpNT, 1, 256, 192, 192, 192, 256}, // NN 256×1 on B and A (no NT kernel here)
	{variant.OpNT, 224, 1, 192, 192, 192, 1},   // B a column with stride 1
	{variant.OpTT, 1, 300, 64, 5, 64, 300},     // NN 300×1 on B and A, A's column stride 5 as ldb
	{variant.OpNT, 1, 256, 192, 192, 100, 256}, // ldb < K: refused
	{variant.OpNT, 2, 256, 192, 192, 192, 256}, // not a vector, no NT kernel: refused
	{variant.OpNN, 1, 256, 192, 192, 256, 256}, // NN as it is
}

// restateWant is what a launch of probe q must get (the restated problem, with A and B exchanged
// when it swaps) in the line format both tests print: "<variant> M N K A lda B ldb ldc", or
// "refused".
func restateWant(t *testing.T, p *Plan, a, b int) string {
	t.Helper()
	var w strings.Builder
	for _, q := range restateProbes {
		i, r, err := p.ChooseRestated(q.op, q.m, q.n, q.k, q.lda, q.ldb, q.ldc)
		if err != nil {
			w.WriteString("refused\n")
			continue
		}
		x, y := a, b
		if r.Swap {
			x, y = b, a
		}
		fmt.Fprintf(&w, "%s %d %d %d %x %d %x %d %d\n", p.Variants[i].V.Name, r.M, r.N, r.K, x, r.LDA, y, r.LDB, r.LDC)
	}
	return w.String()
}

// TestRestatedLaunches: the header's row-major op entry and the Go package's SgemmOp launch a vector
// problem as Plan.ChooseRestated says: its kernel, the restated M, N, K and leading dimensions, and
// A and B exchanged where the restatement swaps them; the others as given, or refused. The header
// runs with its launches recorded (probeShim), the package against fakeCUDA; no GPU.
func TestRestatedLaunches(t *testing.T) {
	nvcc := needTool(t, "nvcc")
	out, p := opPlan(t)
	const a, b = 0x100, 0x200
	want := restateWant(t, p, a, b)
	if !strings.Contains(want, " 256 1 192 200 192 100 1 1\n") || strings.Count(want, "refused") != 2 {
		t.Fatalf("the probes do not exercise a swapped restatement and two refusals:\n%s", want)
	}

	// The header.
	var src strings.Builder
	src.WriteString(probeShim)
	src.WriteString("#include \"tg.cuh\"\n\n")
	src.WriteString(probeName)
	src.WriteString("int main()\n{\n    probe_args = 1;\n")
	for _, q := range restateProbes {
		opa, opb := "N", "N"
		if q.op.TransA() {
			opa = "T"
		}
		if q.op.TransB() {
			opb = "T"
		}
		fmt.Fprintf(&src, "    printf(\"probe\\n\");\n    if (tg_sgemm_op('%s', '%s', %d, %d, %d, 1.0f, (const float*)%d, %d, (const float*)%d, %d, 0.0f, (float*)1024, %d, 0) != cudaSuccess)\n        printf(\"refused\\n\");\n",
			opa, opb, q.m, q.n, q.k, a, q.lda, b, q.ldb, q.ldc)
	}
	src.WriteString("    return 0;\n}\n")
	launch := regexp.MustCompile(`^  dev0 (\d+)x(\d+)x(\d+) (\S+) `)
	args := regexp.MustCompile(`^  args A=([0-9a-f]+) lda=(\d+) B=([0-9a-f]+) ldb=(\d+) ldc=(\d+)$`)
	var got strings.Builder
	var pending string
	for _, l := range strings.Split(runProbe(t, nvcc, out, src.String()), "\n") {
		if m := launch.FindStringSubmatch(l); m != nil {
			pending = fmt.Sprintf("%s %s %s %s", m[4], m[1], m[2], m[3])
		} else if m := args.FindStringSubmatch(l); m != nil {
			fmt.Fprintf(&got, "%s %s %s %s %s %s\n", pending, m[1], m[2], m[3], m[4], m[5])
		} else if l == "refused" {
			got.WriteString("refused\n")
		}
	}
	if got.String() != want {
		t.Errorf("header launches:\n%s\nwant (Plan.ChooseRestated):\n%s", got.String(), want)
	}

	// The Go package.
	lib := fakeCUDALib(t)
	mod, gocmd := goModule(t, out)
	var g strings.Builder
	g.WriteString("package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/consumer/tgsgemm\"\n)\n\nfunc main() {\n" +
		"\tks, err := tgsgemm.Load()\n\tif err != nil {\n\t\tpanic(err)\n\t}\n")
	goOps := map[variant.Op]string{variant.OpNN: "OpNN", variant.OpNT: "OpNT", variant.OpTN: "OpTN", variant.OpTT: "OpTT"}
	for _, q := range restateProbes {
		fmt.Fprintf(&g, "\tif err := ks.SgemmOp(tgsgemm.%s, %d, %d, %d, 1.5, %d, %d, %d, %d, 0, 1024, %d, 0x77); err != nil {\n\t\tfmt.Println(\"refused\")\n\t}\n",
			goOps[q.op], q.m, q.n, q.k, a, q.lda, b, q.ldb, q.ldc)
	}
	g.WriteString("}\n")
	bin := buildMain(t, mod, gocmd, g.String(), "CGO_ENABLED=1")
	goLaunch := regexp.MustCompile(`^launch (\S+) .* M=(\d+) N=(\d+) K=(\d+) alpha=\S+ A=([0-9a-f]+) lda=(\d+) B=([0-9a-f]+) ldb=(\d+) beta=\S+ C=[0-9a-f]+ ldc=(\d+)$`)
	got.Reset()
	for _, l := range strings.Split(runConsumer(t, bin, "LD_LIBRARY_PATH="+lib, "FAKE_CUDA=ok"), "\n") {
		if m := goLaunch.FindStringSubmatch(l); m != nil {
			fmt.Fprintf(&got, "%s\n", strings.Join(m[1:], " "))
		} else if l == "refused" {
			got.WriteString("refused\n")
		}
	}
	if got.String() != want {
		t.Errorf("Go package launches:\n%s\nwant (Plan.ChooseRestated):\n%s", got.String(), want)
	}
}
