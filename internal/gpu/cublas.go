package gpu

// cuBLAS is opened at run time with dlopen so that the worker builds and runs where it is absent
// (its timing is then skipped with a note). Only the handful of entry points the baseline needs are
// resolved; the C declarations mirror cublas_api.h so no cuBLAS header is needed at build time.

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

typedef int (*tg_create_t)(void **handle);
typedef int (*tg_destroy_t)(void *handle);
typedef int (*tg_version_t)(void *handle, int *version);
typedef int (*tg_setstream_t)(void *handle, void *stream);
typedef int (*tg_setmath_t)(void *handle, int mode);
typedef int (*tg_sgemm_t)(void *handle, int transa, int transb, int m, int n, int k,
                          const float *alpha, const float *A, int lda, const float *B, int ldb,
                          const float *beta, float *C, int ldc);
typedef int (*tg_sgemm_sb_t)(void *handle, int transa, int transb, int m, int n, int k,
                             const float *alpha, const float *A, int lda, long long strideA,
                             const float *B, int ldb, long long strideB, const float *beta,
                             float *C, int ldc, long long strideC, int batch);

typedef struct {
	void *lib;
	tg_create_t create;
	tg_destroy_t destroy;
	tg_version_t version;
	tg_setstream_t setstream;
	tg_setmath_t setmath;
	tg_sgemm_t sgemm;
	tg_sgemm_sb_t sgemm_sb;
	void *handle;
} tg_cublas;

static const char *tg_dlerror(void) {
	const char *e = dlerror();
	return e ? e : "unknown dlerror";
}

static void *tg_dlopen(const char *name) { return dlopen(name, RTLD_NOW | RTLD_LOCAL); }

// tg_resolve fills the function pointers; it returns the name of the first missing symbol or NULL.
static const char *tg_resolve(tg_cublas *c) {
	if (!(c->create = (tg_create_t)dlsym(c->lib, "cublasCreate_v2"))) return "cublasCreate_v2";
	if (!(c->destroy = (tg_destroy_t)dlsym(c->lib, "cublasDestroy_v2"))) return "cublasDestroy_v2";
	if (!(c->version = (tg_version_t)dlsym(c->lib, "cublasGetVersion_v2"))) return "cublasGetVersion_v2";
	if (!(c->setstream = (tg_setstream_t)dlsym(c->lib, "cublasSetStream_v2"))) return "cublasSetStream_v2";
	if (!(c->setmath = (tg_setmath_t)dlsym(c->lib, "cublasSetMathMode"))) return "cublasSetMathMode";
	if (!(c->sgemm = (tg_sgemm_t)dlsym(c->lib, "cublasSgemm_v2"))) return "cublasSgemm_v2";
	if (!(c->sgemm_sb = (tg_sgemm_sb_t)dlsym(c->lib, "cublasSgemmStridedBatched"))) return "cublasSgemmStridedBatched";
	return NULL;
}

// tg_path is the file the library was actually loaded from.
static const char *tg_path(tg_cublas *c) {
	Dl_info info;
	if (dladdr((void *)c->create, &info) && info.dli_fname) return info.dli_fname;
	return "";
}

static int tg_create(tg_cublas *c) { return c->create(&c->handle); }
static int tg_destroy(tg_cublas *c) { return c->destroy(c->handle); }
static int tg_version(tg_cublas *c, int *v) { return c->version(c->handle, v); }
static int tg_setstream(tg_cublas *c, void *s) { return c->setstream(c->handle, s); }
static int tg_setmath(tg_cublas *c, int mode) { return c->setmath(c->handle, mode); }

// tg_sgemm_rowmajor computes row-major C (m×n) = alpha·op(A)·op(B) + beta·C through
// column-major cuBLAS: a row-major matrix is its transpose in column-major, and
// Cᵀ = op(B)ᵀ·op(A)ᵀ, so cuBLAS is asked for an n×m product of B and A. Read column-major, a
// stored row-major B is Bᵀ when op(B) = B (so cuBLAS's op is N) and op(B) when op(B) = Bᵀ (T):
// cuBLAS's transa is the row-major transb and its transb the row-major transa (0 N, 1 T).
static int tg_sgemm_rowmajor(tg_cublas *c, int transa, int transb, int m, int n, int k, float alpha,
                             uintptr_t A, int lda, uintptr_t B, int ldb, float beta, uintptr_t C, int ldc) {
	return c->sgemm(c->handle, transb, transa, n, m, k, &alpha, (const float *)B, ldb, (const float *)A, lda,
	                &beta, (float *)C, ldc);
}

// tg_sgemm_sb_rowmajor is tg_sgemm_rowmajor for a strided batch (cublasSgemmStridedBatched), the
// strides swapped with their operands.
static int tg_sgemm_sb_rowmajor(tg_cublas *c, int transa, int transb, int m, int n, int k, float alpha,
                                uintptr_t A, int lda, long long sa, uintptr_t B, int ldb, long long sb,
                                float beta, uintptr_t C, int ldc, long long sc, int batch) {
	return c->sgemm_sb(c->handle, transb, transa, n, m, k, &alpha, (const float *)B, ldb, sb,
	                   (const float *)A, lda, sa, &beta, (float *)C, ldc, sc, batch);
}
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"

	"gorgonia.org/cu"

	"tilegen/internal/variant"
)

// cublasDefaultMath is CUBLAS_DEFAULT_MATH: full FP32 arithmetic; TF32 tensor cores are used only
// under CUBLAS_TF32_TENSOR_OP_MATH, which the baseline must not get (the variants are true FP32).
const cublasDefaultMath = 0

// cublasTF32TensorOpMath is CUBLAS_TF32_TENSOR_OP_MATH: SGEMM on TF32 tensor cores, the baseline of
// precision tf32 only.
const cublasTF32TensorOpMath = 3

// cublasStatusExecutionFailed is CUBLAS_STATUS_EXECUTION_FAILED: the kernel failed on the GPU.
const cublasStatusExecutionFailed = 13

// cublasCandidates are tried in order; the unversioned name is what a development install links.
var cublasCandidates = []string{
	"libcublas.so", "libcublas.so.13", "libcublas.so.12", "libcublas.so.11",
	"/usr/local/cuda/lib64/libcublas.so", "/usr/local/cuda/lib64/libcublas.so.13",
	"/usr/local/cuda/lib64/libcublas.so.12", "/usr/local/cuda/lib64/libcublas.so.11",
}

// cublas is an open cuBLAS handle bound to the worker's context and stream.
type cublas struct {
	c       *C.tg_cublas // C memory: the struct holds the handle cuBLAS writes through a pointer
	Path    string
	Version int
}

// openCublas loads cuBLAS and creates a handle in the context current on this thread (the CUDA
// runtime inside cuBLAS adopts the driver context that is current when it is first called), on
// stream, with FP32 (non-TF32) math.
func openCublas(stream cu.Stream) (*cublas, error) {
	c := (*C.tg_cublas)(C.calloc(1, C.size_t(unsafe.Sizeof(C.tg_cublas{}))))
	var tried []string
	for _, name := range cublasCandidates {
		cname := C.CString(name)
		lib := C.tg_dlopen(cname)
		C.free(unsafe.Pointer(cname))
		if lib == nil {
			tried = append(tried, C.GoString(C.tg_dlerror()))
			continue
		}
		c.lib = lib
		break
	}
	if c.lib == nil {
		C.free(unsafe.Pointer(c))
		return nil, fmt.Errorf("cuBLAS not found: %s", strings.Join(tried, "; "))
	}
	fail := func(err error) (*cublas, error) {
		C.dlclose(c.lib)
		C.free(unsafe.Pointer(c))
		return nil, err
	}
	if missing := C.tg_resolve(c); missing != nil {
		return fail(fmt.Errorf("cuBLAS at %s lacks %s", C.GoString(C.tg_path(c)), C.GoString(missing)))
	}
	b := &cublas{c: c, Path: C.GoString(C.tg_path(c))}
	if st := C.tg_create(c); st != 0 {
		return fail(fmt.Errorf("cublasCreate: status %d", int(st)))
	}
	var v C.int
	if st := C.tg_version(c, &v); st != 0 {
		C.tg_destroy(c)
		return fail(fmt.Errorf("cublasGetVersion: status %d", int(st)))
	}
	b.Version = int(v)
	if st := C.tg_setstream(c, streamHandle(stream)); st != 0 {
		C.tg_destroy(c)
		return fail(fmt.Errorf("cublasSetStream: status %d", int(st)))
	}
	if st := C.tg_setmath(c, cublasDefaultMath); st != 0 {
		C.tg_destroy(c)
		return fail(fmt.Errorf("cublasSetMathMode(DEFAULT): status %d", int(st)))
	}
	return b, nil
}

// sgemm enqueues row-major C = alpha·A·B + beta·C on the handle's stream.
func (b *cublas) sgemm(m, n, k int, alpha float32, a cu.DevicePtr, lda int, bm cu.DevicePtr, ldb int,
	beta float32, c cu.DevicePtr, ldc int) error {
	return b.sgemmOp(variant.OpNN, m, n, k, alpha, a, lda, bm, ldb, beta, c, ldc)
}

// gemm is the launcher of cuBLAS's SGEMM for row-major problems of op: cublasSgemm for one product,
// cublasSgemmStridedBatched for a batch.
func (b *cublas) gemm(op variant.Op) gemmFunc {
	return func(m, n, k int, alpha float32, a cu.DevicePtr, lda int, bm cu.DevicePtr, ldb int,
		beta float32, c cu.DevicePtr, ldc int, bt batchArgs) error {
		if bt.count > 0 {
			return b.sgemmBatched(op, m, n, k, alpha, a, lda, bt.sa, bm, ldb, bt.sb, beta, c, ldc, bt.sc, bt.count)
		}
		return b.sgemmOp(op, m, n, k, alpha, a, lda, bm, ldb, beta, c, ldc)
	}
}

// gemmPrecision is gemm in the math mode of precision p's baseline: FP32 (cuBLAS's default math)
// for fp32 and 3xtf32, TF32 tensor-op math for tf32. The mode is set for the call and restored
// after it, so every other call keeps FP32 math.
func (b *cublas) gemmPrecision(op variant.Op, p variant.Precision) gemmFunc {
	g := b.gemm(op)
	if p.FP32Accurate() {
		return g
	}
	return func(m, n, k int, alpha float32, a cu.DevicePtr, lda int, bm cu.DevicePtr, ldb int,
		beta float32, c cu.DevicePtr, ldc int, bt batchArgs) error {
		if st := C.tg_setmath(b.c, cublasTF32TensorOpMath); st != 0 {
			return fmt.Errorf("cublasSetMathMode(TF32_TENSOR_OP): status %d", int(st))
		}
		err := g(m, n, k, alpha, a, lda, bm, ldb, beta, c, ldc, bt)
		if st := C.tg_setmath(b.c, cublasDefaultMath); st != 0 && err == nil {
			err = fmt.Errorf("cublasSetMathMode(DEFAULT): status %d", int(st))
		}
		return err
	}
}

// sgemmBatched enqueues a strided batch of row-major C = alpha·op(A)·op(B) + beta·C.
func (b *cublas) sgemmBatched(op variant.Op, m, n, k int, alpha float32, a cu.DevicePtr, lda int, sa int64,
	bm cu.DevicePtr, ldb int, sb int64, beta float32, c cu.DevicePtr, ldc int, sc int64, batch int) error {
	st := C.tg_sgemm_sb_rowmajor(b.c, C.int(b2i(op.TransA())), C.int(b2i(op.TransB())), C.int(m), C.int(n), C.int(k),
		C.float(alpha), C.uintptr_t(a), C.int(lda), C.longlong(sa), C.uintptr_t(bm), C.int(ldb), C.longlong(sb),
		C.float(beta), C.uintptr_t(c), C.int(ldc), C.longlong(sc), C.int(batch))
	return b.status("cublasSgemmStridedBatched", op, st)
}

// sgemmOp enqueues row-major C = alpha·op(A)·op(B) + beta·C on the handle's stream.
func (b *cublas) sgemmOp(op variant.Op, m, n, k int, alpha float32, a cu.DevicePtr, lda int, bm cu.DevicePtr, ldb int,
	beta float32, c cu.DevicePtr, ldc int) error {
	st := C.tg_sgemm_rowmajor(b.c, C.int(b2i(op.TransA())), C.int(b2i(op.TransB())), C.int(m), C.int(n), C.int(k),
		C.float(alpha), C.uintptr_t(a), C.int(lda), C.uintptr_t(bm), C.int(ldb), C.float(beta), C.uintptr_t(c), C.int(ldc))
	return b.status("cublasSgemm", op, st)
}

// status turns a cuBLAS status into an error (nil for success).
func (b *cublas) status(fn string, op variant.Op, st C.int) error {
	if st == 0 {
		return nil
	}
	err := fmt.Errorf("%s (%s): status %d", fn, op, int(st))
	if st == cublasStatusExecutionFailed {
		// The device faulted under cuBLAS: the context is as unusable as after a variant's fault.
		if serr := ctxSynchronize(); serr != nil {
			err = fmt.Errorf("%w (%v)", err, serr)
		}
		return &FatalError{Err: err}
	}
	return err
}

func (b *cublas) close() {
	C.tg_destroy(b.c)
	C.dlclose(b.c.lib)
	C.free(unsafe.Pointer(b.c))
}
