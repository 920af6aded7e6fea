package gpu

import (
	"errors"
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
	if err := fits(&v, s, w.info.SMs); err != nil {
		return err
	}
	t0 := time.Now()
	k, err := w.loadKernel(req.Kernel)
	resp.Phases = &protocol.Phases{LoadMS: msSince(t0)}
	if err != nil {
		return fmt.Errorf("variant %s: %w", v.Name, err)
	}
	attrs, err := w.attributes(k, s.M, s.N, s.K, s.Batch)
	resp.Attributes = attrs
	if err != nil {
		return fmt.Errorf("variant %s: %w", v.Name, err)
	}
	return w.verifyAndTime(w.gemm(k), &v, req, resp)
}

// fits says why variant v cannot run problem s (nil: it can): another op, a batch for an unbatched
// kernel or the other way round, the shape's requirements, or a grid too deep for the batch.
func fits(v *variant.Variant, s protocol.Shape, sms int) error {
	if v.Op != s.Op {
		return fmt.Errorf("variant %s computes %s, the problem is %s", v.Name, v.Op, s.Op)
	}
	if v.Epilogue != s.Epilogue {
		return fmt.Errorf("variant %s applies the epilogue %s, the problem's is %s", v.Name, v.Epilogue, s.Epilogue)
	}
	if v.Precision != s.Precision {
		return fmt.Errorf("variant %s computes in %s, the problem asks for %s", v.Name, v.Precision, s.Precision)
	}
	if v.Batched != (s.Batch > 0) {
		return fmt.Errorf("variant %s (batched %v) does not take a problem of batch %d", v.Name, v.Batched, s.Batch)
	}
	if err := v.SupportsDense(s.M, s.N, s.K); err != nil {
		return fmt.Errorf("variant %s does not support %s %dx%dx%d: %w", v.Name, s.Op, s.M, s.N, s.K, err)
	}
	x, y, z := v.GridBatch(s.M, s.N, s.K, sms, s.Batch)
	if z > variant.MaxGridZ {
		return fmt.Errorf("variant %s: grid z %d for a batch of %d exceeds %d", v.Name, z, s.Batch, variant.MaxGridZ)
	}
	if err := variant.CheckGrid(x, y, z); err != nil {
		return fmt.Errorf("variant %s on %dx%dx%d: %w", v.Name, s.M, s.N, s.K, err)
	}
	return nil
}

// runCublas handles OpCublas exactly like a variant; a missing cuBLAS is a note, not an error. On a
// shape with an epilogue it is cuBLAS's SGEMM followed by the epilogue as a separate kernel
// (protocol.BaselineCublasEpilogue), and the extra baselines the request names follow.
func (w *Worker) runCublas(req protocol.Request, resp *protocol.Response) error {
	if err := w.runCublasMain(req, resp); err != nil {
		return err
	}
	for _, name := range req.Baselines {
		b, err := w.extraBaseline(name, req)
		var fatal *FatalError
		if errors.As(err, &fatal) {
			return err
		}
		if err != nil {
			b.Error = err.Error()
		}
		resp.Baselines = append(resp.Baselines, b)
	}
	return nil
}

// extraBaseline verifies and times one of Request.Baselines on the request's shape.
func (w *Worker) extraBaseline(name string, req protocol.Request) (protocol.BaselineResult, error) {
	out := protocol.BaselineResult{Name: name}
	s := req.Shape
	switch name {
	case protocol.BaselineCublasLt:
		if s.Epilogue == variant.EpiNone || s.Batch > 0 {
			out.Note = "cublaslt: measured for one product with a fused epilogue only"
			return out, nil
		}
		if w.lt == nil {
			out.Note = fmt.Sprintf("cublasLt not available: %v", w.ltErr)
			return out, nil
		}
		g, err := w.lt.gemm(s.Op, s.Epilogue)
		if err != nil {
			out.Note = "cublaslt: " + err.Error()
			return out, nil
		}
		var r protocol.Response
		err = w.verifyAndTime(g, nil, req, &r)
		out.Verify, out.Timing = r.Verify, r.Timing
		if errors.Is(err, errLtNoAlgo) {
			out.Note, err = "cublaslt: "+err.Error(), nil
		}
		return out, err
	}
	return out, fmt.Errorf("unknown baseline %q (want %s)", name, protocol.BaselineCublasLt)
}

// runCublasMain is OpCublas's own measurement (see runCublas).
func (w *Worker) runCublasMain(req protocol.Request, resp *protocol.Response) error {
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
	if s.Batch < 0 {
		return fmt.Errorf("batch %d: want 0 (one product) or more", s.Batch)
	}
	if !s.Epilogue.Valid() {
		return fmt.Errorf("epilogue %q: not an epilogue", string(s.Epilogue))
	}
	if !s.Precision.Valid() {
		return fmt.Errorf("precision %q: want fp32, 3xtf32 or tf32", string(s.Precision))
	}
	if s.Precision != variant.PrecisionFP32 && s.Epilogue != variant.EpiNone {
		return fmt.Errorf("epilogue %s in %s: the tensor-core precisions take no epilogue", s.Epilogue, s.Precision)
	}
	g := w.blas.gemmPrecision(s.Op, s.Precision)
	if s.Epilogue != variant.EpiNone {
		if s.Batch > 0 {
			return fmt.Errorf("epilogue %s on a batch of %d: not supported", s.Epilogue, s.Batch)
		}
		if w.epi == nil {
			resp.Note = "cublas+epilogue not available: the worker has no epilogue kernel (--epilogue-ptx)"
			return nil
		}
		g = w.withEpilogue(g, s.Epilogue)
	}
	resp.Phases = &protocol.Phases{}
	return w.verifyAndTime(g, nil, req, resp)
}

// epilogueBlock is the separate epilogue kernel's block (threads along a row of C).
const epilogueBlock = 256

// withEpilogue is g followed by the epilogue epi as a separate pass over C (tilegen_bias_act): the
// cublas+epilogue baseline, what a program without fused epilogues runs. Both launches go on the
// worker's stream, so a timing's event pair holds both.
func (w *Worker) withEpilogue(g gemmFunc, epi variant.Epilogue) gemmFunc {
	act := map[string]int{variant.ActNone: 0, variant.ActReLU: 1, variant.ActGELU: 2}[epi.Activation()]
	return func(m, n, k int, alpha float32, a cu.DevicePtr, lda int, b cu.DevicePtr, ldb int,
		beta float32, c cu.DevicePtr, ldc int, bt batchArgs) error {
		if bt.bias == 0 {
			return fmt.Errorf("cublas+epilogue (%s) launched without a bias", epi)
		}
		if err := g(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, bt); err != nil {
			return err
		}
		args := newArgs().i32(m).i32(n).ptr(c).i32(ldc).ptr(bt.bias).i32(act).i32(b2i(epi.BiasPerRow()))
		gx, gy := (n+epilogueBlock-1)/epilogueBlock, min(m, variant.MaxGridZ)
		return launchErr(w.epi.Launch(gx, gy, 1, epilogueBlock, 1, 1, 0, w.stream, args.pointers()))
	}
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
	// sa, sb, sc are the element strides between the products of a batched shape (0 for an
	// unbatched one; sb 0 in the broadcast check: every product shares one B).
	sa, sb, sc int64
	seed       uint64
	sub        bool // the sub-matrix check: its scalars were drawn first from its generator
}

// batchGap is the number of elements left between consecutive matrices of a batch in the
// sub-matrix check, NaN in A and B and sentinels in C: a kernel that reads or writes past one
// product's matrices into the gap, or uses a wrong stride, fails.
const batchGap = 37

// verifyAll runs the β = 0 check and, when asked, the sub-matrix check, and for a batched shape the
// broadcast check (strideB = 0, as when every product shares one B). Check i draws its scalars and
// inputs from its own generator (CheckSeed(seed, i)), so a failure reproduces from the seed alone
// and a check's inputs do not depend on whether another check's were cached. A batched shape's
// first check has dense strides (consecutive matrices); the sub-matrix check has gaps between
// them.
func (w *Worker) verifyAll(g gemmFunc, v *variant.Variant, s protocol.Shape, set *protocol.VerifySettings) ([]protocol.VerifyResult, error) {
	if w.ref == nil {
		return nil, fmt.Errorf("worker started without the reference kernel: cannot verify")
	}
	lda, ldb, ldc := s.Dense()
	// strides returns the strides of matrices of the given leading dimensions plus gap elements.
	strides := func(lda, ldb, ldc, gap int, align int) (sa, sb, sc int64) {
		if s.Batch == 0 {
			return 0, 0, 0
		}
		ra, _ := s.Op.StoredA(s.M, s.K)
		rb, _ := s.Op.StoredB(s.K, s.N)
		return int64(ra*lda + roundUp(gap, align)), int64(rb*ldb + roundUp(gap, align)), int64(s.M*ldc + roundUp(gap, align))
	}
	ldm := 1
	if v != nil && v.Requires.LDMultiple > 1 {
		ldm = v.Requires.LDMultiple
	}
	c0 := check{alpha: 1, beta: 0, lda: lda, ldb: ldb, ldc: ldc, seed: set.Seed}
	c0.sa, c0.sb, c0.sc = strides(lda, ldb, ldc, 0, 1)
	checks := []check{c0}
	if set.SubMatrix {
		// Odd pads (3, 5) also move every row off vector alignment; a kernel that requires
		// alignment gets the smallest pads its ld_multiple allows.
		seed := verify.CheckSeed(set.Seed, 1)
		rnd := verify.Rand(seed)
		c := check{alpha: randScalar(rnd), beta: randScalar(rnd),
			lda: lda + roundUp(3, ldm), ldb: ldb + roundUp(5, ldm), ldc: ldc + roundUp(5, ldm), seed: seed, sub: true}
		c.sa, c.sb, c.sc = strides(c.lda, c.ldb, c.ldc, batchGap, ldm)
		if v != nil {
			if err := v.Supports(s.M, s.N, s.K, c.lda, c.ldb, c.ldc); err != nil {
				return nil, fmt.Errorf("sub-matrix check: %w", err)
			}
		}
		checks = append(checks, c)
		if s.Batch > 0 {
			bc := check{alpha: 1, beta: 0, lda: lda, ldb: ldb, ldc: ldc, seed: verify.CheckSeed(set.Seed, 2)}
			bc.sa, _, bc.sc = strides(lda, ldb, ldc, batchGap, ldm)
			checks = append(checks, bc) // sb = 0: one B for every product
		}
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
		StrideA: c.sa, StrideB: c.sb, StrideC: c.sc, FirstBad: -1, Tol: verify.ScalePrecision(set.TolFactor, k, s.Precision)}
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
	if err := copyErr("device to device", cu.MemcpyDtoDAsync(in.dC, in.dC0, int64(in.nc)*4, w.stream)); err != nil {
		return res, err
	}
	if err := g(m, n, k, c.alpha, in.dA, c.lda, in.dB, c.ldb, c.beta, in.dC+guard*4, c.ldc,
		batchArgs{count: s.Batch, sa: c.sa, sb: c.sb, sc: c.sc, bias: in.dBias}); err != nil {
		return res, err
	}
	if err := w.sync("kernel under test"); err != nil {
		return res, err
	}
	products := s.Products()
	var met verify.Metrics
	x := -1 // the first element outside the results that lost its sentinel
	if in.dE != 0 {
		if met, x, err = w.compareOnDevice(in, res.Tol); err != nil {
			return res, err
		}
	} else {
		if in.out == nil {
			in.out = make([]float32, in.nc)
		}
		hc := in.out
		if err := in.ar.download(w.stream, hc, in.dC); err != nil {
			return res, err
		}
		met = verify.CompareBatch(products, m, n, hc[guard:], int(c.sc), c.ldc, in.e, in.bound, res.Tol)
		x = verify.SentinelBrokenBatch(hc, guard, guard, products, int(c.sc), m, n, c.ldc)
	}
	res.MaxAbs, res.MaxRel, res.NormRel, res.MSE = met.MaxAbs, met.MaxRel, met.NormRel, met.MSE
	res.MismatchPct, res.FirstBad = met.MismatchPct, met.FirstBad
	res.Pass = met.Pass()
	if s.Batch > 0 {
		res.Reason = met.ReasonBatch(m, n)
	} else {
		res.Reason = met.Reason(n)
	}
	if x >= 0 {
		res.Pass = false
		last := guard + (products-1)*int(c.sc) + m*c.ldc // one past the last product's rows
		where := ""
		switch {
		case x < guard:
			where = fmt.Sprintf("%d elements before C", guard-x)
		case x >= last:
			where = fmt.Sprintf("%d elements past the end of C", x-last+1)
		default:
			b, y := 0, x-guard
			if c.sc > 0 {
				b, y = y/int(c.sc), y%int(c.sc)
			}
			if y >= m*c.ldc {
				where = fmt.Sprintf("the gap after product %d (%d elements past its last row)", b, y-m*c.ldc+1)
			} else {
				where = fmt.Sprintf("padding column %d of row %d (N=%d, ldc=%d)", y%c.ldc, y/c.ldc, n, c.ldc)
				if s.Batch > 0 {
					where += fmt.Sprintf(" of product %d", b)
				}
			}
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
	epi                    variant.Epilogue
	m, n, k, lda, ldb, ldc int
	batch                  int
	sa, sb, sc             int64
	alpha, beta            float32
	seed                   uint64
	sub                    bool
}

// checkInputs is one check's inputs and expectation, kept on the worker so that variants verified
// with the same seed and shape share them: A and B (pristine device copies plus working copies the
// kernel gets), C as drawn with its sentinels, and the float64 expectation and error bound (of
// every product of a batch, one after the other).
type checkInputs struct {
	key        checkKey
	ar         arena
	na, nb     int       // elements of A and B (with padding and gaps)
	nc         int       // elements of C's buffer: the guards, the results, their padding and gaps
	out        []float32 // the buffer results are downloaded into (host comparison)
	dA0, dB0   cu.DevicePtr
	dA, dB, dC cu.DevicePtr
	dC0        cu.DevicePtr // C's buffer as drawn (device): every check starts from a copy
	dBias      cu.DevicePtr // the epilogue's bias (0 without one)
	// The expectation and the error bound, dense per product: on the device (dE, dBound) when the
	// worker compares there (compareOnDevice), else on the host (e, bound).
	e, bound     []float64
	dE, dBound   cu.DevicePtr
	crossChecked bool
}

// maxCachedChecks is how many checks' inputs a worker keeps (the β = 0, sub-matrix and broadcast
// checks of one shape).
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
	key := checkKey{op: s.Op, epi: s.Epilogue, m: s.M, n: s.N, k: s.K, lda: c.lda, ldb: c.ldb, ldc: c.ldc, batch: s.Batch,
		sa: c.sa, sb: c.sb, sc: c.sc, alpha: c.alpha, beta: c.beta, seed: c.seed, sub: c.sub}
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

// batchMatrices draws products matrices of rows×cols (row stride ld) at stride elements apart into
// one buffer; everything else (row padding, the gaps between matrices) holds pad. A stride of 0 is
// one matrix that every product shares.
func batchMatrices(rnd *rand.Rand, products, rows, cols, ld int, stride int64, pad float32) []float32 {
	if stride == 0 {
		return verify.Matrix(rnd, rows, cols, ld, pad)
	}
	x := make([]float32, int(stride)*(products-1)+rows*ld)
	for i := range x {
		x[i] = pad
	}
	for b := 0; b < products; b++ {
		copy(x[int(stride)*b:], verify.Matrix(rnd, rows, cols, ld, pad))
	}
	return x
}

// buildCheckInputsHost draws in's inputs on the host and keeps its expectation there (a worker
// whose reference module has no tilegen_fill, tilegen_expect and tilegen_check: newCheckInputs).
func (w *Worker) buildCheckInputsHost(in *checkInputs, cpuCheckMaxFlops float64) (err error) {
	key := in.key
	m, n, k := key.m, key.n, key.k
	products := max(key.batch, 1)
	rnd := verify.Rand(key.seed)
	if key.sub {
		// The sub-matrix check's scalars came first from this generator (see verifyAll).
		randScalar(rnd)
		randScalar(rnd)
	}
	nan := float32(math.NaN())
	// A and B as the op stores them; NaN padding and gaps: reading past a stored row, or past one
	// product's matrix, poisons the result.
	ar, ac := key.op.StoredA(m, k)
	br, bc := key.op.StoredB(k, n)
	a := batchMatrices(rnd, products, ar, ac, key.lda, key.sa, nan)
	b := batchMatrices(rnd, products, br, bc, key.ldb, key.sb, nan)
	in.na, in.nb = len(a), len(b)
	cElems := m * key.ldc
	if products > 1 {
		cElems += int(key.sc) * (products - 1)
	}
	// C's buffer: sentinels around and between the results (verify.SentinelBrokenBatch).
	hc0 := make([]float32, guard+cElems+guard)
	for x := range hc0 {
		hc0[x] = verify.SentinelFloat()
	}
	c0 := hc0[guard : guard+cElems]
	for p := 0; p < products; p++ {
		for i := 0; i < m; i++ {
			off := p*int(key.sc) + i*key.ldc
			row := c0[off : off+n]
			if key.beta == 0 {
				for j := range row {
					row[j] = nan // an element the kernel never writes stays NaN and fails
				}
			} else {
				verify.Uniform(rnd, row)
			}
		}
	}
	// The epilogue's bias, drawn after everything else so that a plain GEMM's inputs are as before.
	var bias []float32
	if key.epi.HasBias() {
		bias = make([]float32, key.epi.BiasLen(m, n))
		verify.Uniform(rnd, bias)
	}
	in.nc = len(hc0)
	if in.dC0, err = in.ar.upload(w.stream, hc0); err != nil {
		return err
	}
	if in.dA0, err = in.ar.upload(w.stream, a); err != nil {
		return err
	}
	if in.dB0, err = in.ar.upload(w.stream, b); err != nil {
		return err
	}
	if in.dA, err = in.ar.alloc(int64(in.na) * 4); err != nil {
		return err
	}
	if in.dB, err = in.ar.alloc(int64(in.nb) * 4); err != nil {
		return err
	}
	if in.dC, err = in.ar.alloc(int64(in.nc) * 4); err != nil {
		return err
	}
	if bias != nil {
		if in.dBias, err = in.ar.upload(w.stream, bias); err != nil {
			return err
		}
	}
	var tmp arena
	defer tmp.free()
	mn := int64(m) * int64(n)
	dR, err := tmp.alloc(mn * int64(products) * 8)
	if err != nil {
		return err
	}
	dS, err := tmp.alloc(mn * int64(products) * 8)
	if err != nil {
		return err
	}
	if err := w.reference(key, in.dA0, in.dB0, dR, dS); err != nil {
		return err
	}
	if err := w.sync("reference kernel"); err != nil {
		return err
	}
	r := make([]float64, int(mn)*products)
	sAbs := make([]float64, int(mn)*products)
	if err := tmp.download(w.stream, r, dR); err != nil {
		return err
	}
	if err := tmp.download(w.stream, sAbs, dS); err != nil {
		return err
	}
	in.e = make([]float64, 0, len(r))
	in.bound = make([]float64, 0, len(r))
	for p := 0; p < products; p++ {
		lo, hi := int(mn)*p, int(mn)*(p+1)
		e, bound := verify.Expect(m, n, key.alpha, key.beta, r[lo:hi], sAbs[lo:hi], c0[p*int(key.sc):], key.ldc)
		verify.ApplyEpilogue(key.epi, m, n, k, e, bound, bias)
		in.e, in.bound = append(in.e, e...), append(in.bound, bound...)
	}
	if 2*float64(m)*float64(n)*float64(k)*float64(products) <= cpuCheckMaxFlops {
		if err := crossCheckSums(key, a, b, r, sAbs); err != nil {
			return err
		}
		in.crossChecked = true
	}
	return nil
}

// reference launches the float64 reference on every product of key's check (A and B at dA0 and
// dB0 as the key lays them out) into the dense sums dR and dS. It reads the pristine copies, which
// no kernel under test is ever given; one launch per product of a batch and band of rows (its rows
// lie on grid y, at most 65535 blocks).
func (w *Worker) reference(key checkKey, dA0, dB0, dR, dS cu.DevicePtr) error {
	m, n, k := key.m, key.n, key.k
	products := max(key.batch, 1)
	mn := int64(m) * int64(n)
	for p := 0; p < products; p++ {
		pa, pb := dA0+cu.DevicePtr(4*int64(p)*key.sa), dB0+cu.DevicePtr(4*int64(p)*key.sb)
		pr, ps := dR+cu.DevicePtr(8*int64(p)*mn), dS+cu.DevicePtr(8*int64(p)*mn)
		for _, band := range variant.RowBands(m, refTile) {
			// Row r of op(A) starts r·lda elements in when A is stored M×K, r elements in when K×M.
			aOff := int64(band.Row0) * int64(key.lda)
			if key.op.TransA() {
				aOff = int64(band.Row0)
			}
			rOff := 8 * int64(band.Row0) * int64(n)
			gx, gy := variant.CeilDiv(n, refTile), variant.CeilDiv(band.Rows, refTile)
			if err := variant.CheckGrid(gx, gy, 1); err != nil {
				return fmt.Errorf("reference kernel: %w", err)
			}
			refArgs := newArgs().i32(band.Rows).i32(n).i32(k).i32(b2i(key.op.TransA())).i32(b2i(key.op.TransB())).
				ptr(pa + cu.DevicePtr(4*aOff)).i32(key.lda).ptr(pb).i32(key.ldb).ptr(pr + cu.DevicePtr(rOff)).ptr(ps + cu.DevicePtr(rOff)).i32(n)
			if err := launchErr(w.ref.Launch(gx, gy, 1, refTile, refTile, 1, 0, w.stream, refArgs.pointers())); err != nil {
				return fmt.Errorf("reference kernel: %w", err)
			}
		}
	}
	return nil
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
	return a.uploadBytes(s, unsafe.Pointer(&src[0]), int64(len(src))*4)
}

// uploadF64 is upload for float64s.
func (a *arena) uploadF64(s cu.Stream, src []float64) (cu.DevicePtr, error) {
	return a.uploadBytes(s, unsafe.Pointer(&src[0]), int64(len(src))*8)
}

func (a *arena) uploadBytes(s cu.Stream, src unsafe.Pointer, bytes int64) (cu.DevicePtr, error) {
	p, err := a.alloc(bytes)
	if err != nil {
		return 0, err
	}
	if err := copyErr("host to device", cu.MemcpyHtoDAsync(p, src, bytes, s)); err != nil {
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
