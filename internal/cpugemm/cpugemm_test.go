package cpugemm

import (
	"math"
	"strings"
	"testing"

	"tilegen/internal/verify"
)

type kernel struct {
	name string
	run  func(m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
}

// kernels adapts every entry point to the alpha/beta form; Naive and Blocked only run with
// alpha = 1, beta = 0.
var kernels = []kernel{
	{"naive", func(m, n, k int, _ float32, a []float32, lda int, b []float32, ldb int, _ float32, c []float32, ldc int) {
		Naive(m, n, k, a, lda, b, ldb, c, ldc)
	}},
	{"blocked1", func(m, n, k int, _ float32, a []float32, lda int, b []float32, ldb int, _ float32, c []float32, ldc int) {
		Blocked(m, n, k, a, lda, b, ldb, c, ldc, 1)
	}},
	{"blocked3", func(m, n, k int, _ float32, a []float32, lda int, b []float32, ldb int, _ float32, c []float32, ldc int) {
		Blocked(m, n, k, a, lda, b, ldb, c, ldc, 3)
	}},
	{"blockedauto", func(m, n, k int, _ float32, a []float32, lda int, b []float32, ldb int, _ float32, c []float32, ldc int) {
		Blocked(m, n, k, a, lda, b, ldb, c, ldc, 0)
	}},
}

// TestAgainstReference checks every kernel against the float64 reference with the tolerance the
// GPU verification uses, on shapes that straddle the block sizes and with NaN padding in every
// operand (a kernel that reads padding produces NaN; one that writes it destroys the sentinel).
func TestAgainstReference(t *testing.T) {
	for _, tc := range []struct{ m, n, k, padA, padB, padC int }{
		{1, 1, 1, 0, 0, 0}, {3, 5, 7, 1, 2, 3}, {blockM, blockN, blockK, 0, 0, 0},
		{blockM + 1, blockN + 1, blockK + 1, 2, 1, 5}, {70, 300, 260, 3, 0, 1}, {129, 7, 513, 0, 3, 0},
	} {
		for _, kr := range kernels {
			r := verify.Rand(uint64(tc.m*7919 + tc.n*31 + tc.k))
			lda, ldb, ldc := tc.k+tc.padA, tc.n+tc.padB, tc.n+tc.padC
			a := verify.Matrix(r, tc.m, tc.k, lda, float32(math.NaN()))
			b := verify.Matrix(r, tc.k, tc.n, ldb, float32(math.NaN()))
			c := make([]float32, tc.m*ldc)
			for x := range c {
				c[x] = verify.SentinelFloat() // β = 0: C must not be read
			}
			kr.run(tc.m, tc.n, tc.k, 1, a, lda, b, ldb, 0, c, ldc)
			rr, s, err := verify.Reference(tc.m, tc.n, tc.k, a, lda, b, ldb)
			if err != nil {
				t.Fatal(err)
			}
			e, bound := verify.Expect(tc.m, tc.n, 1, 0, rr, s, nil, ldc)
			if met := verify.Compare(tc.m, tc.n, c, ldc, e, bound, verify.Scale(1, tc.k)); !met.Pass() {
				t.Errorf("%s %+v: %d bad elements, first %d, worst %.3g", kr.name, tc, met.Bad, met.FirstBad, met.Worst)
			}
			for i := 0; i < tc.m; i++ {
				for j := tc.n; j < ldc; j++ {
					if math.Float32bits(c[i*ldc+j]) != verify.Sentinel {
						t.Fatalf("%s %+v: padding C[%d,%d] overwritten", kr.name, tc, i, j)
					}
				}
			}
		}
	}
}

func TestAlphaBeta(t *testing.T) {
	for _, tc := range []struct {
		m, n, k     int
		alpha, beta float32
	}{{33, 129, 65, 1.5, 0}, {33, 129, 65, -0.5, 2}, {5, 4, 300, 0, 1}, {40, 260, 9, 2, -1}} {
		r := verify.Rand(uint64(tc.m + tc.n + tc.k))
		ldc := tc.n + 2
		a := verify.Matrix(r, tc.m, tc.k, tc.k, 0)
		b := verify.Matrix(r, tc.k, tc.n, tc.n, 0)
		c0 := verify.Matrix(r, tc.m, tc.n, ldc, 0)
		c := append([]float32(nil), c0...)
		BlockedAlphaBeta(tc.m, tc.n, tc.k, tc.alpha, a, tc.k, b, tc.n, tc.beta, c, ldc, 2)
		rr, s, err := verify.Reference(tc.m, tc.n, tc.k, a, tc.k, b, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		e, bound := verify.Expect(tc.m, tc.n, tc.alpha, tc.beta, rr, s, c0, ldc)
		if met := verify.Compare(tc.m, tc.n, c, ldc, e, bound, verify.Scale(1, tc.k)); !met.Pass() {
			t.Errorf("%+v: %d bad elements, worst %.3g", tc, met.Bad, met.Worst)
		}
	}
}

func TestBadDimsPanic(t *testing.T) {
	a := make([]float32, 12)
	for _, tc := range []struct {
		name             string
		m, n, k, lda, ld int
		want             string
	}{
		{"zero", 0, 2, 2, 2, 2, "at least 1"}, {"lda", 2, 2, 3, 2, 2, "leading"}, {"short", 5, 3, 3, 3, 3, "holds"},
	} {
		func() {
			defer func() {
				p := recover()
				if p == nil || !strings.Contains(p.(string), tc.want) {
					t.Errorf("%s: panic %v, want %q", tc.name, p, tc.want)
				}
			}()
			Naive(tc.m, tc.n, tc.k, a, tc.lda, a, tc.ld, a, tc.ld)
		}()
	}
}

func BenchmarkNaive256(b *testing.B) {
	bench(b, 256, func(x, y, z []float32, n int) { Naive(n, n, n, x, n, y, n, z, n) })
}
func BenchmarkBlocked256(b *testing.B) {
	bench(b, 256, func(x, y, z []float32, n int) { Blocked(n, n, n, x, n, y, n, z, n, 0) })
}
func BenchmarkBlocked1024(b *testing.B) {
	bench(b, 1024, func(x, y, z []float32, n int) { Blocked(n, n, n, x, n, y, n, z, n, 0) })
}

func bench(b *testing.B, n int, f func(a, bb, c []float32, n int)) {
	r := verify.Rand(1)
	x, y := verify.Matrix(r, n, n, n, 0), verify.Matrix(r, n, n, n, 0)
	z := make([]float32, n*n)
	b.SetBytes(int64(2 * n * n * n)) // FLOPs per op, so MB/s reads as MFLOP/s
	for b.Loop() {
		f(x, y, z, n)
	}
}
