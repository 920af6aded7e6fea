package gen

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"tilegen/internal/variant"
	"tilegen/internal/verify"
	"tilegen/templates"
)

// epilogueDriver runs tg::store4_fused of tilegen/epilogue_fused.cuh (the fused kernels' store) and
// the separate pass of the cublas+epilogue baseline (tilegen_bias_act of templates/support) on the
// host over an M x N result: every float4 group of a row, 16-byte and element paths (vc), beta 0 on
// NaN-poisoned C and beta != 0, both bias placements and every activation. It prints one line per
// case and element: act row alpha beta i j acc c0 bias fused separate.
const epilogueDriver = `
#include <cstdint>
static uint32_t rng = 12345;
static float urand() { rng = rng * 1664525u + 1013904223u; return ((rng >> 8) * (1.0f / 16777216.0f)) * 8.0f - 4.0f; }
template <tg::Act ACT, bool ROW> static void run(int act) {
    const int M = 5, N = 11, ldc = 12;
    for (int vc = 0; vc < 2; ++vc)
    for (int bz = 0; bz < 2; ++bz) {
        const float alpha = 1.5f, beta = bz ? 0.0f : -0.75f;
        float acc[M][12], c0[M * 12], c[M * 12], sep[M * 12], bias[16];
        for (int i = 0; i < 16; ++i) bias[i] = urand();
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < 12; ++j) {
                acc[i][j] = urand();
                c0[i * ldc + j] = beta == 0.0f ? NAN : urand();
            }
        for (int x = 0; x < M * ldc; ++x) c[x] = c0[x];
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; j += 4)
                tg::store4_fused<ACT, ROW>(make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]), c, ldc, M, N, i, j,
                                           alpha, beta, vc && (j + 4 <= N), bias, vc != 0);
        // The separate pass: cuBLAS's alpha*acc + beta*C first (fmaf like cuBLAS's epilogue), then
        // tilegen_bias_act over the whole result.
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < ldc; ++j) sep[i * ldc + j] = j < N ? (beta == 0.0f ? alpha * acc[i][j] : fmaf(beta, c0[i * ldc + j], alpha * acc[i][j])) : c0[i * ldc + j];
        gridDim.y = 2; blockDim.x = 256;
        for (unsigned by = 0; by < gridDim.y; ++by) {
            blockIdx.x = 0; blockIdx.y = by; threadIdx.x = 0;
            for (unsigned tx = 0; tx < 256; ++tx) { threadIdx.x = tx; tilegen_bias_act(M, N, sep, ldc, bias, act, ROW ? 1 : 0); }
        }
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < ldc; ++j) {
                const int x = i * ldc + j;
                printf("%d %d %.9g %.9g %d %d %.9g %.9g %.9g %.9g %.9g\n", act, ROW ? 1 : 0, alpha, beta, i, j,
                       acc[i][j], c0[x], bias[ROW ? i : (j < 16 ? j : 0)], c[x], sep[x]);
            }
    }
}
int main() {
    run<tg::Act::None, true>(0); run<tg::Act::None, false>(0);
    run<tg::Act::ReLU, true>(1); run<tg::Act::ReLU, false>(1);
    run<tg::Act::GELU, true>(2); run<tg::Act::GELU, false>(2);
    return 0;
}
`

// TestEpilogueOnHost compiles the fused epilogue's store (tilegen/epilogue_fused.cuh) and the
// separate epilogue kernel (templates/support/epilogue.cu.tmpl) for the host against
// testdata/emu/emu.h and checks every element against the float64 definition the worker verifies
// with (variant.Epilogue.Apply through verify.ApplyEpilogue, at K = 1, the tightest tolerance): the
// bias of the right row or column, the activation, beta's read of C only when nonzero (NaN-poisoned
// C with beta 0), and nothing written past column N. It checks the math, not the GPU's tanhf: the
// worker's verification does that.
func TestEpilogueOnHost(t *testing.T) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true and no g++")
		}
		t.Skip("needs g++")
	}
	ts, err := newTemplateSet(templates.FS, "templates")
	if err != nil {
		t.Fatal(err)
	}
	support, err := ts.execute("support/epilogue.cu.tmpl", SupportData{Arch: "sm_90"})
	if err != nil {
		t.Fatal(err)
	}
	emu, err := filepath.Abs(filepath.Join("testdata", "emu"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	unit := "#include \"emu.h\"\n" + string(support) + epilogueDriver
	if err := os.WriteFile(filepath.Join(dir, "epi.cpp"), []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "epi")
	if out, err := exec.Command(cxx, "-std=c++20", "-O1", "-pthread", "-w", "-I", emu, "-o", bin, filepath.Join(dir, "epi.cpp")).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	acts := []string{variant.ActNone, variant.ActReLU, variant.ActGELU}
	tol := verify.Scale(2, 1)
	lines, checked := 0, 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 11 {
			t.Fatalf("line %q", sc.Text())
		}
		lines++
		num := func(i int) float64 {
			x, err := strconv.ParseFloat(f[i], 64)
			if err != nil && !strings.Contains(strings.ToLower(f[i]), "nan") {
				t.Fatalf("field %d of %q: %v", i, sc.Text(), err)
			}
			if err != nil {
				return math.NaN()
			}
			return x
		}
		act, _ := strconv.Atoi(f[0])
		row := f[1] == "1"
		alpha, beta, j := num(2), num(3), int(num(5))
		acc, c0, bias, fused, sep := num(6), num(7), num(8), num(9), num(10)
		epi := epilogueOf(t, acts[act], row)
		if j >= 11 { // the padding column: never written
			if !(math.IsNaN(c0) && math.IsNaN(fused) && math.IsNaN(sep)) && (fused != c0 || sep != c0) {
				t.Errorf("%s: padding column written: %q", epi, sc.Text())
			}
			continue
		}
		e, bound := []float64{alpha * acc}, []float64{math.Abs(alpha * acc)}
		if beta != 0 {
			e[0] += beta * c0
			bound[0] += math.Abs(beta * c0)
		}
		b32 := []float32{float32(bias)}
		verify.ApplyEpilogue(epi, 1, 1, 1, e, bound, b32)
		for name, got := range map[string]float64{"fused": fused, "separate": sep} {
			if math.IsNaN(got) || math.Abs(got-e[0]) > tol*bound[0] {
				t.Errorf("%s %s: got %g, want %g ± %g (%q)", epi, name, got, e[0], tol*bound[0], sc.Text())
			}
		}
		checked++
	}
	if want := 6 * 4 * 5 * 12; lines != want || checked != 6*4*5*11 {
		t.Fatalf("%d lines (%d checked), want %d", lines, checked, want)
	}
}

func epilogueOf(t *testing.T, act string, row bool) variant.Epilogue {
	t.Helper()
	name := "bias"
	if act != variant.ActNone {
		name += "_" + act
	}
	if row {
		name += "_row"
	} else {
		name += "_col"
	}
	e, err := variant.ParseEpilogue(name)
	if err != nil {
		t.Fatal(fmt.Errorf("%s: %w", name, err))
	}
	return e
}
