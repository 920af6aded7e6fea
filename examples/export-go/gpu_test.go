//go:build gpu

// GPU tests of the exported package (go test -tags gpu ./examples/export-go): every result is
// checked against the float64 reference of internal/verify, problems no variant accepts must be
// refused, and every tuned class is timed the way the tuner timed it and compared with the time
// recorded at tuning (within 5 %). All cu calls run on one locked thread, so there are no subtests.
package main

import (
	"math"
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"gorgonia.org/cu"

	"tilegen/examples/export-go/tgsgemm"
	"tilegen/internal/verify"
)

func TestExportedOnGPU(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	dev := cu.Device(0)
	ctx, err := dev.RetainPrimaryCtx()
	if err != nil {
		t.Fatal(err)
	}
	defer dev.ReleasePrimaryCtx()
	if err := cu.SetCurrentContext(ctx); err != nil {
		t.Fatal(err)
	}
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

	// Correctness: every class (the reference is CPU float64, so the largest is left out) and edge shapes.
	type prob struct{ m, n, k int }
	var probs []prob
	for _, c := range tgsgemm.Classes() {
		if 2*float64(c.M)*float64(c.N)*float64(c.K) <= 2e10 {
			probs = append(probs, prob{c.M, c.N, c.K})
		}
	}
	probs = append(probs, prob{1, 1, 1}, prob{97, 89, 83}, prob{4099, 17, 513}, prob{1, 4097, 3}, prob{33, 65, 129}, prob{2500, 300, 700})
	seed := uint64(1)
	for _, p := range probs {
		for _, c := range []struct {
			alpha, beta float32
			pad         int
		}{{1, 0, 0}, {1.5, -0.75, 3}} {
			seed++
			checkOne(t, ks, stream, p.m, p.n, p.k, c.alpha, c.beta, c.pad, seed)
		}
	}

	// Refusals: an error, and C untouched.
	d, err := cu.MemAlloc(64 * 4)
	if err != nil {
		t.Fatal(err)
	}
	defer cu.MemFree(d)
	if err := ks.Sgemm(4, 4, 4, 1, d, 3, d, 4, 0, d, 4, stream); err == nil {
		t.Errorf("lda < K accepted")
	} else {
		t.Logf("lda < K refused: %v", err)
	}
	if err := ks.Sgemm(0, 4, 4, 1, d, 4, d, 4, 0, d, 4, stream); err == nil {
		t.Errorf("M = 0 accepted")
	}

	// Timing against the record.
	l2, err := dev.Attribute(cu.L2CacheSize)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range tgsgemm.Classes() {
		ms, sets := medianMS(t, ks, stream, c.M, c.N, c.K, int64(l2))
		ratio := ms / c.TunedMS
		t.Logf("time %5dx%5dx%5d %-18s sets=%2d now %.5f ms, tuned %.5f ms, ratio %.3f", c.M, c.N, c.K, c.Variant, sets, ms, c.TunedMS, ratio)
		if ratio > 1.05 {
			t.Errorf("%dx%dx%d: %.5f ms is %.1f %% slower than the %.5f ms recorded at tuning", c.M, c.N, c.K, ms, 100*(ratio-1), c.TunedMS)
		}
	}
}

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

func checkOne(t *testing.T, ks *tgsgemm.Kernels, s cu.Stream, m, n, k int, alpha, beta float32, pad int, seed uint64) {
	t.Helper()
	lda, ldb, ldc := k+pad, n+pad, n+pad
	rng := verify.Rand(seed)
	a := verify.Matrix(rng, m, k, lda, 0)
	b := verify.Matrix(rng, k, n, ldb, 0)
	c0 := verify.Matrix(rng, m, n, ldc, verify.SentinelFloat())
	dA, dB, dC := uploadT(t, a), uploadT(t, b), uploadT(t, c0)
	defer cu.MemFree(dA)
	defer cu.MemFree(dB)
	defer cu.MemFree(dC)
	v, err := tgsgemm.Choose(m, n, k, lda, ldb, ldc)
	if err != nil {
		t.Errorf("%dx%dx%d: %v", m, n, k, err)
		return
	}
	if err := ks.Sgemm(m, n, k, alpha, dA, lda, dB, ldb, beta, dC, ldc, s); err != nil {
		t.Errorf("%dx%dx%d: %v", m, n, k, err)
		return
	}
	if err := s.Synchronize(); err != nil {
		t.Fatalf("%dx%dx%d (%s): %v", m, n, k, v, err)
	}
	c := make([]float32, len(c0))
	if err := cu.MemcpyDtoH(unsafe.Pointer(&c[0]), dC, int64(4*len(c))); err != nil {
		t.Fatal(err)
	}
	r, sAbs, err := verify.Reference(m, n, k, a, lda, b, ldb)
	if err != nil {
		t.Fatal(err)
	}
	e, bound := verify.Expect(m, n, alpha, beta, r, sAbs, c0, ldc)
	met := verify.Compare(m, n, c, ldc, e, bound, verify.Scale(2, k))
	pads := 0
	for i := 0; i < m; i++ {
		for j := n; j < ldc; j++ {
			if math.Float32bits(c[i*ldc+j]) != math.Float32bits(c0[i*ldc+j]) {
				pads++
			}
		}
	}
	t.Logf("check %dx%dx%d alpha=%g beta=%g pad=%d %s: max_abs %.3g norm_rel %.3g bad %d", m, n, k, alpha, beta, pad, v,
		met.MaxAbs, met.NormRel, met.Bad)
	if !met.Pass() || pads > 0 {
		t.Errorf("%dx%dx%d alpha=%g beta=%g pad=%d (%s): %s; %d padding elements written", m, n, k, alpha, beta, pad, v, met.Reason(n), pads)
	}
}

// medianMS times like the tuner: beta = 0, dense leading dimensions, input sets rotated so that
// together they are about three times L2 when one fits in it, 3 warm-up launches, then at least 20
// launches and 100 ms (at most 1000), each between its own event pair.
func medianMS(t *testing.T, ks *tgsgemm.Kernels, s cu.Stream, m, n, k int, l2 int64) (float64, int) {
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
	launch := func(i int) {
		st := sets[i%nsets]
		if err := ks.Sgemm(m, n, k, 1, st.a, k, st.b, n, 0, st.c, n, s); err != nil {
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
