package verify

import (
	"math"
	"strings"
	"testing"

	"tilegen/internal/variant"
)

// naive is the textbook triple loop, the oracle for Reference.
func naive(m, n, k int, a []float32, lda int, b []float32, ldb int) (r, s []float64) {
	r = make([]float64, m*n)
	s = make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var acc, abs float64
			for p := 0; p < k; p++ {
				x, y := float64(a[i*lda+p]), float64(b[p*ldb+j])
				acc += x * y
				abs += math.Abs(x) * math.Abs(y)
			}
			r[i*n+j], s[i*n+j] = acc, abs
		}
	}
	return r, s
}

func TestReferenceMatchesNaive(t *testing.T) {
	for _, tc := range []struct{ m, n, k, padA, padB int }{
		{1, 1, 1, 0, 0}, {3, 5, 7, 0, 0}, {17, 9, 33, 3, 5}, {64, 31, 1, 1, 2}, {5, 128, 100, 5, 3},
	} {
		r := Rand(uint64(tc.m*1000 + tc.n))
		lda, ldb := tc.k+tc.padA, tc.n+tc.padB
		a := Matrix(r, tc.m, tc.k, lda, float32(math.NaN()))
		b := Matrix(r, tc.k, tc.n, ldb, float32(math.NaN()))
		gr, gs, err := Reference(tc.m, tc.n, tc.k, a, lda, b, ldb)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		wr, ws := naive(tc.m, tc.n, tc.k, a, lda, b, ldb)
		// Same k order and exact products: bit-identical, and the NaN padding must not leak in.
		for x := range wr {
			if gr[x] != wr[x] || gs[x] != ws[x] {
				t.Fatalf("%+v: element %d: got %v/%v want %v/%v", tc, x, gr[x], gs[x], wr[x], ws[x])
			}
		}
	}
}

func TestReferenceRejectsBadDims(t *testing.T) {
	a := make([]float32, 10)
	for _, tc := range []struct {
		name                 string
		m, n, k, lda, ldb, l int
	}{
		{"zero", 0, 1, 1, 1, 1, 10}, {"lda", 2, 2, 3, 2, 2, 10}, {"short A", 4, 2, 3, 3, 2, 10},
	} {
		if _, _, err := Reference(tc.m, tc.n, tc.k, a[:tc.l], tc.lda, a, tc.ldb); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// setup builds a small problem with its exact expectation and a C computed in float32 the way a
// correct kernel would.
func setup(t *testing.T, m, n, k int, alpha, beta float32) (c []float32, e, bound []float64) {
	t.Helper()
	rnd := Rand(42)
	a := Matrix(rnd, m, k, k, 0)
	b := Matrix(rnd, k, n, n, 0)
	c0 := Matrix(rnd, m, n, n, 0)
	r, s, err := Reference(m, n, k, a, k, b, n)
	if err != nil {
		t.Fatal(err)
	}
	e, bound = Expect(m, n, alpha, beta, r, s, c0, n)
	c = make([]float32, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var acc float32
			for p := 0; p < k; p++ {
				acc += a[i*k+p] * b[p*n+j]
			}
			c[i*n+j] = alpha*acc + beta*c0[i*n+j]
		}
	}
	return c, e, bound
}

func TestComparePlantedErrors(t *testing.T) {
	const m, n, k = 24, 20, 300
	scale := Scale(1, k)
	for _, tc := range []struct {
		name      string
		plant     func(c []float32)
		bad       int
		firstBad  int64
		nonFinite int
	}{
		{"clean", func([]float32) {}, 0, -1, 0},
		{"one wrong", func(c []float32) { c[5*n+7] += 0.01 }, 1, 5*n + 7, 0},
		{"NaN", func(c []float32) { c[3] = float32(math.NaN()) }, 1, 3, 1},
		{"Inf", func(c []float32) { c[n*m-1] = float32(math.Inf(-1)) }, 1, n*m - 1, 1},
		{"unwritten row (poison NaN)", func(c []float32) {
			for j := 0; j < n; j++ {
				c[(m-1)*n+j] = float32(math.NaN())
			}
		}, n, (m - 1) * n, n},
		{"two wrong", func(c []float32) { c[40] = 0; c[2] = -c[2] * 2 }, 2, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, e, bound := setup(t, m, n, k, 1.5, -0.75)
			tc.plant(c)
			met := Compare(m, n, c, n, e, bound, scale)
			if met.Bad != tc.bad || met.FirstBad != tc.firstBad || met.NonFinite != tc.nonFinite {
				t.Fatalf("bad=%d first=%d nonfinite=%d, want %d %d %d", met.Bad, met.FirstBad, met.NonFinite,
					tc.bad, tc.firstBad, tc.nonFinite)
			}
			if met.Pass() != (tc.bad == 0) {
				t.Fatalf("Pass()=%v", met.Pass())
			}
			if wantPct := 100 * float64(tc.bad) / (m * n); math.Abs(met.MismatchPct-wantPct) > 1e-12 {
				t.Errorf("mismatch %% = %v, want %v", met.MismatchPct, wantPct)
			}
			if tc.bad == 0 {
				if met.Reason(n) != "" || met.MaxAbs == 0 || met.NormRel > 1e-5 || met.Worst > 1 {
					t.Errorf("clean: %+v reason %q", met, met.Reason(n))
				}
			} else if !strings.Contains(met.Reason(n), "over tolerance") {
				t.Errorf("reason %q", met.Reason(n))
			}
		})
	}
}

func TestCompareMetricValues(t *testing.T) {
	e := []float64{1, -2, 0, 4}
	bound := []float64{1, 2, 1, 4}
	c := []float32{1, -2, 0.5, 4}
	met := Compare(2, 2, c, 2, e, bound, 1e-3)
	if met.MaxAbs != 0.5 || met.MSE != 0.25/4 || met.Bad != 1 || met.FirstBad != 2 {
		t.Fatalf("%+v", met)
	}
	if want := math.Sqrt(0.25 / 21); math.Abs(met.NormRel-want) > 1e-15 {
		t.Errorf("NormRel %v want %v", met.NormRel, want)
	}
	if met.MaxRel != 0 { // the only error sits where E = 0, which has no relative error
		t.Errorf("MaxRel %v", met.MaxRel)
	}
}

// TestToleranceScalesWithK: an error that a short dot product must not make is accepted for a
// long one, because the bound grows with K.
func TestToleranceScalesWithK(t *testing.T) {
	if Scale(2, 1000)/Scale(2, 10) != 1002.0/12.0 {
		t.Fatalf("Scale not linear in K+2")
	}
	if Scale(3, 10) != 3*Scale(1, 10) {
		t.Fatalf("Scale not linear in the factor")
	}
	e := []float64{1}
	bound := []float64{1}
	c := []float32{1 + 1e-4}
	if Compare(1, 1, c, 1, e, bound, Scale(1, 16)).Pass() {
		t.Error("error 1e-4 accepted at K=16")
	}
	if !Compare(1, 1, c, 1, e, bound, Scale(1, 4096)).Pass() {
		t.Error("error 1e-4 rejected at K=4096")
	}
}

func TestExpectSkipsC0WhenBetaZero(t *testing.T) {
	c0 := []float32{float32(math.NaN())}
	e, bound := Expect(1, 1, 2, 0, []float64{3}, []float64{5}, c0, 1)
	if e[0] != 6 || bound[0] != 10 {
		t.Fatalf("e=%v bound=%v", e, bound)
	}
	e, bound = Expect(1, 1, 2, -1, []float64{3}, []float64{5}, []float32{4}, 1)
	if e[0] != 2 || bound[0] != 14 {
		t.Fatalf("beta: e=%v bound=%v", e, bound)
	}
}

func TestSentinelBroken(t *testing.T) {
	const front, back, m, n, ldc = 4, 3, 3, 2, 5
	fresh := func() []float32 {
		c := make([]float32, front+m*ldc+back)
		for x := range c {
			c[x] = SentinelFloat()
		}
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				c[front+i*ldc+j] = 1
			}
		}
		return c
	}
	for _, tc := range []struct {
		name string
		at   int
	}{{"intact", -1}, {"front guard", 1}, {"padding", front + 1*ldc + 3}, {"back guard", front + m*ldc + 2}} {
		c := fresh()
		if tc.at >= 0 {
			c[tc.at] = float32(math.NaN()) // a different NaN still breaks the bit pattern
		}
		if got := SentinelBroken(c, front, back, m, n, ldc); got != tc.at {
			t.Errorf("%s: got %d want %d", tc.name, got, tc.at)
		}
	}
}

func TestCrossCheck(t *testing.T) {
	r := []float64{1, 2, 3, 4}
	s := []float64{1, 2, 3, 4}
	if err := CrossCheck(r, s, r, s, 2, 1e-12); err != nil {
		t.Fatal(err)
	}
	r2 := append([]float64(nil), r...)
	r2[3] += 1e-9
	err := CrossCheck(r2, s, r, s, 2, 1e-12)
	if err == nil || !strings.Contains(err.Error(), "(1,1)") {
		t.Fatalf("got %v", err)
	}
}

func TestRandDeterministic(t *testing.T) {
	a, b := make([]float32, 100), make([]float32, 100)
	Uniform(Rand(7), a)
	Uniform(Rand(7), b)
	for i := range a {
		if a[i] != b[i] || a[i] < -1 || a[i] >= 1 {
			t.Fatalf("element %d: %v %v", i, a[i], b[i])
		}
	}
	Uniform(Rand(8), b)
	if a[0] == b[0] && a[1] == b[1] {
		t.Error("different seeds gave the same values")
	}
}

// TestCompareChunked: a result large enough to be compared in parallel chunks gives the counts and
// first failure of a single pass, and the same metrics on every call.
func TestCompareChunked(t *testing.T) {
	const m, n = 1500, 700 // about 4 chunks
	rnd := Rand(7)
	e := make([]float64, m*n)
	bound := make([]float64, m*n)
	c := make([]float32, m*n)
	for x := range e {
		e[x] = rnd.Float64()*2 - 1
		bound[x] = 1
		c[x] = float32(e[x])
	}
	c[900*n+3] = float32(math.NaN())
	c[1200*n+9] += 1
	c[400*n+650] += 1
	met := Compare(m, n, c, n, e, bound, 1e-6)
	one := compareRange(0, m, n, func(r int) []float32 { return c[r*n : r*n+n] }, e, bound, 1e-6)
	if met.Bad != 3 || met.NonFinite != 1 || met.FirstBad != 400*n+650 || met.Bad != one.Bad || met.MaxAbs != one.MaxAbs {
		t.Fatalf("chunked %+v, single pass %+v", met, one.Metrics)
	}
	if again := Compare(m, n, c, n, e, bound, 1e-6); again != met {
		t.Errorf("not deterministic: %+v then %+v", met, again)
	}
}

// TestScalePrecision: FP32 keeps Scale; 3xTF32 adds the split's 12·2^-24 only; TF32 is scaled to
// 2^-11 and far wider.
func TestScalePrecision(t *testing.T) {
	for _, k := range []int{1, 3, 64, 4096} {
		f := Scale(2, k)
		if got := ScalePrecision(2, k, variant.PrecisionFP32); got != f {
			t.Errorf("fp32 K=%d: %g, want %g", k, got, f)
		}
		if got := ScalePrecision(2, k, variant.Precision3xTF32); got != f+12*Eps32 {
			t.Errorf("3xtf32 K=%d: %g, want %g", k, got, f+12*Eps32)
		}
		tf := ScalePrecision(2, k, variant.PrecisionTF32)
		if want := 2 * (4.0/2048 + float64(k+2)*Eps32); tf != want || tf <= f {
			t.Errorf("tf32 K=%d: %g, want %g", k, tf, want)
		}
	}
}
