// Package verify is the arithmetic behind a kernel's verification, kept free of CUDA so that it is
// tested without a GPU: a float64 CPU reference GEMM, the element tolerance, and the error metrics
// that turn a computed C and its float64 expectation into a pass or a fail.
//
// The model: for C = alpha·A·B + beta·C0 computed in float32 with K products per element, the
// expectation is E = alpha·R + beta·C0 with R = A·B accumulated in float64, and the error of a
// correct float32 kernel is bounded element by element by
//
//	tol_ij = TolFactor · (K+2) · 2^-24 · (|alpha| · S_ij + |beta · C0_ij|) + Tiny
//
// where S = |A|·|B| (also accumulated in float64). The bound follows the standard error analysis of
// a dot product (each of the K additions and the final alpha/beta update rounds once), so it scales
// with K and with the magnitudes actually summed, not with the (possibly cancelling) result; a
// wrong element, a NaN or an element never written exceeds it.
package verify

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"tilegen/internal/variant"
)

// Eps32 is the unit roundoff of float32 (2^-24).
const Eps32 = 1.0 / (1 << 24)

// Tiny is added to every tolerance so that an element whose bound is exactly zero (all-zero
// operands) still accepts an exact zero and nothing else of consequence.
const Tiny = 1e-30

// Scale returns the tolerance scale TolFactor·(K+2)·2^-24 that multiplies each element's magnitude
// bound; it is what VerifyResult.Tol records.
func Scale(tolFactor float64, k int) float64 {
	return tolFactor * float64(k+2) * Eps32
}

// EpsTF32 is TF32's unit roundoff, 2^-11 (10 explicit mantissa bits, round to nearest).
const EpsTF32 = 1.0 / (1 << 11)

// Split3Term is the 3xTF32 operand split's bound per product, relative to |a||b|: hi + lo holds an
// operand to 2^-22 (lo keeps 11 of the residual's 13 bits) and the lo·lo product is left out, so
// a·b is off by up to 3·2^-22 = 12·2^-24 before any sum.
const Split3Term = 12 * Eps32

// ScalePrecision is Scale for a product computed in precision p. FP32 results get the FP32
// tolerance. 3xTF32 results get the FP32 tolerance plus Split3Term, which matters only for K
// below about 8 (at K = 1 the FP32 tolerance with factor 2 is 6·2^-24, under the split's 12·2^-24;
// from K = 4 on, the FP32 tolerance alone covers it). A TF32 result gets its own, scaled to TF32's
// 2^-11: each operand may be off by 2·2^-11 relative (rounded to nearest, or truncated as the
// tensor cores do with FP32 bits they are given), so each product by 4·2^-11 of |a||b|, on top of
// the FP32 accumulation: TolFactor·(4·2^-11 + (K+2)·2^-24).
func ScalePrecision(tolFactor float64, k int, p variant.Precision) float64 {
	switch p {
	case variant.PrecisionFP32:
		return Scale(tolFactor, k)
	case variant.Precision3xTF32:
		return Scale(tolFactor, k) + Split3Term
	}
	return tolFactor * (4*EpsTF32 + float64(k+2)*Eps32)
}

// Reference computes R = A·B and S = |A|·|B| in float64 on the CPU for row-major A (M×K, row stride
// lda) and B (K×N, row stride ldb); R and S are dense M×N (stride N). Rows are spread over
// GOMAXPROCS goroutines. Products of two float32 values are exact in float64 and the k order is
// ascending, so a GPU reference that accumulates the same way agrees bit for bit.
func Reference(m, n, k int, a []float32, lda int, b []float32, ldb int) (r, s []float64, err error) {
	return ReferenceOp(variant.OpNN, m, n, k, a, lda, b, ldb)
}

// ReferenceOp is Reference for R = op(A)·op(B) and S = |op(A)|·|op(B)|, with A and B stored as op
// says (variant.Op: under T, A is K×M with row stride lda ≥ M, B is N×K with ldb ≥ K). The sums
// are those of Reference on the operands op makes (k ascending), so they agree with the GPU
// reference bit for bit under every op.
func ReferenceOp(op variant.Op, m, n, k int, a []float32, lda int, b []float32, ldb int) (r, s []float64, err error) {
	if !op.Valid() {
		return nil, nil, fmt.Errorf("op %q: want NN, NT, TN or TT", string(op))
	}
	ar, ac := op.StoredA(m, k)
	br, bc := op.StoredB(k, n)
	if err := checkStored("A", ar, ac, len(a), lda); err != nil {
		return nil, nil, fmt.Errorf("%s %dx%dx%d: %w", op, m, n, k, err)
	}
	if err := checkStored("B", br, bc, len(b), ldb); err != nil {
		return nil, nil, fmt.Errorf("%s %dx%dx%d: %w", op, m, n, k, err)
	}
	if op.TransA() {
		a, lda = transpose(a, ar, ac, lda), ar
	}
	if op.TransB() {
		b, ldb = transpose(b, br, bc, ldb), br
	}
	return reference(m, n, k, a, lda, b, ldb)
}

// transpose returns the dense cols×rows transpose of a rows×cols matrix with row stride ld.
func transpose(x []float32, rows, cols, ld int) []float32 {
	t := make([]float32, rows*cols)
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			t[j*rows+i] = x[i*ld+j]
		}
	}
	return t
}

func checkStored(name string, rows, cols, have, ld int) error {
	if rows < 1 || cols < 1 {
		return fmt.Errorf("every dimension must be at least 1")
	}
	if ld < cols {
		return fmt.Errorf("leading dimension of %s %d too small for %d columns", name, ld, cols)
	}
	if have < (rows-1)*ld+cols {
		return fmt.Errorf("%s holds %d elements, need %d", name, have, (rows-1)*ld+cols)
	}
	return nil
}

func reference(m, n, k int, a []float32, lda int, b []float32, ldb int) (r, s []float64, err error) {
	if err := checkDims(m, n, k, len(a), lda, len(b), ldb); err != nil {
		return nil, nil, err
	}
	r = make([]float64, m*n)
	s = make([]float64, m*n)
	workers := runtime.GOMAXPROCS(0)
	if workers > m {
		workers = m
	}
	var wg sync.WaitGroup
	rows := make(chan int, m)
	for i := 0; i < m; i++ {
		rows <- i
	}
	close(rows)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			accR := make([]float64, n)
			accS := make([]float64, n)
			for i := range rows {
				clear(accR)
				clear(accS)
				// i-k-j order streams rows of B; per element the k order stays ascending.
				for p := 0; p < k; p++ {
					av := float64(a[i*lda+p])
					aa := math.Abs(av)
					brow := b[p*ldb : p*ldb+n]
					for j, bv := range brow {
						bd := float64(bv)
						accR[j] += av * bd
						accS[j] += aa * math.Abs(bd)
					}
				}
				copy(r[i*n:(i+1)*n], accR)
				copy(s[i*n:(i+1)*n], accS)
			}
		}()
	}
	wg.Wait()
	return r, s, nil
}

func checkDims(m, n, k, la, lda, lb, ldb int) error {
	if m < 1 || n < 1 || k < 1 {
		return fmt.Errorf("shape %dx%dx%d: every dimension must be at least 1", m, n, k)
	}
	if lda < k || ldb < n {
		return fmt.Errorf("leading dimensions lda=%d ldb=%d too small for K=%d N=%d", lda, ldb, k, n)
	}
	if la < (m-1)*lda+k {
		return fmt.Errorf("A holds %d elements, need %d", la, (m-1)*lda+k)
	}
	if lb < (k-1)*ldb+n {
		return fmt.Errorf("B holds %d elements, need %d", lb, (k-1)*ldb+n)
	}
	return nil
}

// Expect turns the reference sums into the expectation and the per-element magnitude bound:
// E = alpha·R + beta·C0 and Bound = |alpha|·S + |beta·C0|. c0 is the M×N input C with row stride
// ldc; it is not read when beta == 0 (as a kernel must not read it either).
func Expect(m, n int, alpha, beta float32, r, s []float64, c0 []float32, ldc int) (e, bound []float64) {
	al, be := float64(alpha), float64(beta)
	e = make([]float64, m*n)
	bound = make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			x := i*n + j
			e[x] = al * r[x]
			bound[x] = math.Abs(al) * s[x]
			if beta != 0 {
				bc := be * float64(c0[i*ldc+j])
				e[x] += bc
				bound[x] += math.Abs(bc)
			}
		}
	}
	return e, bound
}

// ApplyEpilogue turns the expectation and error bound of alpha·op(A)·op(B) + beta·C (Expect's, dense
// M×N) into those of the fused epilogue epi with its bias (M floats for a per-row bias, N per
// column): e = act(e + bias) in float64 (variant.Epilogue.Apply), and the bound grows by |bias|
// (the rounding of the addition is relative to |e + bias| ≤ bound + |bias|) and by the activation's
// largest slope (GELU's 1.13: an error in its input moves its output by at most that much). The
// epilogue's own float32 rounding (the addition, tanhf and GELU's products: at most about 8 ulp of
// the magnitude) does not grow with K while the tolerance's scale does (Scale: factor·(K+2)·2^-24),
// so it enters the bound as 8/(K+2) of the magnitude: a K-independent 8·factor ulp in the tolerance.
// Without an epilogue it changes nothing.
func ApplyEpilogue(epi variant.Epilogue, m, n, k int, e, bound []float64, bias []float32) {
	if epi == variant.EpiNone {
		return
	}
	row, slope := epi.BiasPerRow(), EpilogueSlope(epi, k)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var b float64
			if row {
				b = float64(bias[i])
			} else {
				b = float64(bias[j])
			}
			x := i*n + j
			e[x] = epi.Apply(e[x], b)
			bound[x] = slope * (bound[x] + math.Abs(b))
		}
	}
}

// EpilogueSlope is the factor ApplyEpilogue grows the bound of a K-deep product's epilogue by: the
// activation's largest slope with the epilogue's own rounding (1 without an epilogue).
func EpilogueSlope(epi variant.Epilogue, k int) float64 {
	if epi == variant.EpiNone {
		return 1
	}
	return epi.Slope() * (1 + epilogueUlps/float64(k+2))
}

// epilogueUlps bounds the rounding of an epilogue in float32, in ulp of its input's magnitude.
const epilogueUlps = 8

// Metrics compares a computed C against its expectation.
type Metrics struct {
	// MaxAbs is the largest |C−E| over finite elements.
	MaxAbs float64
	// MaxRel is the largest |C−E|/|E| over finite elements with E ≠ 0.
	MaxRel float64
	// NormRel is ‖C−E‖_F / ‖E‖_F over finite elements (0 when E is all zero and C matches).
	NormRel float64
	// MSE is the mean of (C−E)² over finite elements.
	MSE float64
	// Bad counts elements over their tolerance; NaN and Inf count.
	Bad int
	// NonFinite counts NaN and Inf elements.
	NonFinite int
	// MismatchPct is 100·Bad/(M·N).
	MismatchPct float64
	// FirstBad is the row-major index i·N+j of the first bad element, -1 if none.
	FirstBad int64
	// Worst is the largest |C−E|/tol_ij seen (Inf when a non-finite element occurred).
	Worst float64
}

// Pass reports whether no element exceeded its tolerance.
func (m Metrics) Pass() bool { return m.Bad == 0 }

// Compare measures C (M×N, row stride ldc) against the expectation e and the magnitude bound
// (both dense M×N) with tolerance tol_ij = scale·bound_ij + Tiny. Large results are compared in
// chunks of compareRows rows on all CPUs; partial results are merged in chunk order, so the metrics
// do not depend on the number of CPUs.
func Compare(m, n int, c []float32, ldc int, e, bound []float64, scale float64) Metrics {
	return CompareBatch(1, m, n, c, 0, ldc, e, bound, scale)
}

// CompareBatch is Compare over batch M×N results at once (a strided batch): result b starts at
// c[b·sc] with row stride ldc, and its expectation and bound at e[b·M·N] and bound[b·M·N]. The
// metrics are those of the batch's results taken together; FirstBad indexes them concatenated
// (b·M·N + i·N + j).
func CompareBatch(batch, m, n int, c []float32, sc, ldc int, e, bound []float64, scale float64) Metrics {
	total := batch * m // rows of all results; row r is row r%m of result r/m
	rows := max(1, compareElems/max(n, 1))
	chunks := (total + rows - 1) / rows
	parts := make([]Part, max(chunks, 1))
	crow := func(r int) []float32 {
		off := (r/m)*sc + (r%m)*ldc
		return c[off : off+n]
	}
	if chunks <= 1 {
		parts[0] = compareRange(0, total, n, crow, e, bound, scale)
	} else {
		var wg sync.WaitGroup
		next := make(chan int)
		for w := 0; w < min(runtime.NumCPU(), chunks); w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ch := range next {
					parts[ch] = compareRange(ch*rows, min(total, (ch+1)*rows), n, crow, e, bound, scale)
				}
			}()
		}
		for ch := 0; ch < chunks; ch++ {
			next <- ch
		}
		close(next)
		wg.Wait()
	}
	return Merge(parts, total*n)
}

// Merge returns the metrics of the parts of one comparison of `elements` elements: sums add in
// part order, and the first bad element is the least FirstBad of the parts that have one, so the
// parts may hold any subsets of the elements. CompareBatch merges its chunks with it, and the
// worker the blocks of its device-side comparison.
func Merge(parts []Part, elements int) Metrics {
	met := Metrics{FirstBad: -1}
	var sumSq, sumRef float64
	finite := 0
	for _, p := range parts {
		if p.Bad > 0 && (met.FirstBad < 0 || p.FirstBad < met.FirstBad) {
			met.FirstBad = p.FirstBad
		}
		met.Bad += p.Bad
		met.NonFinite += p.NonFinite
		met.MaxAbs = max(met.MaxAbs, p.MaxAbs)
		met.MaxRel = max(met.MaxRel, p.MaxRel)
		met.Worst = max(met.Worst, p.Worst)
		sumSq += p.SumSq
		sumRef += p.SumRef
		finite += p.Finite
	}
	if finite > 0 {
		met.MSE = sumSq / float64(finite)
	}
	switch {
	case sumRef > 0:
		met.NormRel = math.Sqrt(sumSq / sumRef)
	case sumSq > 0:
		met.NormRel = math.Inf(1)
	}
	if elements > 0 {
		met.MismatchPct = 100 * float64(met.Bad) / float64(elements)
	}
	return met
}

// compareElems is about how many elements one chunk of Compare holds.
const compareElems = 1 << 18

// Part is a comparison's result over some of its elements: the metrics, and the sums and count of
// finite elements that MSE and NormRel are made of (Merge).
type Part struct {
	Metrics
	// SumSq and SumRef are Σ(C−E)² and ΣE² over the finite elements; Finite counts them.
	SumSq, SumRef float64
	Finite        int
}

func compareRange(i0, i1, n int, crow func(int) []float32, e, bound []float64, scale float64) Part {
	p := Part{Metrics: Metrics{FirstBad: -1}}
	for i := i0; i < i1; i++ {
		row := crow(i)
		for j := 0; j < n; j++ {
			x := i*n + j
			got := float64(row[j])
			want := e[x]
			if math.IsNaN(got) || math.IsInf(got, 0) {
				p.NonFinite++
				p.markBad(int64(x))
				p.Worst = math.Inf(1)
				continue
			}
			d := math.Abs(got - want)
			p.Finite++
			p.SumSq += d * d
			p.SumRef += want * want
			if d > p.MaxAbs {
				p.MaxAbs = d
			}
			if want != 0 {
				if r := d / math.Abs(want); r > p.MaxRel {
					p.MaxRel = r
				}
			}
			tol := scale*bound[x] + Tiny
			if w := d / tol; w > p.Worst {
				p.Worst = w
			}
			if d > tol {
				p.markBad(int64(x))
			}
		}
	}
	return p
}

func (m *Metrics) markBad(x int64) {
	if m.Bad == 0 {
		m.FirstBad = x
	}
	m.Bad++
}

// Reason describes a failed comparison in one line ("" when it passed).
func (m Metrics) Reason(n int) string {
	return m.ReasonBatch(0, n)
}

// ReasonBatch is Reason for CompareBatch's metrics over results of M rows (M 0: one result); the
// first bad element is named with its product when there are several.
func (m Metrics) ReasonBatch(rowsPerResult, n int) string {
	if m.Pass() {
		return ""
	}
	i, j := m.FirstBad/int64(n), m.FirstBad%int64(n)
	at := fmt.Sprintf("(%d,%d)", i, j)
	if rowsPerResult > 0 {
		at = fmt.Sprintf("(%d,%d) of product %d", i%int64(rowsPerResult), j, i/int64(rowsPerResult))
	}
	msg := fmt.Sprintf("%d elements (%.4g%%) over tolerance, first at %s", m.Bad, m.MismatchPct, at)
	if m.NonFinite > 0 {
		msg += fmt.Sprintf(", %d NaN/Inf", m.NonFinite)
	}
	return msg
}

// Sentinel is the bit pattern written around and between the rows of C (padding columns and guard
// zones) that a kernel must leave untouched: a quiet NaN with a payload no arithmetic produces.
const Sentinel uint32 = 0x7FC0FFEE

// SentinelBroken returns the index (into c) of the first element that should hold Sentinel but
// does not, or -1: the guard zones c[:front] and c[len(c)-back:], and the padding columns
// n..ldc-1 of each of the m rows that start at c[front].
func SentinelBroken(c []float32, front, back, m, n, ldc int) int {
	return SentinelBrokenBatch(c, front, back, 1, 0, m, n, ldc)
}

// SentinelBrokenBatch is SentinelBroken for batch results of m rows, result b starting at
// c[front + b·sc] (sc ≥ m·ldc, or 0 with one result): every element outside the results' m×n
// elements, between the guards included, must hold Sentinel.
func SentinelBrokenBatch(c []float32, front, back, batch, sc, m, n, ldc int) int {
	_ = back // the back guard is everything after the last result
	x := 0
	for b := 0; b < batch; b++ {
		start := front + b*sc
		for ; x < start; x++ { // before C, or the gap after the previous result
			if math.Float32bits(c[x]) != Sentinel {
				return x
			}
		}
		for i := 0; i < m; i++ {
			for j := n; j < ldc; j++ {
				if y := start + i*ldc + j; math.Float32bits(c[y]) != Sentinel {
					return y
				}
			}
		}
		x = start + m*ldc
	}
	for ; x < len(c); x++ {
		if math.Float32bits(c[x]) != Sentinel {
			return x
		}
	}
	return -1
}

// CrossCheck compares a GPU float64 reference (R, S) against the CPU one and returns an error
// naming the first element where they differ by more than relTol·S_ij (S bounds the sum's
// magnitude, so cancellation in R cannot make the check spuriously strict).
func CrossCheck(gpuR, gpuS, cpuR, cpuS []float64, n int, relTol float64) error {
	if len(gpuR) != len(cpuR) || len(gpuS) != len(cpuS) || len(gpuR) != len(gpuS) {
		return fmt.Errorf("reference sizes differ: gpu %d/%d, cpu %d/%d", len(gpuR), len(gpuS), len(cpuR), len(cpuS))
	}
	for x := range cpuR {
		lim := relTol*cpuS[x] + Tiny
		if d := math.Abs(gpuR[x] - cpuR[x]); !(d <= lim) {
			return fmt.Errorf("reference mismatch at (%d,%d): gpu %g, cpu %g", x/n, x%n, gpuR[x], cpuR[x])
		}
		if d := math.Abs(gpuS[x] - cpuS[x]); !(d <= lim) {
			return fmt.Errorf("reference |A|·|B| mismatch at (%d,%d): gpu %g, cpu %g", x/n, x%n, gpuS[x], cpuS[x])
		}
	}
	return nil
}
