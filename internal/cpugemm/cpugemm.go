// Package cpugemm is single-precision GEMM on the CPU in plain Go: the seeds' two CPU baselines,
// a naive triple loop and a cache-blocked kernel spread over goroutines. Both take row-major
// operands with BLAS-style leading dimensions, the same layout as the GPU kernels:
//
//	C (M×N, row stride ldc) = A (M×K, row stride lda) · B (K×N, row stride ldb)
//
// Naive and Blocked overwrite C (β = 0: C is never read, so it may hold NaN); BlockedAlphaBeta
// computes C = α·A·B + β·C and reads C only when β ≠ 0. Elements of A, B and C outside the
// M×K, K×N and M×N windows (padding between rows) are neither read nor written.
//
// Dimensions that are inconsistent with the slices are programming errors and panic (as the
// reference BLAS does through xerbla); Check reports the same conditions as an error for callers
// that take shapes from their users.
//
// Accumulation is float32 in ascending k order within a block of K, like the GPU kernels, so the
// results differ from a float64 reference by the usual rounding of a K-term dot product.
package cpugemm

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// Block sizes of Blocked: a tile of C is blockM×blockN, and K is walked blockK at a time so that
// the blockK×blockN panel of B (64 KiB of float32) stays in the core's L2 while every row of the
// C tile streams over it.
const (
	blockM = 32
	blockN = 128
	blockK = 128
)

// Check reports whether the slices hold an M×K A, a K×N B and an M×N C with the given leading
// dimensions.
func Check(m, n, k int, la, lda, lb, ldb, lc, ldc int) error {
	switch {
	case m < 1 || n < 1 || k < 1:
		return fmt.Errorf("shape %dx%dx%d: every dimension must be at least 1", m, n, k)
	case lda < k || ldb < n || ldc < n:
		return fmt.Errorf("leading dimensions lda=%d ldb=%d ldc=%d too small for K=%d N=%d", lda, ldb, ldc, k, n)
	case la < (m-1)*lda+k:
		return fmt.Errorf("A holds %d elements, need %d", la, (m-1)*lda+k)
	case lb < (k-1)*ldb+n:
		return fmt.Errorf("B holds %d elements, need %d", lb, (k-1)*ldb+n)
	case lc < (m-1)*ldc+n:
		return fmt.Errorf("C holds %d elements, need %d", lc, (m-1)*ldc+n)
	}
	return nil
}

func mustCheck(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if err := Check(m, n, k, len(a), lda, len(b), ldb, len(c), ldc); err != nil {
		panic("cpugemm: " + err.Error())
	}
}

// Naive computes C = A·B with the textbook triple loop, one dot product of a row of A and a
// column of B per element, on the calling goroutine: the seeds' CPU baseline, whose strided
// walk down B's columns is what the blocked kernel and the GPU are measured against.
func Naive(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	mustCheck(m, n, k, a, lda, b, ldb, c, ldc)
	for i := 0; i < m; i++ {
		arow := a[i*lda : i*lda+k]
		for j := 0; j < n; j++ {
			var acc float32
			for p, av := range arow {
				acc += av * b[p*ldb+j]
			}
			c[i*ldc+j] = acc
		}
	}
}

// Blocked computes C = A·B with cache blocking over goroutines; workers < 1 means GOMAXPROCS.
func Blocked(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, workers int) {
	BlockedAlphaBeta(m, n, k, 1, a, lda, b, ldb, 0, c, ldc, workers)
}

// BlockedAlphaBeta computes C = alpha·A·B + beta·C with cache blocking over goroutines; C is not
// read when beta == 0. workers < 1 means GOMAXPROCS. Tiles of C are handed out from a shared
// counter, so each worker owns whole tiles and no two goroutines write the same element.
func BlockedAlphaBeta(m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int,
	beta float32, c []float32, ldc int, workers int) {
	mustCheck(m, n, k, a, lda, b, ldb, c, ldc)
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	tilesN := (n + blockN - 1) / blockN
	tiles := ((m + blockM - 1) / blockM) * tilesN
	workers = min(workers, tiles)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			acc := make([]float32, blockM*blockN)
			panel := make([]float32, blockK*blockN)
			for {
				t := int(next.Add(1) - 1)
				if t >= tiles {
					return
				}
				i0, j0 := (t/tilesN)*blockM, (t%tilesN)*blockN
				tile(m, n, k, i0, j0, alpha, a, lda, b, ldb, beta, c, ldc, acc, panel)
			}
		}()
	}
	wg.Wait()
}

// tile computes the C tile at (i0, j0) into acc and then stores alpha·acc (+ beta·C). Each
// blockK×cols panel of B is first copied into the contiguous panel buffer: with a power-of-two
// ldb the rows of B map onto the same few cache sets, and the copy (1/blockM of the arithmetic)
// removes that conflict.
func tile(m, n, k, i0, j0 int, alpha float32, a []float32, lda int, b []float32, ldb int,
	beta float32, c []float32, ldc int, acc, panel []float32) {
	rows, cols := min(blockM, m-i0), min(blockN, n-j0)
	clear(acc)
	for p0 := 0; p0 < k; p0 += blockK {
		p1 := min(p0+blockK, k)
		for p := p0; p < p1; p++ {
			copy(panel[(p-p0)*cols:(p-p0+1)*cols], b[p*ldb+j0:p*ldb+j0+cols])
		}
		for ii := 0; ii < rows; ii++ {
			arow := a[(i0+ii)*lda+p0 : (i0+ii)*lda+p1]
			crow := acc[ii*blockN : ii*blockN+cols]
			for pp, av := range arow {
				// i-k-j order: a scalar of A times a contiguous row segment of B, which the
				// compiler streams without bounds checks once brow and crow have one length.
				brow := panel[pp*cols : (pp+1)*cols]
				brow = brow[:len(crow)]
				for j, bv := range brow {
					crow[j] += av * bv
				}
			}
		}
	}
	for ii := 0; ii < rows; ii++ {
		crow := c[(i0+ii)*ldc+j0 : (i0+ii)*ldc+j0+cols]
		arow := acc[ii*blockN : ii*blockN+cols]
		if beta == 0 {
			for j, v := range arow {
				crow[j] = alpha * v
			}
			continue
		}
		for j, v := range arow {
			crow[j] = alpha*v + beta*crow[j]
		}
	}
}
