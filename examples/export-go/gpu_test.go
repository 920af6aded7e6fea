//go:build gpu

// GPU tests of the exported package (go test -tags gpu ./examples/export-go). Every result is
// compared with cuBLAS (loaded at run time through tilegen/internal/gpu, FP32 math, no TF32) on
// every tuned class, 4096³ included, on edge shapes and on vector problems of every op; where the
// float64 CPU reference of internal/verify is affordable the result and cuBLAS's are both checked
// against it too. Problems no variant accepts must be refused, and every tuned class is timed the
// way the tuner timed it and compared with the time recorded at tuning (within 5 %). All cu calls
// run on one locked thread, so there are no subtests.
//
// The test binary can be built against another export of the same package name through go's
// -overlay (scripts/export-gpu-build.sh does that), e.g. one with register-tiled kernels that need
// more than 48 KiB of dynamic shared memory.
package main

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"gorgonia.org/cu"

	"tilegen/examples/export-go/tgsgemm"
	"tilegen/internal/gpu"
	"tilegen/internal/variant"
	"tilegen/internal/verify"
)

func TestExportedOnGPU(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// No context is current on this thread yet: Load refuses (an error, not ErrUnavailable).
	if ks, err := tgsgemm.Load(); err == nil || errors.Is(err, tgsgemm.ErrUnavailable) {
		t.Errorf("Load without a current context: %v, %v", ks, err)
	} else {
		t.Logf("Load without a current context: %v", err)
	}
	dev, _ := primaryContext(t)
	name, _ := dev.Name()
	t.Logf("device: %s", name)
	ks, err := tgsgemm.Load()
	if err != nil {
		t.Fatal(err)
	}
	defer ks.Unload()
	stream, err := cu.MakeStream(cu.NonBlocking)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Destroy()

	blas, err := gpu.OpenCublas(stream)
	if err != nil {
		t.Fatalf("cuBLAS (the reference this test compares with): %v", err)
	}
	defer blas.Close()
	t.Logf("cuBLAS %d from %s", blas.Version(), blas.Path())

	// Correctness: every class and edge shapes against cuBLAS; against the float64 CPU reference
	// as well up to cpuRefFlops (a 4096³ reference would take minutes on the CPU).
	const cpuRefFlops = 2e10
	type prob struct{ m, n, k int }
	var probs []prob
	for _, c := range tgsgemm.Classes() {
		probs = append(probs, prob{c.M, c.N, c.K})
	}
	probs = append(probs, prob{1, 1, 1}, prob{97, 89, 83}, prob{4099, 17, 513}, prob{1, 4097, 3}, prob{33, 65, 129}, prob{2500, 300, 700})
	seed := uint64(1)
	for _, p := range probs {
		for _, c := range []struct {
			alpha, beta float32
			pad         int
			// legacy: launch on the legacy default stream (handle 0) instead of stream.
			legacy bool
		}{{1, 0, 0, false}, {1.5, -0.75, 3, true}} {
			seed++
			cpu := 2*float64(p.m)*float64(p.n)*float64(p.k) <= cpuRefFlops
			on := handle(stream)
			if c.legacy {
				on = 0
			}
			checkOne(t, ks, blas, stream, on, p.m, p.n, p.k, c.alpha, c.beta, c.pad, seed, cpu)
		}
	}

	// The column-major BLAS entry and the strided-batched entries, against cuBLAS with the same op.
	for _, op := range []tgsgemm.Op{tgsgemm.OpNN, tgsgemm.OpNT, tgsgemm.OpTN, tgsgemm.OpTT} {
		if tgsgemm.DefaultOp(op) == "" {
			continue
		}
		// Row-major op (opa, opb) is the column-major call (transa, transb) = (opb, opa): column-major
		// (N, T) is a TN call in row-major terms.
		seed++
		checkBatched(t, ks, blas, stream, op, 224, 256, 192, 1.5, -0.75, 3, 1, 0, false, true, seed)
	}
	// Vector problems (M or N of 1) of every op through the BLAS entry, packed and padded: they run on
	// NN's GEMV kernels where the memory allows (the package's restate), whatever ops it holds; the
	// others need kernels of their op.
	for _, op := range []tgsgemm.Op{tgsgemm.OpNN, tgsgemm.OpNT, tgsgemm.OpTN, tgsgemm.OpTT} {
		for _, v := range [][3]int{{1, 3001, 1000}, {2500, 1, 700}, {1, 1, 4099}, {300, 1, 64}} {
			for pad := 0; pad <= 1; pad++ {
				m, n, k := v[0], v[1], v[2]
				lda, ldb := k+pad, n+pad
				if op&tgsgemm.OpTN != 0 {
					lda = m + pad
				}
				if op&tgsgemm.OpNT != 0 {
					ldb = k + pad
				}
				if _, err := tgsgemm.ChooseOp(op, m, n, k, lda, ldb, n+pad); err != nil && tgsgemm.DefaultOp(op) == "" {
					t.Logf("%s %dx%dx%d pad %d refused (no %s kernel, not a restatable vector): %v", op, m, n, k, pad, op, err)
					continue
				}
				seed++
				checkBatched(t, ks, blas, stream, op, m, n, k, 1.5, -0.75, pad, 1, 0, false, true, seed)
			}
		}
	}
	for _, c := range tgsgemm.BatchClasses() {
		seed++
		checkBatched(t, ks, blas, stream, c.Op, c.M, c.N, c.K, 1, 0, 0, c.Batch, 0, false, false, seed)
		seed++
		checkBatched(t, ks, blas, stream, c.Op, c.M, c.N, c.K, 1.5, -0.75, 3, min(c.Batch, 7), 5, false, true, seed)
		seed++
		checkBatched(t, ks, blas, stream, c.Op, 97, 89, 83, -0.5, 2, 1, 3, 2, true, true, seed)
	}

	// The fused-epilogue entry: every epilogue the package holds against cuBLAS followed by the same
	// bias and activation in float64; the others are refused.
	for epi := tgsgemm.EpiBiasRow; epi <= tgsgemm.EpiBiasGeluCol; epi++ {
		seed++
		checkEpilogue(t, ks, blas, stream, epi, 512, 384, 256, 1, 0, 0, seed)
		seed++
		checkEpilogue(t, ks, blas, stream, epi, 97, 89, 83, 1.5, -0.75, 3, seed)
	}

	// Refusals: an error, and C untouched.
	d, err := cu.MemAlloc(64 * 4)
	if err != nil {
		t.Fatal(err)
	}
	defer cu.MemFree(d)
	if err := ks.Sgemm(4, 4, 4, 1, uintptr(d), 3, uintptr(d), 4, 0, uintptr(d), 4, handle(stream)); err == nil {
		t.Errorf("lda < K accepted")
	} else {
		t.Logf("lda < K refused: %v", err)
	}
	if err := ks.Sgemm(0, 4, 4, 1, uintptr(d), 4, uintptr(d), 4, 0, uintptr(d), 4, handle(stream)); err == nil {
		t.Errorf("M = 0 accepted")
	}

	// Timing against the record.
	l2, err := dev.Attribute(cu.L2CacheSize)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range tgsgemm.Classes() {
		ms, sets := medianMS(t, ks, stream, c.Op, c.M, c.N, c.K, int64(l2))
		slower := ms / c.TunedMS
		t.Logf("time %5dx%5dx%5d:%s %-18s sets=%2d now %.5f ms, tuned %.5f ms, now/tuned %.3f", c.M, c.N, c.K, c.Op, c.Variant, sets, ms, c.TunedMS, slower)
		if slower > 1.05 {
			t.Errorf("%dx%dx%d: %.5f ms is %.1f %% slower than the %.5f ms recorded at tuning", c.M, c.N, c.K, ms, 100*(slower-1), c.TunedMS)
		}
	}
}

// handle is a cu stream's CUstream handle as the exported package takes it.
// primaryContext retains device 0's primary context, makes it current on the calling (locked) thread
// and releases it when the test ends.
func primaryContext(t *testing.T) (cu.Device, cu.CUContext) {
	t.Helper()
	dev := cu.Device(0)
	ctx, err := dev.RetainPrimaryCtx()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.ReleasePrimaryCtx() })
	if err := cu.SetCurrentContext(ctx); err != nil {
		t.Fatal(err)
	}
	return dev, ctx
}

func handle(s cu.Stream) uintptr { return uintptr(unsafe.Pointer(s.C())) }

func uploadT(t *testing.T, h []float32) cu.DevicePtr {
	t.Helper()
	d, err := cu.MemAlloc(int64(4 * max(len(h), 1)))
	if err != nil {
		t.Fatal(err)
	}
	if len(h) > 0 {
		if err := cu.MemcpyHtoD(d, unsafe.Pointer(&h[0]), int64(4*len(h))); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// checkOne runs one problem through the exported package and through cuBLAS on the same inputs
// and compares them. Each float32 result is within Scale(2, K)·bound of the exact one (bound =
// |alpha|·(|A|·|B|) + |beta·C0|, the tolerance the tuner verifies with), so the two are within
// twice that of each other; |A|·|B| comes from cuBLAS on the absolute values, so no CPU work is
// needed and 4096³ is checked too. With cpu, both results are also checked against the float64
// CPU reference (cuBLAS failing there means the comparison itself is wrong). The padding columns
// of C must stay untouched. The exported kernel runs on the stream handle on (0: the legacy default
// stream), cuBLAS on s.
func checkOne(t *testing.T, ks *tgsgemm.Kernels, blas *gpu.Cublas, s cu.Stream, on uintptr, m, n, k int, alpha, beta float32, pad int,
	seed uint64, cpu bool) {
	t.Helper()
	lda, ldb, ldc := k+pad, n+pad, n+pad
	rng := verify.Rand(seed)
	a := verify.Matrix(rng, m, k, lda, 0)
	b := verify.Matrix(rng, k, n, ldb, 0)
	c0 := verify.Matrix(rng, m, n, ldc, verify.SentinelFloat())
	v, err := tgsgemm.Choose(m, n, k, lda, ldb, ldc)
	if err != nil {
		t.Errorf("%dx%dx%d: %v", m, n, k, err)
		return
	}
	abs := func(x []float32) []float32 {
		y := make([]float32, len(x))
		for i, e := range x {
			y[i] = float32(math.Abs(float64(e)))
		}
		return y
	}
	dA, dB, dC, dR := uploadT(t, a), uploadT(t, b), uploadT(t, c0), uploadT(t, c0)
	dAbsA, dAbsB, dS := uploadT(t, abs(a)), uploadT(t, abs(b)), uploadT(t, make([]float32, len(c0)))
	for _, d := range []cu.DevicePtr{dA, dB, dC, dR, dAbsA, dAbsB, dS} {
		defer cu.MemFree(d)
	}
	if err := ks.Sgemm(m, n, k, alpha, uintptr(dA), lda, uintptr(dB), ldb, beta, uintptr(dC), ldc, on); err != nil {
		t.Errorf("%dx%dx%d: %v", m, n, k, err)
		return
	}
	if err := blas.Sgemm(m, n, k, alpha, dA, lda, dB, ldb, beta, dR, ldc); err != nil {
		t.Fatalf("%dx%dx%d: %v", m, n, k, err)
	}
	if err := blas.Sgemm(m, n, k, 1, dAbsA, lda, dAbsB, ldb, 0, dS, ldc); err != nil {
		t.Fatalf("%dx%dx%d: |A|·|B|: %v", m, n, k, err)
	}
	// The whole context: the kernel may have run on the legacy default stream (on == 0).
	if err := cu.Synchronize(); err != nil {
		t.Fatalf("%dx%dx%d (%s): %v", m, n, k, v, err)
	}
	c, r, sAbs := downloadT(t, dC, len(c0)), downloadT(t, dR, len(c0)), downloadT(t, dS, len(c0))

	// Against cuBLAS.
	e, bound := make([]float64, m*n), make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			x := i*ldc + j
			e[i*n+j] = float64(r[x])
			bound[i*n+j] = math.Abs(float64(alpha)) * float64(sAbs[x])
			if beta != 0 {
				bound[i*n+j] += math.Abs(float64(beta) * float64(c0[x]))
			}
		}
	}
	met := verify.Compare(m, n, c, ldc, e, bound, verify.Scale(4, k))
	pads := 0
	for i := 0; i < m; i++ {
		for j := n; j < ldc; j++ {
			if math.Float32bits(c[i*ldc+j]) != math.Float32bits(c0[i*ldc+j]) {
				pads++
			}
		}
	}
	line := fmt.Sprintf("check %dx%dx%d alpha=%g beta=%g pad=%d stream=%#x %s: vs cuBLAS max_abs %.3g worst/tol %.3f bad %d", m, n, k,
		alpha, beta, pad, on, v, met.MaxAbs, met.Worst, met.Bad)
	if !met.Pass() || pads > 0 {
		t.Errorf("%dx%dx%d alpha=%g beta=%g pad=%d (%s) vs cuBLAS: %s; %d padding elements written", m, n, k, alpha, beta, pad, v,
			met.Reason(n), pads)
	}

	// Against the float64 reference, both results.
	if cpu {
		r64, s64, err := verify.Reference(m, n, k, a, lda, b, ldb)
		if err != nil {
			t.Fatal(err)
		}
		e, bound := verify.Expect(m, n, alpha, beta, r64, s64, c0, ldc)
		met := verify.Compare(m, n, c, ldc, e, bound, verify.Scale(2, k))
		bm := verify.Compare(m, n, r, ldc, e, bound, verify.Scale(2, k))
		line += fmt.Sprintf("; vs float64 max_abs %.3g norm_rel %.3g bad %d (cuBLAS: max_abs %.3g bad %d)", met.MaxAbs, met.NormRel,
			met.Bad, bm.MaxAbs, bm.Bad)
		if !met.Pass() {
			t.Errorf("%dx%dx%d alpha=%g beta=%g pad=%d (%s) vs float64: %s", m, n, k, alpha, beta, pad, v, met.Reason(n))
		}
		if !bm.Pass() {
			t.Errorf("%dx%dx%d alpha=%g beta=%g pad=%d: cuBLAS itself vs float64: %s (the cuBLAS call is wrong)", m, n, k, alpha, beta,
				pad, bm.Reason(n))
		}
	}
	t.Log(line)
}

func downloadT(t *testing.T, d cu.DevicePtr, n int) []float32 {
	t.Helper()
	h := make([]float32, n)
	if err := cu.MemcpyDtoH(unsafe.Pointer(&h[0]), d, int64(4*n)); err != nil {
		t.Fatal(err)
	}
	return h
}

// medianMS times like the tuner: beta = 0, dense leading dimensions, input sets rotated so that
// together they are about three times L2 when one fits in it, 3 warm-up launches, then at least 20
// launches and 100 ms (at most 1000), each between its own event pair.
func medianMS(t *testing.T, ks *tgsgemm.Kernels, s cu.Stream, op tgsgemm.Op, m, n, k int, l2 int64) (float64, int) {
	t.Helper()
	setBytes := 4 * (int64(m)*int64(k) + int64(k)*int64(n) + int64(m)*int64(n))
	nsets := 1
	if setBytes <= l2 {
		nsets = int(min(max((3*l2+setBytes-1)/setBytes, 2), 64))
	}
	rng := verify.Rand(0x5eed)
	type set struct{ a, b, c cu.DevicePtr }
	sets := make([]set, nsets)
	for i := range sets {
		ha, hb := make([]float32, m*k), make([]float32, k*n)
		verify.Uniform(rng, ha)
		verify.Uniform(rng, hb)
		sets[i].a, sets[i].b = uploadT(t, ha), uploadT(t, hb)
		var err error
		if sets[i].c, err = cu.MemAlloc(int64(4 * m * n)); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		for _, st := range sets {
			cu.MemFree(st.a)
			cu.MemFree(st.b)
			cu.MemFree(st.c)
		}
	}()
	// Dense leading dimensions of the class's op (A stored K×M under op(A) = Aᵀ, B N×K under op(B) = Bᵀ).
	lda, ldb := k, n
	if op&tgsgemm.OpTN != 0 {
		lda = m
	}
	if op&tgsgemm.OpNT != 0 {
		ldb = k
	}
	launch := func(i int) {
		st := sets[i%nsets]
		if err := ks.SgemmOp(op, m, n, k, 1, uintptr(st.a), lda, uintptr(st.b), ldb, 0, uintptr(st.c), n, handle(s)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		launch(i)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	const batchMax = 128
	events := make([]cu.Event, 2*batchMax)
	for i := range events {
		var err error
		if events[i], err = cu.MakeEvent(cu.DefaultEvent); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		for i := range events {
			cu.DestroyEvent(&events[i])
		}
	}()
	var samples []float64
	total := 0.0
	for len(samples) < 1000 && (len(samples) < 20 || total < 100) {
		want := 20 - len(samples)
		if len(samples) > 0 && total < 100 {
			per := max(total/float64(len(samples)), 1e-6)
			want = max(want, int(math.Ceil((100-total)/per)))
		}
		batch := min(max(want, 1), batchMax, 1000-len(samples))
		for i := 0; i < batch; i++ {
			if err := events[2*i].Record(s); err != nil {
				t.Fatal(err)
			}
			launch(len(samples) + i)
			if err := events[2*i+1].Record(s); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < batch; i++ {
			ms, err := events[2*i].Elapsed(events[2*i+1])
			if err != nil {
				t.Fatal(err)
			}
			samples = append(samples, float64(ms))
			total += float64(ms)
		}
	}
	slices.Sort(samples)
	h := len(samples) / 2
	if len(samples)%2 == 1 {
		return samples[h], nsets
	}
	return (samples[h-1] + samples[h]) / 2, nsets
}

// checkBatched runs batch row-major products of op through the exported package and through cuBLAS
// (cublasSgemmStridedBatched with the same op) and compares every product; strides leave gap
// elements between products (C's gaps must stay untouched) and shareB makes strideB 0. colMajor
// calls the column-major entries with cublasSgemmStridedBatched's arguments (transa, transb) =
// (opb, opa) on the swapped problem; batch 1 with colMajor goes through SgemmBLAS instead.
func checkBatched(t *testing.T, ks *tgsgemm.Kernels, blas *gpu.Cublas, s cu.Stream, op tgsgemm.Op, m, n, k int, alpha, beta float32,
	pad, batch, gap int, shareB, colMajor bool, seed uint64) {
	t.Helper()
	ta, tb := op&tgsgemm.OpTN != 0, op&tgsgemm.OpNT != 0
	rowsA, colsA, rowsB, colsB := m, k, k, n
	if ta {
		rowsA, colsA = k, m
	}
	if tb {
		rowsB, colsB = n, k
	}
	lda, ldb, ldc := colsA+pad, colsB+pad, n+pad
	sa, sb, sc := rowsA*lda+gap, rowsB*ldb+gap, m*ldc+gap
	if shareB {
		sb = 0
	}
	rng := verify.Rand(seed)
	a := verify.Matrix(rng, 1, sa*(batch-1)+rowsA*lda, sa*(batch-1)+rowsA*lda, 0)
	b := verify.Matrix(rng, 1, sb*(batch-1)+rowsB*ldb, sb*(batch-1)+rowsB*ldb, 0)
	c0 := verify.Matrix(rng, 1, sc*batch, sc*batch, verify.SentinelFloat())
	abs := func(x []float32) []float32 {
		y := make([]float32, len(x))
		for i, e := range x {
			y[i] = float32(math.Abs(float64(e)))
		}
		return y
	}
	dA, dB, dC, dR := uploadT(t, a), uploadT(t, b), uploadT(t, c0), uploadT(t, c0)
	dAbsA, dAbsB, dS := uploadT(t, abs(a)), uploadT(t, abs(b)), uploadT(t, make([]float32, len(c0)))
	for _, d := range []cu.DevicePtr{dA, dB, dC, dR, dAbsA, dAbsB, dS} {
		defer cu.MemFree(d)
	}
	opa, opb := byte('N'), byte('N')
	if ta {
		opa = 'T'
	}
	if tb {
		opb = 'T'
	}
	var v string
	var err error
	what := fmt.Sprintf("%s %dx%dx%d batch=%d", op, m, n, k, batch)
	switch {
	case colMajor && batch == 1:
		what = fmt.Sprintf("column-major %c%c m=%d n=%d k=%d", opb, opa, n, m, k)
		if v, err = tgsgemm.ChooseBLAS(opb, opa, n, m, k, ldb, lda, ldc); err == nil {
			err = ks.SgemmBLAS(opb, opa, n, m, k, alpha, uintptr(dB), ldb, uintptr(dA), lda, beta, uintptr(dC), ldc, handle(s))
		}
	case colMajor:
		what = fmt.Sprintf("column-major batched %c%c m=%d n=%d k=%d batch=%d", opb, opa, n, m, k, batch)
		if v, err = tgsgemm.ChooseStridedBatched(opb, opa, n, m, k, ldb, sb, lda, sa, ldc, sc, batch); err == nil {
			err = ks.SgemmStridedBatched(opb, opa, n, m, k, alpha, uintptr(dB), ldb, sb, uintptr(dA), lda, sa, beta, uintptr(dC), ldc, sc,
				batch, handle(s))
		}
	default:
		if v, err = tgsgemm.ChooseStridedBatchedOp(op, m, n, k, lda, sa, ldb, sb, ldc, sc, batch); err == nil {
			err = ks.SgemmStridedBatchedOp(op, m, n, k, alpha, uintptr(dA), lda, sa, uintptr(dB), ldb, sb, beta, uintptr(dC), ldc, sc,
				batch, handle(s))
		}
	}
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	vop := variant.Ops[op]
	if err := blas.SgemmStridedBatchedOp(vop, m, n, k, alpha, dA, lda, int64(sa), dB, ldb, int64(sb), beta, dR, ldc, int64(sc), batch); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := blas.SgemmStridedBatchedOp(vop, m, n, k, 1, dAbsA, lda, int64(sa), dAbsB, ldb, int64(sb), 0, dS, ldc, int64(sc), batch); err != nil {
		t.Fatalf("%s: |A|·|B|: %v", what, err)
	}
	if err := cu.Synchronize(); err != nil {
		t.Fatalf("%s (%s): %v", what, v, err)
	}
	c, r, sAbs := downloadT(t, dC, len(c0)), downloadT(t, dR, len(c0)), downloadT(t, dS, len(c0))
	worst, bad, gaps := 0.0, 0, 0
	for p := 0; p < batch; p++ {
		o := p * sc
		e, bound := make([]float64, m*n), make([]float64, m*n)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				x := o + i*ldc + j
				e[i*n+j] = float64(r[x])
				bound[i*n+j] = math.Abs(float64(alpha)) * float64(sAbs[x])
				if beta != 0 {
					bound[i*n+j] += math.Abs(float64(beta) * float64(c0[x]))
				}
			}
			for j := n; j < ldc; j++ {
				if math.Float32bits(c[o+i*ldc+j]) != math.Float32bits(c0[o+i*ldc+j]) {
					gaps++
				}
			}
		}
		for x := o + m*ldc; x < o+sc; x++ {
			if math.Float32bits(c[x]) != math.Float32bits(c0[x]) {
				gaps++
			}
		}
		met := verify.Compare(m, n, c[o:], ldc, e, bound, verify.Scale(4, k))
		worst, bad = max(worst, met.Worst), bad+met.Bad
		if !met.Pass() {
			t.Errorf("%s (%s) product %d vs cuBLAS: %s", what, v, p, met.Reason(n))
		}
	}
	if gaps > 0 {
		t.Errorf("%s (%s): %d padding or gap elements written", what, v, gaps)
	}
	t.Logf("check %s alpha=%g beta=%g pad=%d gap=%d strideB=%d %s: vs cuBLAS worst/tol %.3f bad %d", what, alpha, beta, pad, gap, sb, v, worst, bad)
}

// checkEpilogue calls SgemmEpilogue and compares with cuBLAS's alpha·A·B + beta·C followed by the
// epilogue (bias, activation) in float64 (verify.ApplyEpilogue: the bound grows by |bias| and the
// activation's slope); an epilogue the package has no kernel for must be refused, as must a zero
// bias.
func checkEpilogue(t *testing.T, ks *tgsgemm.Kernels, blas *gpu.Cublas, s cu.Stream, epi tgsgemm.Epilogue, m, n, k int,
	alpha, beta float32, pad int, seed uint64) {
	t.Helper()
	ve := variant.Epilogues[epi] // the package numbers epilogues in variant.Epilogues order
	lda, ldb, ldc := k+pad, n+pad, n+pad
	rng := verify.Rand(seed)
	a := verify.Matrix(rng, m, k, lda, 0)
	b := verify.Matrix(rng, k, n, ldb, 0)
	c0 := verify.Matrix(rng, m, n, ldc, verify.SentinelFloat())
	nb := n
	if ve.BiasPerRow() {
		nb = m
	}
	bias := verify.Matrix(rng, 1, nb, nb, 0)
	abs := func(x []float32) []float32 {
		y := make([]float32, len(x))
		for i, e := range x {
			y[i] = float32(math.Abs(float64(e)))
		}
		return y
	}
	dA, dB, dC, dR := uploadT(t, a), uploadT(t, b), uploadT(t, c0), uploadT(t, c0)
	dAbsA, dAbsB, dS, dBias := uploadT(t, abs(a)), uploadT(t, abs(b)), uploadT(t, make([]float32, len(c0))), uploadT(t, bias)
	for _, d := range []cu.DevicePtr{dA, dB, dC, dR, dAbsA, dAbsB, dS, dBias} {
		defer cu.MemFree(d)
	}
	err := ks.SgemmEpilogue(epi, m, n, k, alpha, uintptr(dA), lda, uintptr(dB), ldb, beta, uintptr(dC), ldc, uintptr(dBias), handle(s))
	if zero := ks.SgemmEpilogue(epi, m, n, k, alpha, uintptr(dA), lda, uintptr(dB), ldb, beta, uintptr(dC), ldc, 0, handle(s)); zero == nil {
		t.Errorf("epilogue %s: a zero bias was accepted", ve)
	}
	if err != nil {
		// Only an epilogue the package holds no kernel for may be refused.
		if strings.Contains(err.Error(), "holds no kernel for it") {
			t.Logf("epilogue %s refused: %v", ve, err)
		} else {
			t.Errorf("epilogue %s %dx%dx%d: %v", ve, m, n, k, err)
		}
		return
	}
	if err := blas.Sgemm(m, n, k, alpha, dA, lda, dB, ldb, beta, dR, ldc); err != nil {
		t.Fatalf("%dx%dx%d: %v", m, n, k, err)
	}
	if err := blas.Sgemm(m, n, k, 1, dAbsA, lda, dAbsB, ldb, 0, dS, ldc); err != nil {
		t.Fatalf("%dx%dx%d: |A|·|B|: %v", m, n, k, err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatalf("epilogue %s %dx%dx%d: %v", ve, m, n, k, err)
	}
	c, r, sAbs := downloadT(t, dC, len(c0)), downloadT(t, dR, len(c0)), downloadT(t, dS, len(c0))
	e, bound := make([]float64, m*n), make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			x := i*ldc + j
			e[i*n+j] = float64(r[x])
			bound[i*n+j] = math.Abs(float64(alpha)) * float64(sAbs[x])
			if beta != 0 {
				bound[i*n+j] += math.Abs(float64(beta) * float64(c0[x]))
			}
		}
	}
	verify.ApplyEpilogue(ve, m, n, k, e, bound, bias)
	met := verify.Compare(m, n, c, ldc, e, bound, verify.Scale(4, k))
	if !met.Pass() {
		t.Errorf("epilogue %s %dx%dx%d alpha=%g beta=%g pad=%d vs cuBLAS + epilogue: %s", ve, m, n, k, alpha, beta, pad, met.Reason(n))
	}
	t.Logf("epilogue %s %dx%dx%d alpha=%g beta=%g pad=%d: vs cuBLAS + epilogue max_abs %.3g worst/tol %.3f bad %d", ve, m, n, k,
		alpha, beta, pad, met.MaxAbs, met.Worst, met.Bad)
}

// TestConcurrentStreams: for one class of each exported variant, four products (each its own
// inputs and C) launched 16 times over on four non-blocking streams, first from one goroutine
// without waiting between launches, then from four goroutines, each on its own locked OS thread with
// the context current; every result checked against cuBLAS. The split-K and stream-K kernels keep
// partial sums in their module between blocks, so overlapping calls are only correct because the
// package orders their launches across streams.
func TestConcurrentStreams(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_, ctx := primaryContext(t)
	free0, _, err := cu.MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	ks, err := tgsgemm.Load()
	if err != nil {
		t.Fatal(err)
	}
	defer ks.Unload()
	free1, _, err := cu.MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Load took %.1f MiB of device memory (the kernels that keep state load on their first launch)", float64(free0-free1)/(1<<20))
	const P, rounds = 4, 16
	var streams [P]cu.Stream
	for i := range streams {
		if streams[i], err = cu.MakeStream(cu.NonBlocking); err != nil {
			t.Fatal(err)
		}
		defer streams[i].Destroy()
	}
	blas, err := gpu.OpenCublas(streams[0])
	if err != nil {
		t.Fatalf("cuBLAS: %v", err)
	}
	defer blas.Close()
	// The smallest class of each variant, up to 2^31 multiply-adds.
	type prob struct{ m, n, k int }
	seen := map[string]bool{}
	var probs []prob
	cls := tgsgemm.Classes()
	slices.SortFunc(cls, func(a, b tgsgemm.Class) int {
		return int(math.Copysign(1, float64(a.M)*float64(a.N)*float64(a.K)-float64(b.M)*float64(b.N)*float64(b.K)))
	})
	for _, c := range cls {
		if c.Op != tgsgemm.OpNN || seen[c.Variant] || float64(c.M)*float64(c.N)*float64(c.K) > 1<<31 {
			continue
		}
		seen[c.Variant] = true
		probs = append(probs, prob{c.M, c.N, c.K})
	}
	seed := uint64(0xc0c)
	for _, p := range probs {
		m, n, k := p.m, p.n, p.k
		v, _ := tgsgemm.Choose(m, n, k, k, n, n)
		var dA, dB, dC, dR, dS [P]cu.DevicePtr
		var want, scale [P][]float32
		for i := 0; i < P; i++ {
			seed++
			rng := verify.Rand(seed)
			a, b := verify.Matrix(rng, m, k, k, 0), verify.Matrix(rng, k, n, n, 0)
			absA, absB := make([]float32, len(a)), make([]float32, len(b))
			for j, x := range a {
				absA[j] = float32(math.Abs(float64(x)))
			}
			for j, x := range b {
				absB[j] = float32(math.Abs(float64(x)))
			}
			dA[i], dB[i] = uploadT(t, a), uploadT(t, b)
			dAbsA, dAbsB := uploadT(t, absA), uploadT(t, absB)
			dC[i], dR[i], dS[i] = uploadT(t, make([]float32, m*n)), uploadT(t, make([]float32, m*n)), uploadT(t, make([]float32, m*n))
			if err := blas.Sgemm(m, n, k, 1, dA[i], k, dB[i], n, 0, dR[i], n); err != nil {
				t.Fatal(err)
			}
			if err := blas.Sgemm(m, n, k, 1, dAbsA, k, dAbsB, n, 0, dS[i], n); err != nil {
				t.Fatal(err)
			}
			if err := cu.Synchronize(); err != nil {
				t.Fatal(err)
			}
			want[i], scale[i] = downloadT(t, dR[i], m*n), downloadT(t, dS[i], m*n)
			cu.MemFree(dAbsA)
			cu.MemFree(dAbsB)
		}
		for mode, name := range []string{"one goroutine", "four goroutines"} {
			for i := 0; i < P; i++ {
				if err := cu.MemsetD32(dC[i], math.Float32bits(float32(math.NaN())), int64(m*n)); err != nil {
					t.Fatal(err)
				}
			}
			if err := cu.Synchronize(); err != nil {
				t.Fatal(err)
			}
			var errs [P]error
			launch := func(i int) {
				for r := 0; r < rounds && errs[i] == nil; r++ {
					errs[i] = ks.Sgemm(m, n, k, 1, uintptr(dA[i]), k, uintptr(dB[i]), n, 0, uintptr(dC[i]), n, handle(streams[i]))
				}
			}
			if mode == 0 {
				for r := 0; r < rounds; r++ {
					for i := 0; i < P; i++ {
						if errs[i] == nil {
							errs[i] = ks.Sgemm(m, n, k, 1, uintptr(dA[i]), k, uintptr(dB[i]), n, 0, uintptr(dC[i]), n, handle(streams[i]))
						}
					}
				}
			} else {
				done := make(chan struct{}, P)
				for i := 0; i < P; i++ {
					go func() {
						runtime.LockOSThread()
						defer runtime.UnlockOSThread()
						if err := cu.SetCurrentContext(ctx); err != nil {
							errs[i] = err
						} else {
							launch(i)
						}
						done <- struct{}{}
					}()
				}
				for i := 0; i < P; i++ {
					<-done
				}
			}
			if err := cu.Synchronize(); err != nil {
				t.Fatalf("%dx%dx%d (%s), %s: %v", m, n, k, v, name, err)
			}
			bad := 0
			for i := 0; i < P; i++ {
				if errs[i] != nil {
					t.Errorf("%dx%dx%d (%s), %s, stream %d: %v", m, n, k, v, name, i, errs[i])
					continue
				}
				c := downloadT(t, dC[i], m*n)
				e, bound := make([]float64, m*n), make([]float64, m*n)
				for j := range e {
					e[j], bound[j] = float64(want[i][j]), float64(scale[i][j])
				}
				if met := verify.Compare(m, n, c, n, e, bound, verify.Scale(4, k)); !met.Pass() {
					bad++
					t.Errorf("%dx%dx%d (%s), %s, stream %d vs cuBLAS: %s", m, n, k, v, name, i, met.Reason(n))
				}
			}
			t.Logf("concurrent %dx%dx%d %s: %s, %d streams x %d launches, %d of %d results wrong", m, n, k, v, name, P, rounds, bad, P)
		}
		if free, _, err := cu.MemInfo(); err == nil {
			t.Logf("device memory in use since before Load: %.1f MiB", float64(free0-free)/(1<<20))
		}
		for i := 0; i < P; i++ {
			for _, d := range []cu.DevicePtr{dA[i], dB[i], dC[i], dR[i], dS[i]} {
				cu.MemFree(d)
			}
		}
	}
}
