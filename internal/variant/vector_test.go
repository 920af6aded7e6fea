package variant

import (
	"math/rand"
	"testing"
)

// gemmRef computes the row-major C = op(A)·op(B) (alpha 1, beta 0) of op in float64 from buffers
// that hold exactly the stored matrices (an element past them panics), writing C's M×N elements.
func gemmRef(op Op, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for p := 0; p < k; p++ {
				var av, bv float64
				if op.TransA() {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if op.TransB() {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += av * bv
			}
			c[i*ldc+j] = s
		}
	}
}

// stored is the length of a buffer holding a rows×cols matrix with row stride ld.
func stored(rows, cols, ld int) int { return (rows-1)*ld + cols }

// TestRestateComputesTheSameProduct: for every op and vector shape (M or N of 1, both, and neither),
// with packed and padded leading dimensions, the restated problem run on the same buffers (swapped
// when Swap says) writes the same C, reads nothing outside the caller's matrices, and keeps NN's
// leading-dimension rules; the restatements the doc promises happen.
func TestRestateComputesTheSameProduct(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	changed := map[Op]int{}
	for _, op := range Ops {
		for _, sh := range [][3]int{{1, 7, 5}, {6, 1, 5}, {1, 1, 9}, {1, 64, 1}, {33, 1, 1}, {3, 4, 5}, {2, 1, 3}} {
			m, n, k := sh[0], sh[1], sh[2]
			for _, pad := range [][3]int{{0, 0, 0}, {1, 0, 0}, {0, 2, 0}, {0, 0, 3}, {2, 1, 1}} {
				lda, ldb, ldc := op.DenseLD(m, n, k)
				lda, ldb, ldc = lda+pad[0], ldb+pad[1], ldc+pad[2]
				ra, ca := op.StoredA(m, k)
				rb, cb := op.StoredB(k, n)
				a := make([]float64, stored(ra, ca, lda))
				b := make([]float64, stored(rb, cb, ldb))
				for i := range a {
					a[i] = rng.NormFloat64()
				}
				for i := range b {
					b[i] = rng.NormFloat64()
				}
				want := make([]float64, stored(m, n, ldc))
				gemmRef(op, m, n, k, a, lda, b, ldb, want, ldc)

				r := op.Restate(m, n, k, lda, ldb, ldc)
				if !r.Changed(op, m, n, k, lda, ldb, ldc) {
					continue
				}
				changed[op]++
				if wa, wb, wc := r.Op.DenseLD(r.M, r.N, r.K); r.LDA < wa || r.LDB < wb || r.LDC < wc || r.K != k || r.M*r.N != m*n {
					t.Fatalf("%s %dx%dx%d lda=%d ldb=%d ldc=%d: restated %+v breaks its op's rules", op, m, n, k, lda, ldb, ldc, r)
				}
				x, y := a, b
				if r.Swap {
					x, y = b, a
				}
				got := make([]float64, len(want))
				func() {
					defer func() {
						if e := recover(); e != nil {
							t.Fatalf("%s %dx%dx%d lda=%d ldb=%d ldc=%d: restated %+v reads or writes outside the caller's matrices: %v", op, m, n, k, lda, ldb, ldc, r, e)
						}
					}()
					gemmRef(r.Op, r.M, r.N, r.K, x, r.LDA, y, r.LDB, got, r.LDC)
				}()
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						if got[i*ldc+j] != want[i*ldc+j] {
							t.Fatalf("%s %dx%dx%d lda=%d ldb=%d ldc=%d: restated %+v: C[%d][%d] = %v, want %v", op, m, n, k, lda, ldb, ldc, r, i, j, got[i*ldc+j], want[i*ldc+j])
						}
					}
				}
			}
		}
	}
	// Every transposed op has vector problems it restates.
	for _, op := range []Op{OpNT, OpTN, OpTT} {
		if changed[op] == 0 {
			t.Errorf("%s: no problem restated", op)
		}
	}
	if changed[OpNN] != 0 {
		t.Errorf("NN restated %d problems: it is the target", changed[OpNN])
	}
}

// TestRestateCases pins the restatements: the GEMV-like problems of every op land on NN where the
// memory allows, and nothing else moves.
func TestRestateCases(t *testing.T) {
	for _, c := range []struct {
		op                 Op
		m, n, k, a, b, ldc int
		want               Restated
	}{
		// a linear layer at batch 1, y = x·Wᵀ (W stored out×in): NT 1×N×K is B·xᵀ, NN N×1×K
		{OpNT, 1, 4096, 1024, 1024, 1024, 4096, Restated{OpNN, 4096, 1, 1024, 1024, 1, 1, true}},
		// NT M×1×K: B stored 1×K is a packed column
		{OpNT, 512, 1, 300, 300, 300, 1, Restated{OpNN, 512, 1, 300, 300, 1, 1, false}},
		// TN 1×N×K with a packed A column: an NN row
		{OpTN, 1, 256, 64, 1, 256, 256, Restated{OpNN, 1, 256, 64, 64, 256, 256, false}},
		// TN 1×N×K with a strided A column: stays (NN's A rows are contiguous)
		{OpTN, 1, 256, 64, 3, 256, 256, Restated{OpTN, 1, 256, 64, 3, 256, 256, false}},
		// TT 1×N×K with a strided A column: B·op(A)ᵀ, the column's stride as ldb
		{OpTT, 1, 256, 64, 3, 64, 256, Restated{OpNN, 256, 1, 64, 64, 3, 1, true}},
		// TN M×1×K, packed B and C: op(B)ᵀ·A, NN 1×M×K
		{OpTN, 700, 1, 96, 700, 1, 1, Restated{OpNN, 1, 700, 96, 96, 700, 700, true}},
		// TN M×1×K with a padded C column: stays
		{OpTN, 700, 1, 96, 700, 1, 2, Restated{OpTN, 700, 1, 96, 700, 1, 2, false}},
		// leading dimensions below NT's rules (ldb < K): the caller's error, not restated
		{OpNT, 1, 4096, 1024, 1024, 1000, 4096, Restated{OpNT, 1, 4096, 1024, 1024, 1000, 4096, false}},
		// not a vector
		{OpNT, 2, 4096, 1024, 1024, 1024, 4096, Restated{OpNT, 2, 4096, 1024, 1024, 1024, 4096, false}},
	} {
		if got := c.op.Restate(c.m, c.n, c.k, c.a, c.b, c.ldc); got != c.want {
			t.Errorf("%s %dx%dx%d lda=%d ldb=%d ldc=%d: %+v, want %+v", c.op, c.m, c.n, c.k, c.a, c.b, c.ldc, got, c.want)
		}
	}
}
