package gpu

import (
	"gorgonia.org/cu"

	"tilegen/internal/variant"
)

// Cublas is the worker's run-time-loaded cuBLAS (see cublas.go) for other GPU programs and tests in
// this module, such as the GPU test of an exported package (examples/export-go). It is loaded with
// dlopen, not linked, so a binary built against one CUDA version runs where another is installed.
// Math mode is CUBLAS_DEFAULT_MATH: full FP32, no TF32.
//
// Like every cu call, open, use and close it on one OS thread whose current context is the one the
// stream belongs to.
type Cublas struct{ b *cublas }

// OpenCublas loads cuBLAS and creates a handle in the current context, bound to stream.
func OpenCublas(stream cu.Stream) (*Cublas, error) {
	b, err := openCublas(stream)
	if err != nil {
		return nil, err
	}
	return &Cublas{b: b}, nil
}

// Sgemm enqueues row-major C = alpha·A·B + beta·C (A M×K with row stride lda, B K×N with ldb, C M×N
// with ldc) on the handle's stream; beta == 0 means C is not read. A *FatalError means the device
// faulted and the context is unusable.
func (c *Cublas) Sgemm(m, n, k int, alpha float32, a cu.DevicePtr, lda int, b cu.DevicePtr, ldb int,
	beta float32, cm cu.DevicePtr, ldc int) error {
	return c.b.sgemm(m, n, k, alpha, a, lda, b, ldb, beta, cm, ldc)
}

// SgemmOp is Sgemm for row-major C = alpha·op(A)·op(B) + beta·C, A and B stored as variant.Op says.
func (c *Cublas) SgemmOp(op variant.Op, m, n, k int, alpha float32, a cu.DevicePtr, lda int, b cu.DevicePtr, ldb int,
	beta float32, cm cu.DevicePtr, ldc int) error {
	return c.b.sgemmOp(op, m, n, k, alpha, a, lda, b, ldb, beta, cm, ldc)
}

// SgemmStridedBatchedOp enqueues batch row-major products C_i = alpha·op(A_i)·op(B_i) + beta·C_i,
// X_i = X + i·strideX elements (cublasSgemmStridedBatched).
func (c *Cublas) SgemmStridedBatchedOp(op variant.Op, m, n, k int, alpha float32, a cu.DevicePtr, lda int, strideA int64,
	b cu.DevicePtr, ldb int, strideB int64, beta float32, cm cu.DevicePtr, ldc int, strideC int64, batch int) error {
	return c.b.sgemmBatched(op, m, n, k, alpha, a, lda, strideA, b, ldb, strideB, beta, cm, ldc, strideC, batch)
}

// Version is cublasGetVersion's answer, e.g. 130100 for cuBLAS 13.1.
func (c *Cublas) Version() int { return c.b.Version }

// Path is the file the library was loaded from.
func (c *Cublas) Path() string { return c.b.Path }

// Close destroys the handle and unloads the library.
func (c *Cublas) Close() { c.b.close() }
