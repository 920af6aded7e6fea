package variant

// Restated is a row-major problem written as another op's: Op on M×N×K with leading dimensions LDA,
// LDB, LDC, whose first operand is the caller's B and second the caller's A when Swap is set (the
// same memory as the caller's C either way).
type Restated struct {
	Op            Op
	M, N, K       int
	LDA, LDB, LDC int
	Swap          bool
}

// Restate writes a problem of op whose op(A) or op(B) is a vector (M or N is 1) as the same
// computation on the same memory under NN where it can, so that the NN kernels tuned for GEMV-like
// shapes (M or N at most 16) serve every op's GEMV. A transpose of a vector changes only the stride
// of its elements, and a 1×N row of C is also an N×1 column, so:
//
//   - N = 1, op(B) = T: B stored 1×K is a K×1 column with row stride 1 (ldb 1);
//   - M = 1, op(A) = T, lda = 1: A stored K×1 packed is a 1×K row (lda K);
//   - M = 1 < N, op(B) = T: C (1×N) is Cᵀ (N×1, ldc 1) = B (stored N×K, NN's first operand, lda ← ldb)
//     times op(A)ᵀ, a K×1 column with row stride 1 (op(A) = N) or lda (op(A) = T);
//   - N = 1 < M, op(A) = T, op(B) = N with ldb = 1 and ldc = 1: C (M×1, packed) is Cᵀ (1×M) = op(B)ᵀ,
//     a 1×K row, times A (stored K×M, NN's second operand, ldb ← lda).
//
// The result is the problem unchanged (Restated{Op: op, ...}, Swap false) when none applies or the
// leading dimensions break op's rules (lda, ldb, ldc below the stored widths: the caller's error
// then stays the caller's). A restated problem whose NN kernels cannot take it (a strided vector
// where a kernel wants float4 rows) is the dispatch's to skip.
func (o Op) Restate(m, n, k, lda, ldb, ldc int) Restated {
	r := Restated{Op: o, M: m, N: n, K: k, LDA: lda, LDB: ldb, LDC: ldc}
	if !o.Valid() || m < 1 || n < 1 || k < 1 {
		return r
	}
	if wa, wb, wc := o.DenseLD(m, n, k); lda < wa || ldb < wb || ldc < wc {
		return r
	}
	ta, tb := o.TransA(), o.TransB()
	if n == 1 && tb {
		tb, ldb = false, 1
	}
	if m == 1 && ta && lda == 1 {
		ta, lda = false, k
	}
	switch {
	case m == 1 && n > 1 && tb:
		stride := 1
		if ta {
			stride = lda
		}
		return Restated{Op: OpNN, M: n, N: 1, K: k, LDA: ldb, LDB: stride, LDC: 1, Swap: true}
	case n == 1 && m > 1 && ta && !tb && ldb == 1 && ldc == 1:
		return Restated{Op: OpNN, M: 1, N: m, K: k, LDA: k, LDB: lda, LDC: m, Swap: true}
	}
	r.Op, r.LDA, r.LDB = OpOf(ta, tb), lda, ldb
	return r
}

// Changed reports whether r is another problem than op's on m, n, k, lda, ldb, ldc.
func (r Restated) Changed(op Op, m, n, k, lda, ldb, ldc int) bool {
	return r != Restated{Op: op, M: m, N: n, K: k, LDA: lda, LDB: ldb, LDC: ldc}
}
