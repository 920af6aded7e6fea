package gpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
	"unsafe"

	"gorgonia.org/cu"

	"tilegen/internal/protocol"
	"tilegen/internal/variant"
	"tilegen/internal/verify"
)

// run handles OpRun: load, attributes, verification, then timing if verification passed.
func (w *Worker) run(req protocol.Request, resp *protocol.Response) error {
	if req.Kernel == nil {
		return fmt.Errorf("run request without a kernel")
	}
	v := req.Kernel.Variant
	s := req.Shape
	if v.Op != s.Op {
		return fmt.Errorf("variant %s computes %s, the problem is %s", v.Name, v.Op, s.Op)
	}
	if err := v.SupportsDense(s.M, s.N, s.K); err != nil {
		return fmt.Errorf("variant %s does not support %s %dx%dx%d: %w", v.Name, s.Op, s.M, s.N, s.K, err)
	}
	t0 := time.Now()
	k, err := w.loadKernel(req.Kernel)
	resp.Phases = &protocol.Phases{LoadMS: msSince(t0)}
	if err != nil {
		return fmt.Errorf("variant %s: %w", v.Name, err)
	}
	attrs, err := w.attributes(k, s.M, s.N)
	resp.Attributes = attrs
	if err != nil {
		return fmt.Errorf("variant %s: %w", v.Name, err)
	}
	return w.verifyAndTime(w.gemm(k), &v, req, resp)
}

// runCublas handles OpCublas exactly like a variant; a missing cuBLAS is a note, not an error.
func (w *Worker) runCublas(req protocol.Request, resp *protocol.Response) error {
	if w.blas == nil {
		resp.Note = fmt.Sprintf("cuBLAS not available: %v", w.blasErr)
		return nil
	}
	s := req.Shape
	if s.M < 1 || s.N < 1 || s.K < 1 {
		return fmt.Errorf("shape %dx%dx%d: every dimension must be at least 1", s.M, s.N, s.K)
	}
	if !s.Op.Valid() {
		return fmt.Errorf("op %q: want NN, NT, TN or TT", string(s.Op))
	}
	resp.Phases = &protocol.Phases{}
	return w.verifyAndTime(w.blas.gemm(s.Op), nil, req, resp)
}

func (w *Worker) verifyAndTime(g gemmFunc, v *variant.Variant, req protocol.Request, resp *protocol.Response) error {
	s := req.Shape
	if resp.Phases == nil {
		resp.Phases = &protocol.Phases{}
	}
	if req.Verify != nil {
		t0 := time.Now()
		results, err := w.verifyAll(g, v, s, req.Verify)
		resp.Phases.VerifyMS = msSince(t0)
		resp.Verify = results
		if err != nil {
			return err
		}
		for _, r := range results {
			if !r.Pass {
				return nil // a wrong kernel is not timed
			}
		}
	}
	if req.Timing != nil {
		t0 := time.Now()
		t, err := w.time(g, s, req.Timing)
		resp.Phases.TimeMS = msSince(t0)
		if err != nil {
			return err
		}
		resp.Timing = t
	}
	return nil
}

// check is one verification's scalars, layout and input seed.
type check struct {
	alpha, beta   float32
	lda, ldb, ldc int
	seed          uint64
	sub           bool // the sub-matrix check: its scalars were drawn first from its generator
}

// verifyAll runs the β = 0 check and, when asked, the sub-matrix check. Check i draws its scalars
// and inputs from its own generator (CheckSeed(seed, i)), so a failure reproduces from the seed
// alone and a check's inputs do not depend on whether another check's were cached.
func (w *Worker) verifyAll(g gemmFunc, v *variant.Variant, s protocol.Shape, set *protocol.VerifySettings) ([]protocol.VerifyResult, error) {
	if w.ref == nil {
		return nil, fmt.Errorf("worker started without the reference kernel: cannot verify")
	}
	lda, ldb, ldc := s.Dense()
	checks := []check{{alpha: 1, beta: 0, lda: lda, ldb: ldb, ldc: ldc, seed: set.Seed}}
	if set.SubMatrix {
		ldm := 1
		if v != nil && v.Requires.LDMultiple > 1 {
			ldm = v.Requires.LDMultiple
		}
		// Odd pads (3, 5) also move every row off vector alignment; a kernel that requires
		// alignment gets the smallest pads its ld_multiple allows.
		seed := verify.CheckSeed(set.Seed, 1)
		rnd := verify.Rand(seed)
		c := check{alpha: randScalar(rnd), beta: randScalar(rnd),
			lda: lda + roundUp(3, ldm), ldb: ldb + roundUp(5, ldm), ldc: ldc + roundUp(5, ldm), seed: seed, sub: true}
		if v != nil {
			if err := v.Supports(s.M, s.N, s.K, c.lda, c.ldb, c.ldc); err != nil {
				return nil, fmt.Errorf("sub-matrix check: %w", err)
			}
		}
		checks = append(checks, c)
	}
	var out []protocol.VerifyResult
	for _, c := range checks {
		r, err := w.verifyOne(g, s, c, set)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// randScalar is a nonzero scalar of either sign with magnitude in [0.5, 2).
func randScalar(r *rand.Rand) float32 {
	x := float32(0.5 + 1.5*r.Float64())
	if r.IntN(2) == 0 {
		x = -x
	}
	return x
}

func roundUp(x, m int) int { return (x + m - 1) / m * m }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// guard is the number of sentinel floats before and after C (1 KiB keeps C 16-byte aligned).
const guard = 256

// refTile is the reference kernel's block edge (REF_TILE in reference.cu.tmpl).
const refTile = 16

// crossCheckTol is how closely the GPU and CPU float64 references must agree, relative to
// |A|·|B|; both sum exact products in the same order, so they normally agree exactly.
const crossCheckTol = 1e-12

func (w *Worker) verifyOne(g gemmFunc, s protocol.Shape, c check, set *protocol.VerifySettings) (protocol.VerifyResult, error) {
	m, n, k := s.M, s.N, s.K
	res := protocol.VerifyResult{Seed: set.Seed, Alpha: c.alpha, Beta: c.beta, LDA: c.lda, LDB: c.ldb, LDC: c.ldc,
		FirstBad: -1, Tol: verify.Scale(set.TolFactor, k)}
	in, err := w.checkInputs(s, c, set.CPUCheckMaxFlops)
	if err != nil {
		return res, err
	}
	res.RefCrossChecked = in.crossChecked
	// Fresh copies of the pristine inputs and of C as drawn (NaN where beta = 0, so an element the
	// kernel never writes fails; sentinels around it), whatever an earlier kernel did to them.
	if err := copyErr("device to device", cu.MemcpyDtoDAsync(in.dA, in.dA0, int64(in.na)*4, w.stream)); err != nil {
		return res, err
	}
	if err := copyErr("device to device", cu.MemcpyDtoDAsync(in.dB, in.dB0, int64(in.nb)*4, w.stream)); err != nil {
		return res, err
	}
	if err := copyErr("host to device", cu.MemcpyHtoDAsync(in.dC, unsafe.Pointer(&in.hc0[0]), int64(len(in.hc0))*4, w.stream)); err != nil {
		return res, err
	}
	if err := g(m, n, k, c.alpha, in.dA, c.lda, in.dB, c.ldb, c.beta, in.dC+guard*4, c.ldc); err != nil {
		return res, err
	}
	if err := w.sync("kernel under test"); err != nil {
		return res, err
	}
	hc := in.out
	if err := in.ar.download(w.stream, hc, in.dC); err != nil {
		return res, err
	}
	met := verify.Compare(m, n, hc[guard:], c.ldc, in.e, in.bound, res.Tol)
	res.MaxAbs, res.MaxRel, res.NormRel, res.MSE = met.MaxAbs, met.MaxRel, met.NormRel, met.MSE
	res.MismatchPct, res.FirstBad = met.MismatchPct, met.FirstBad
	res.Pass = met.Pass()
	res.Reason = met.Reason(n)
	if x := verify.SentinelBroken(hc, guard, guard, m, n, c.ldc); x >= 0 {
		res.Pass = false
		where := ""
		switch {
		case x < guard:
			where = fmt.Sprintf("%d elements before C", guard-x)
		case x >= guard+m*c.ldc:
			where = fmt.Sprintf("%d elements past the end of C", x-guard-m*c.ldc+1)
		default:
			i, j := (x-guard)/c.ldc, (x-guard)%c.ldc
			where = fmt.Sprintf("padding column %d of row %d (N=%d, ldc=%d)", j, i, n, c.ldc)
		}
		msg := "wrote outside the result: " + where
		if res.Reason != "" {
			msg = res.Reason + "; " + msg
		}
		res.Reason = msg
	}
	// JSON cannot carry NaN or Inf; a non-finite metric only arises with non-finite elements,
	// which MismatchPct and Reason already report.
	for _, p := range []*float64{&res.MaxAbs, &res.MaxRel, &res.NormRel, &res.MSE} {
		if math.IsNaN(*p) || math.IsInf(*p, 0) {
			*p = math.MaxFloat64
		}
	}
	return res, nil
}

// checkKey identifies one check's inputs: everything they are drawn and computed from.
type checkKey struct {
	op                     variant.Op
	m, n, k, lda, ldb, ldc int
	alpha, beta            float32
	seed                   uint64
	sub                    bool
}

// checkInputs is one check's inputs and expectation, kept on the worker so that variants verified
// with the same seed and shape share them: A and B (pristine device copies plus working copies the
// kernel gets), C as drawn with its sentinels, and the float64 expectation and error bound.
type checkInputs struct {
	key          checkKey
	ar           arena
	na, nb       int       // elements of A and B (with padding)
	hc0, out     []float32 // C with guards as drawn; the buffer results are downloaded into
	dA0, dB0     cu.DevicePtr
	dA, dB, dC   cu.DevicePtr
	e, bound     []float64
	crossChecked bool
}

// maxCachedChecks is how many checks' inputs a worker keeps (the β = 0 and sub-matrix checks of
// one shape, plus one more layout for variants whose ld_multiple changes the pads).
const maxCachedChecks = 3

// dropChecks frees every cached check (before operations that need the device's memory).
func (w *Worker) dropChecks() {
	for _, in := range w.checks {
		in.ar.free()
	}
	w.checks = nil
}

// checkInputs returns the inputs of check c, drawing them and running the float64 reference only
// when no cached check has the same key.
func (w *Worker) checkInputs(s protocol.Shape, c check, cpuCheckMaxFlops float64) (*checkInputs, error) {
	key := checkKey{op: s.Op, m: s.M, n: s.N, k: s.K, lda: c.lda, ldb: c.ldb, ldc: c.ldc, alpha: c.alpha, beta: c.beta, seed: c.seed, sub: c.sub}
	for i, in := range w.checks {
		if in.key == key {
			// Most recently used last.
			w.checks = append(append(w.checks[:i:i], w.checks[i+1:]...), in)
			return in, nil
		}
	}
	if len(w.checks) >= maxCachedChecks {
		w.checks[0].ar.free()
		w.checks = w.checks[1:]
	}
	in, err := w.newCheckInputs(key, cpuCheckMaxFlops)
	if err != nil {
		return nil, err
	}
	w.checks = append(w.checks, in)
	return in, nil
}

func (w *Worker) newCheckInputs(key checkKey, cpuCheckMaxFlops float64) (in *checkInputs, err error) {
	m, n, k := key.m, key.n, key.k
	in = &checkInputs{key: key}
	defer func() {
		if err != nil {
			in.ar.free()
		}
	}()
	rnd := verify.Rand(key.seed)
	if key.sub {
		// The sub-matrix check's scalars came first from this generator (see verifyAll).
		randScalar(rnd)
		randScalar(rnd)
	}
	nan := float32(math.NaN())
	// A and B as the op stores them; NaN padding: reading past a stored row poisons the result.
	ar, ac := key.op.StoredA(m, k)
	br, bc := key.op.StoredB(k, n)
	a := verify.Matrix(rnd, ar, ac, key.lda, nan)
	b := verify.Matrix(rnd, br, bc, key.ldb, nan)
	in.na, in.nb = len(a), len(b)
	in.hc0 = make([]float32, guard+m*key.ldc+guard)
	for x := range in.hc0 {
		in.hc0[x] = verify.SentinelFloat()
	}
	c0 := in.hc0[guard : guard+m*key.ldc]
	for i := 0; i < m; i++ {
		row := c0[i*key.ldc : i*key.ldc+n]
		if key.beta == 0 {
			for j := range row {
				row[j] = nan // an element the kernel never writes stays NaN and fails
			}
		} else {
			verify.Uniform(rnd, row)
		}
	}
	in.out = make([]float32, len(in.hc0))
	if in.dA0, err = in.ar.upload(w.stream, a); err != nil {
		return nil, err
	}
	if in.dB0, err = in.ar.upload(w.stream, b); err != nil {
		return nil, err
	}
	if in.dA, err = in.ar.alloc(int64(in.na) * 4); err != nil {
		return nil, err
	}
	if in.dB, err = in.ar.alloc(int64(in.nb) * 4); err != nil {
		return nil, err
	}
	if in.dC, err = in.ar.alloc(int64(len(in.hc0)) * 4); err != nil {
		return nil, err
	}
	var tmp arena
	defer tmp.free()
	dR, err := tmp.alloc(int64(m) * int64(n) * 8)
	if err != nil {
		return nil, err
	}
	dS, err := tmp.alloc(int64(m) * int64(n) * 8)
	if err != nil {
		return nil, err
	}
	// The reference reads the pristine copies, which no kernel under test is ever given.
	refArgs := newArgs().i32(m).i32(n).i32(k).i32(b2i(key.op.TransA())).i32(b2i(key.op.TransB())).
		ptr(in.dA0).i32(key.lda).ptr(in.dB0).i32(key.ldb).ptr(dR).ptr(dS).i32(n)
	if err := launchErr(w.ref.Launch((n+refTile-1)/refTile, (m+refTile-1)/refTile, 1, refTile, refTile, 1, 0,
		w.stream, refArgs.pointers())); err != nil {
		return nil, fmt.Errorf("reference kernel: %w", err)
	}
	if err := w.sync("reference kernel"); err != nil {
		return nil, err
	}
	r := make([]float64, m*n)
	sAbs := make([]float64, m*n)
	if err := tmp.download(w.stream, r, dR); err != nil {
		return nil, err
	}
	if err := tmp.download(w.stream, sAbs, dS); err != nil {
		return nil, err
	}
	in.e, in.bound = verify.Expect(m, n, key.alpha, key.beta, r, sAbs, c0, key.ldc)
	if 2*float64(m)*float64(n)*float64(k) <= cpuCheckMaxFlops {
		cr, cs, err := verify.ReferenceOp(key.op, m, n, k, a, key.lda, b, key.ldb)
		if err != nil {
			return nil, fmt.Errorf("CPU reference: %w", err)
		}
		if err := verify.CrossCheck(r, sAbs, cr, cs, n, crossCheckTol); err != nil {
			return nil, fmt.Errorf("GPU reference disagrees with the CPU reference: %w", err)
		}
		in.crossChecked = true
	}
	return in, nil
}

// arena tracks device allocations of one request so every exit path frees them.
type arena struct{ ptrs []cu.DevicePtr }

func (a *arena) alloc(bytes int64) (cu.DevicePtr, error) {
	if bytes < 1 {
		bytes = 1
	}
	p, err := cu.MemAlloc(bytes)
	if err != nil {
		if sticky(err) {
			return 0, &FatalError{Err: fmt.Errorf("allocating %d bytes: %w", bytes, err)}
		}
		return 0, fmt.Errorf("allocating %d bytes: %w", bytes, err)
	}
	a.ptrs = append(a.ptrs, p)
	return p, nil
}

func (a *arena) free() {
	for _, p := range a.ptrs {
		_ = cu.MemFree(p)
	}
	a.ptrs = nil
}

// upload allocates device memory for src and copies it there.
func (a *arena) upload(s cu.Stream, src []float32) (cu.DevicePtr, error) {
	p, err := a.alloc(int64(len(src)) * 4)
	if err != nil {
		return 0, err
	}
	if err := copyErr("host to device", cu.MemcpyHtoDAsync(p, unsafe.Pointer(&src[0]), int64(len(src))*4, s)); err != nil {
		return 0, err
	}
	return p, copyErr("host to device", s.Synchronize())
}

// download copies len(dst) elements (float32 or float64) from p and waits for them.
func (a *arena) download(s cu.Stream, dst any, p cu.DevicePtr) error {
	var ptr unsafe.Pointer
	var bytes int64
	switch d := dst.(type) {
	case []float32:
		ptr, bytes = unsafe.Pointer(&d[0]), int64(len(d))*4
	case []float64:
		ptr, bytes = unsafe.Pointer(&d[0]), int64(len(d))*8
	default:
		return fmt.Errorf("download into %T", dst)
	}
	if err := copyErr("device to host", cu.MemcpyDtoHAsync(ptr, p, bytes, s)); err != nil {
		return err
	}
	return copyErr("device to host", s.Synchronize())
}

// copyErr: copies only fail on a broken context (or a bug here); either way the worker must go.
func copyErr(what string, err error) error {
	if err == nil {
		return nil
	}
	return &FatalError{Err: fmt.Errorf("copy %s: %w", what, err)}
}
