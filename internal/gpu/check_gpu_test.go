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
	w := openCheckWorker(t)
	defer w.Close()
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
		// No subtests: the context is current on this (locked) thread only.
		t.Logf("case %s", tc.name)
		func() {
			c := testCheck(tc.s, tc.sub)
			key := testKey(tc.s, c)
			in, err := w.newCheckInputs(key, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer in.ar.free()
			if in.dE == 0 || in.e != nil {
				t.Fatal("the expectation is not on the device")
			}
			e, bound := make([]float64, tc.s.Products()*tc.s.M*tc.s.N), make([]float64, tc.s.Products()*tc.s.M*tc.s.N)
			for _, d := range []struct {
				dst []float64
				src cu.DevicePtr
			}{{e, in.dE}, {bound, in.dBound}} {
				if err := in.ar.download(w.stream, d.dst, d.src); err != nil {
					t.Fatal(err)
				}
			}
			// The buffer: C as drawn (sentinels), the expectation rounded to float32 in the results.
			buf := make([]float32, in.nc)
			if err := in.ar.download(w.stream, buf, in.dC0); err != nil {
				t.Fatal(err)
			}
			products, m, n := tc.s.Products(), tc.s.M, tc.s.N
			at := func(p, i, j int) int { return guard + p*int(c.sc) + i*c.ldc + j }
			for p := 0; p < products; p++ {
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						buf[at(p, i, j)] = float32(e[(p*m+i)*n+j])
					}
				}
			}
			for _, sp := range tc.spoils {
				sp(buf, at, tc.s, c)
			}
			if err := copyErr("host to device", cu.MemcpyHtoDAsync(in.dC, unsafe.Pointer(&buf[0]), int64(len(buf))*4, w.stream)); err != nil {
				t.Fatal(err)
			}
			scale := verify.Scale(2, tc.s.K)
			got, gotX, err := w.compareOnDevice(in, scale)
			if err != nil {
				t.Fatal(err)
			}
			want := verify.CompareBatch(products, m, n, buf[guard:], int(c.sc), c.ldc, e, bound, scale)
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
		}()
	}
}

// testCheck is verifyAll's β = 0 check of s, or (sub) a sub-matrix check with its scalars, pads
// and gaps.
func testCheck(s protocol.Shape, sub bool) check {
	lda, ldb, ldc := s.Dense()
	c := check{alpha: 1, lda: lda, ldb: ldb, ldc: ldc, seed: 11}
	if sub {
		c = check{alpha: -1.25, beta: 0.75, lda: lda + 3, ldb: ldb + 5, ldc: ldc + 5, seed: 12, sub: true}
	}
	if s.Batch > 0 {
		ra, _ := s.Op.StoredA(s.M, s.K)
		rb, _ := s.Op.StoredB(s.K, s.N)
		gap := 0
		if sub {
			gap = batchGap
		}
		c.sa, c.sb, c.sc = int64(ra*c.lda+gap), int64(rb*c.ldb+gap), int64(s.M*c.ldc+gap)
	}
	return c
}

func testKey(s protocol.Shape, c check) checkKey {
	return checkKey{op: s.Op, epi: s.Epilogue, m: s.M, n: s.N, k: s.K, lda: c.lda, ldb: c.ldb, ldc: c.ldc, batch: s.Batch,
		sa: c.sa, sb: c.sb, sc: c.sc, alpha: c.alpha, beta: c.beta, seed: c.seed, sub: c.sub}
}

// TestDeviceInputs: what tilegen_fill draws and tilegen_expect computes is what the host path
// did: A and B uniform in [-1, 1) with NaN padding and gaps, C NaN (β = 0) or uniform in the
// results and sentinels around them, a different draw per seed and per input, and the expectation
// and bound of verify.Expect and ApplyEpilogue on those inputs (the CPU reference's sums).
func TestDeviceInputs(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	w := openCheckWorker(t)
	defer w.Close()
	starts := map[uint64][2]float32{} // A's first two elements per seed
	for _, tc := range []struct {
		s   protocol.Shape
		sub bool
	}{
		{protocol.Shape{M: 37, N: 29, K: 41}, false},
		{protocol.Shape{M: 37, N: 29, K: 41}, true},
		{protocol.Shape{M: 40, N: 24, K: 9, Op: variant.OpTN}, true},
		{protocol.Shape{M: 17, N: 33, K: 20, Op: variant.OpNT, Batch: 3}, true},
		{protocol.Shape{M: 31, N: 18, K: 12, Epilogue: variant.EpiBiasGeluRow}, true},
		{protocol.Shape{M: 31, N: 18, K: 12, Epilogue: variant.EpiBiasReluCol}, false},
	} {
		s := tc.s
		c := testCheck(s, tc.sub)
		if s.Batch > 0 && !tc.sub {
			c.sb = 0
		}
		key := testKey(s, c)
		in, err := w.newCheckInputs(key, 1e12) // cross-checked on the CPU too
		if err != nil {
			t.Fatalf("%+v: %v", s, err)
		}
		if !in.crossChecked {
			t.Errorf("%+v: not cross-checked", s)
		}
		products, m, n, k := s.Products(), s.M, s.N, s.K
		a, b, c0 := make([]float32, in.na), make([]float32, in.nb), make([]float32, in.nc)
		e, bound := make([]float64, products*m*n), make([]float64, products*m*n)
		var bias []float32
		dl := []struct {
			dst any
			src cu.DevicePtr
		}{{a, in.dA0}, {b, in.dB0}, {c0, in.dC0}, {e, in.dE}, {bound, in.dBound}}
		if s.Epilogue.HasBias() {
			bias = make([]float32, s.Epilogue.BiasLen(m, n))
			dl = append(dl, struct {
				dst any
				src cu.DevicePtr
			}{bias, in.dBias})
		}
		for _, d := range dl {
			if err := in.ar.download(w.stream, d.dst, d.src); err != nil {
				t.Fatal(err)
			}
		}
		in.ar.free()
		// Layout: values where the matrices are, NaN (A, B) or sentinels (C) elsewhere.
		ar, ac := s.Op.StoredA(m, k)
		br, bc := s.Op.StoredB(k, n)
		checkLayout := func(what string, x []float32, front, count int, stride int64, rows, cols, ld int, inside func(float32) bool,
			pad func(float32) bool) {
			if stride == 0 {
				count = 1
			}
			want := make([]bool, len(x))
			for p := 0; p < count; p++ {
				for i := 0; i < rows; i++ {
					for j := 0; j < cols; j++ {
						want[front+p*int(stride)+i*ld+j] = true
					}
				}
			}
			for i, v := range x {
				if want[i] && !inside(v) || !want[i] && !pad(v) {
					t.Fatalf("%+v %s: element %d of %d = %v (inside %v)", s, what, i, len(x), v, want[i])
				}
			}
		}
		uniform := func(v float32) bool { return v >= -1 && v < 1 }
		isNaN := func(v float32) bool { return v != v }
		sentinel := func(v float32) bool { return math.Float32bits(v) == verify.Sentinel }
		checkLayout("A", a, 0, products, c.sa, ar, ac, c.lda, uniform, isNaN)
		checkLayout("B", b, 0, products, c.sb, br, bc, c.ldb, uniform, isNaN)
		if c.beta == 0 {
			checkLayout("C", c0, guard, products, c.sc, m, n, c.ldc, isNaN, sentinel)
		} else {
			checkLayout("C", c0, guard, products, c.sc, m, n, c.ldc, uniform, sentinel)
		}
		for seed, st := range starts {
			if seed != c.seed && st == [2]float32{a[0], a[1]} {
				t.Errorf("%+v: A starts as with seed %d: seeds do not change the draw", s, seed)
			}
		}
		starts[c.seed] = [2]float32{a[0], a[1]}
		if a[0] == b[0] {
			t.Errorf("%+v: A and B start alike: one stream for both?", s)
		}
		// The expectation: the host's functions on the drawn inputs.
		la, lb := (ar-1)*c.lda+ac, (br-1)*c.ldb+bc
		for p := 0; p < products; p++ {
			oa, ob := p*int(c.sa), p*int(c.sb)
			r, sa, err := verify.ReferenceOp(s.Op, m, n, k, a[oa:oa+la], c.lda, b[ob:ob+lb], c.ldb)
			if err != nil {
				t.Fatal(err)
			}
			we, wb := verify.Expect(m, n, c.alpha, c.beta, r, sa, c0[guard+p*int(c.sc):], c.ldc)
			verify.ApplyEpilogue(s.Epilogue, m, n, k, we, wb, bias)
			for x := range we {
				ge, gb := e[p*m*n+x], bound[p*m*n+x]
				if math.Abs(ge-we[x]) > 1e-14*math.Abs(we[x]) || math.Abs(gb-wb[x]) > 1e-14*wb[x] {
					t.Fatalf("%+v product %d element %d: device e %v bound %v, host %v %v", s, p, x, ge, gb, we[x], wb[x])
				}
			}
		}
	}
}

// openCheckWorker opens device 0 in this (locked) thread with the catalog's reference module, whose
// check kernels the tests need.
func openCheckWorker(t *testing.T) *Worker {
	ptx, err := generated.SupportPTX("reference")
	if err != nil {
		t.Fatal(err)
	}
	w, err := Open(Options{Ordinal: 0, ReferencePTX: ptx})
	if err != nil {
		t.Fatal(err)
	}
	if w.check == nil {
		w.Close()
		t.Fatal("the reference module lacks the check's kernels")
	}
	return w
}
