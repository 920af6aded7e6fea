//go:build gpu

package gpu

import (
	"math"
	"runtime"
	"testing"
	"unsafe"

	"gorgonia.org/cu"

	"tilegen/generated"
	"tilegen/internal/protocol"
	"tilegen/internal/variant"
	"tilegen/internal/verify"
)

// TestDeviceCompareMatchesHost: the device-side comparison (tilegen_check) gives the host's
// verdicts on the same buffers: the same bad and non-finite counts, first bad element, largest
// errors and first broken sentinel, and the same sums up to their order. The buffers are the
// expectation rounded to float32, then spoiled: errors past the tolerance (the earliest one placed
// where a later block of the grid-stride loop reads it), within it, NaN and Inf, and writes into
// the guards, a padding column and the gap between two products.
func TestDeviceCompareMatchesHost(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ptx, err := generated.SupportPTX("reference")
	if err != nil {
		t.Fatal(err)
	}
	w, err := Open(Options{Ordinal: 0, ReferencePTX: ptx})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.check == nil {
		t.Fatal("the reference module has no tilegen_check")
	}
	type spoil func(buf []float32, at func(p, i, j int) int, s protocol.Shape, c check)
	bump := func(p, i, j int, by float32) spoil {
		return func(buf []float32, at func(p, i, j int) int, _ protocol.Shape, _ check) { buf[at(p, i, j)] *= by }
	}
	set := func(p, i, j int, v float32) spoil {
		return func(buf []float32, at func(p, i, j int) int, _ protocol.Shape, _ check) { buf[at(p, i, j)] = v }
	}
	raw := func(x func(n int, s protocol.Shape, c check) int, v float32) spoil {
		return func(buf []float32, _ func(p, i, j int) int, s protocol.Shape, c check) { buf[x(len(buf), s, c)] = v }
	}
	for _, tc := range []struct {
		name   string
		s      protocol.Shape
		sub    bool
		spoils []spoil
		pass   bool
	}{
		{name: "clean", s: protocol.Shape{M: 100, N: 75, K: 37}, pass: true},
		{name: "clean sub", s: protocol.Shape{M: 100, N: 75, K: 37}, sub: true, pass: true},
		{name: "within tolerance", s: protocol.Shape{M: 64, N: 64, K: 512}, sub: true, pass: true,
			spoils: []spoil{bump(0, 3, 5, 1+1e-6), bump(0, 40, 2, 1-1e-6)}},
		{name: "large batched, errors in two blocks", s: protocol.Shape{M: 700, N: 300, K: 20, Batch: 3, Op: variant.OpNT}, sub: true,
			// 630000 elements: the grid-stride loop runs more than once per thread; the first bad
			// element (product 0) is read by the last blocks' second pass of the loop.
			spoils: []spoil{bump(0, 699, 299, 1.5), bump(2, 0, 0, -3), set(1, 350, 10, float32(math.NaN())),
				set(1, 351, 11, float32(math.Inf(-1)))}},
		{name: "NaN only", s: protocol.Shape{M: 33, N: 17, K: 9}, spoils: []spoil{set(0, 32, 16, float32(math.NaN()))}},
		{name: "front guard", s: protocol.Shape{M: 33, N: 17, K: 9}, spoils: []spoil{raw(func(int, protocol.Shape, check) int { return 7 }, 0)}},
		{name: "back guard", s: protocol.Shape{M: 33, N: 17, K: 9}, spoils: []spoil{raw(func(n int, _ protocol.Shape, _ check) int { return n - 1 }, 1)}},
		{name: "padding column", s: protocol.Shape{M: 33, N: 17, K: 9}, sub: true, spoils: []spoil{
			raw(func(_ int, s protocol.Shape, c check) int { return guard + 5*c.ldc + s.N + 1 }, 2),
			raw(func(_ int, s protocol.Shape, c check) int { return guard + 9*c.ldc + s.N }, 2)}},
		{name: "gap between products", s: protocol.Shape{M: 20, N: 30, K: 9, Batch: 4}, sub: true, spoils: []spoil{
			raw(func(_ int, s protocol.Shape, c check) int { return guard + int(c.sc) + s.M*c.ldc + 3 }, 4)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lda, ldb, ldc := tc.s.Dense()
			c := check{alpha: 1, lda: lda, ldb: ldb, ldc: ldc, seed: 11}
			if tc.sub {
				c = check{alpha: -1.25, beta: 0.75, lda: lda + 3, ldb: ldb + 5, ldc: ldc + 5, seed: 12, sub: true}
			}
			if tc.s.Batch > 0 {
				ra, _ := tc.s.Op.StoredA(tc.s.M, tc.s.K)
				rb, _ := tc.s.Op.StoredB(tc.s.K, tc.s.N)
				gap := 0
				if tc.sub {
					gap = batchGap
				}
				c.sa, c.sb, c.sc = int64(ra*c.lda+gap), int64(rb*c.ldb+gap), int64(tc.s.M*c.ldc+gap)
			}
			key := checkKey{op: tc.s.Op, m: tc.s.M, n: tc.s.N, k: tc.s.K, lda: c.lda, ldb: c.ldb, ldc: c.ldc, batch: tc.s.Batch,
				sa: c.sa, sb: c.sb, sc: c.sc, alpha: c.alpha, beta: c.beta, seed: c.seed, sub: c.sub}
			dev, err := w.newCheckInputs(key, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer dev.ar.free()
			if dev.dE == 0 || dev.e != nil {
				t.Fatal("the expectation was not moved to the device")
			}
			dc := w.check
			w.check = nil
			host, err := w.newCheckInputs(key, 0)
			w.check = dc
			if err != nil {
				t.Fatal(err)
			}
			defer host.ar.free()
			if host.dE != 0 || host.e == nil {
				t.Fatal("without tilegen_check the expectation must stay on the host")
			}
			// The buffer: C as drawn (sentinels), the expectation rounded to float32 in the results.
			buf := make([]float32, host.nc)
			if err := host.ar.download(w.stream, buf, host.dC0); err != nil {
				t.Fatal(err)
			}
			products, m, n := tc.s.Products(), tc.s.M, tc.s.N
			at := func(p, i, j int) int { return guard + p*int(c.sc) + i*c.ldc + j }
			for p := 0; p < products; p++ {
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						buf[at(p, i, j)] = float32(host.e[(p*m+i)*n+j])
					}
				}
			}
			for _, sp := range tc.spoils {
				sp(buf, at, tc.s, c)
			}
			if err := copyErr("host to device", cu.MemcpyHtoDAsync(dev.dC, unsafe.Pointer(&buf[0]), int64(len(buf))*4, w.stream)); err != nil {
				t.Fatal(err)
			}
			scale := verify.Scale(2, tc.s.K)
			got, gotX, err := w.compareOnDevice(dev, products, m, n, c.sc, c.ldc, scale)
			if err != nil {
				t.Fatal(err)
			}
			want := verify.CompareBatch(products, m, n, buf[guard:], int(c.sc), c.ldc, host.e, host.bound, scale)
			wantX := verify.SentinelBrokenBatch(buf, guard, guard, products, int(c.sc), m, n, c.ldc)
			t.Logf("device %+v sentinel %d", got, gotX)
			if got.Bad != want.Bad || got.NonFinite != want.NonFinite || got.FirstBad != want.FirstBad || got.MaxAbs != want.MaxAbs ||
				got.MaxRel != want.MaxRel || got.Worst != want.Worst || got.MismatchPct != want.MismatchPct {
				t.Errorf("device %+v\nhost   %+v", got, want)
			}
			for _, v := range [][2]float64{{got.MSE, want.MSE}, {got.NormRel, want.NormRel}} {
				if d := math.Abs(v[0] - v[1]); !(d <= 1e-9*math.Abs(v[1])) {
					t.Errorf("sums differ beyond their order: device %g host %g", v[0], v[1])
				}
			}
			if gotX != wantX {
				t.Errorf("first broken sentinel: device %d, host %d", gotX, wantX)
			}
			if pass := got.Pass() && gotX < 0; pass != tc.pass {
				t.Errorf("pass %v, want %v", pass, tc.pass)
			}
		})
	}
}
