package gpu

// cublasLt is opened at run time with dlopen, like cuBLAS (cublas.go): the worker builds and runs
// where it is absent, and the cublaslt baseline is then skipped with a note. It is the fused-epilogue
// baseline of issue 16: cublasLtMatmul with CUBLASLT_EPILOGUE_BIAS, RELU_BIAS or GELU_BIAS, FP32
// compute (CUBLAS_COMPUTE_32F, no TF32). The C declarations mirror cublasLt.h (enum values and the
// heuristic result's layout) so no cuBLAS header is needed at build time.

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct { uint64_t data[8]; } tg_lt_algo;
typedef struct {
	tg_lt_algo algo;
	size_t workspaceSize;
	int state;
	float wavesCount;
	int reserved[4];
} tg_lt_heur;

typedef int (*tg_lt_create_t)(void **handle);
typedef int (*tg_lt_destroy_t)(void *handle);
typedef size_t (*tg_lt_version_t)(void);
typedef int (*tg_lt_desc_create_t)(void **desc, int computeType, int scaleType);
typedef int (*tg_lt_destroy_obj_t)(void *obj);
typedef int (*tg_lt_set_t)(void *obj, int attr, const void *buf, size_t size);
typedef int (*tg_lt_layout_create_t)(void **layout, int type, uint64_t rows, uint64_t cols, int64_t ld);
typedef int (*tg_lt_pref_create_t)(void **pref);
typedef int (*tg_lt_heur_t)(void *handle, void *desc, void *a, void *b, void *c, void *d, void *pref, int requested,
                            tg_lt_heur *results, int *returned);
typedef int (*tg_lt_matmul_t)(void *handle, void *desc, const void *alpha, const void *A, void *Adesc, const void *B,
                              void *Bdesc, const void *beta, const void *C, void *Cdesc, void *D, void *Ddesc,
                              const tg_lt_algo *algo, void *workspace, size_t workspaceSize, void *stream);

typedef struct {
	void *lib;
	tg_lt_create_t create;
	tg_lt_destroy_t destroy;
	tg_lt_version_t version;
	tg_lt_desc_create_t desc_create;
	tg_lt_destroy_obj_t desc_destroy;
	tg_lt_set_t desc_set;
	tg_lt_layout_create_t layout_create;
	tg_lt_destroy_obj_t layout_destroy;
	tg_lt_set_t layout_set;
	tg_lt_pref_create_t pref_create;
	tg_lt_destroy_obj_t pref_destroy;
	tg_lt_set_t pref_set;
	tg_lt_heur_t heur;
	tg_lt_matmul_t matmul;
	void *handle;
} tg_lt;

static void *tg_lt_dlopen(const char *name) { return dlopen(name, RTLD_NOW | RTLD_LOCAL); }
static const char *tg_lt_dlerror(void) {
	const char *e = dlerror();
	return e ? e : "unknown dlerror";
}

#define TG_LT_SYM(field, type, name) if (!(c->field = (type)dlsym(c->lib, name))) return name
static const char *tg_lt_resolve(tg_lt *c) {
	TG_LT_SYM(create, tg_lt_create_t, "cublasLtCreate");
	TG_LT_SYM(destroy, tg_lt_destroy_t, "cublasLtDestroy");
	TG_LT_SYM(version, tg_lt_version_t, "cublasLtGetVersion");
	TG_LT_SYM(desc_create, tg_lt_desc_create_t, "cublasLtMatmulDescCreate");
	TG_LT_SYM(desc_destroy, tg_lt_destroy_obj_t, "cublasLtMatmulDescDestroy");
	TG_LT_SYM(desc_set, tg_lt_set_t, "cublasLtMatmulDescSetAttribute");
	TG_LT_SYM(layout_create, tg_lt_layout_create_t, "cublasLtMatrixLayoutCreate");
	TG_LT_SYM(layout_destroy, tg_lt_destroy_obj_t, "cublasLtMatrixLayoutDestroy");
	TG_LT_SYM(layout_set, tg_lt_set_t, "cublasLtMatrixLayoutSetAttribute");
	TG_LT_SYM(pref_create, tg_lt_pref_create_t, "cublasLtMatmulPreferenceCreate");
	TG_LT_SYM(pref_destroy, tg_lt_destroy_obj_t, "cublasLtMatmulPreferenceDestroy");
	TG_LT_SYM(pref_set, tg_lt_set_t, "cublasLtMatmulPreferenceSetAttribute");
	TG_LT_SYM(heur, tg_lt_heur_t, "cublasLtMatmulAlgoGetHeuristic");
	TG_LT_SYM(matmul, tg_lt_matmul_t, "cublasLtMatmul");
	return NULL;
}

static const char *tg_lt_path(tg_lt *c) {
	Dl_info info;
	if (dladdr((void *)c->create, &info) && info.dli_fname) return info.dli_fname;
	return "";
}

static int tg_lt_create(tg_lt *c) { return c->create(&c->handle); }
static int tg_lt_destroy(tg_lt *c) { return c->destroy(c->handle); }
static size_t tg_lt_version(tg_lt *c) { return c->version(); }

// cublasLt enum values (cublasLt.h, cublas_api.h, library_types.h).
enum {
	TG_CUDA_R_32F = 0,
	TG_CUBLAS_COMPUTE_32F = 68,
	TG_DESC_TRANSA = 3,
	TG_DESC_TRANSB = 4,
	TG_DESC_EPILOGUE = 7,
	TG_DESC_BIAS_POINTER = 8,
	TG_LAYOUT_ORDER = 1,
	TG_ORDER_ROW = 1,
	TG_PREF_MAX_WORKSPACE_BYTES = 1,
};

// tg_lt_plan is one problem's descriptors and chosen algorithm.
typedef struct {
	void *desc, *a, *b, *d, *pref;
	tg_lt_algo algo;
	size_t ws;
} tg_lt_plan;

static void tg_lt_plan_free(tg_lt *c, tg_lt_plan *p) {
	if (p->desc) c->desc_destroy(p->desc);
	if (p->a) c->layout_destroy(p->a);
	if (p->b) c->layout_destroy(p->b);
	if (p->d) c->layout_destroy(p->d);
	if (p->pref) c->pref_destroy(p->pref);
	memset(p, 0, sizeof(*p));
}

// tg_lt_layout makes a float32 layout of rows x cols with leading dimension ld, in row order when
// row is set (else cublasLt's default, column order).
static int tg_lt_layout(tg_lt *c, void **l, uint64_t rows, uint64_t cols, int64_t ld, int row) {
	int st = c->layout_create(l, TG_CUDA_R_32F, rows, cols, ld);
	if (st != 0 || !row) return st;
	int order = TG_ORDER_ROW;
	return c->layout_set(*l, TG_LAYOUT_ORDER, &order, sizeof(order));
}

// tg_lt_plan_make fills p for D = epilogue(alpha*op(A)*op(B) + beta*C + bias) on cublasLt's
// matrices: A rows_a x cols_a (as stored), B likewise, D m x n, all in row order when row is set.
// It returns a cuBLAS status, or -1 when the heuristic found no algorithm (*where says which step).
static int tg_lt_plan_make(tg_lt *c, tg_lt_plan *p, int transa, int transb, uint64_t ra, uint64_t ca, int64_t lda,
                           uint64_t rb, uint64_t cb, int64_t ldb, uint64_t m, uint64_t n, int64_t ldd, int row,
                           uint32_t epilogue, uintptr_t bias, size_t wsBytes, const char **where) {
	int st;
	memset(p, 0, sizeof(*p));
	*where = "cublasLtMatmulDescCreate";
	if ((st = c->desc_create(&p->desc, TG_CUBLAS_COMPUTE_32F, TG_CUDA_R_32F)) != 0) return st;
	*where = "cublasLtMatmulDescSetAttribute";
	if ((st = c->desc_set(p->desc, TG_DESC_TRANSA, &transa, sizeof(transa))) != 0) return st;
	if ((st = c->desc_set(p->desc, TG_DESC_TRANSB, &transb, sizeof(transb))) != 0) return st;
	if ((st = c->desc_set(p->desc, TG_DESC_EPILOGUE, &epilogue, sizeof(epilogue))) != 0) return st;
	const void *bp = (const void *)bias;
	if ((st = c->desc_set(p->desc, TG_DESC_BIAS_POINTER, &bp, sizeof(bp))) != 0) return st;
	*where = "cublasLtMatrixLayoutCreate";
	if ((st = tg_lt_layout(c, &p->a, ra, ca, lda, row)) != 0) return st;
	if ((st = tg_lt_layout(c, &p->b, rb, cb, ldb, row)) != 0) return st;
	if ((st = tg_lt_layout(c, &p->d, m, n, ldd, row)) != 0) return st;
	*where = "cublasLtMatmulPreference";
	if ((st = c->pref_create(&p->pref)) != 0) return st;
	uint64_t ws = wsBytes;
	if ((st = c->pref_set(p->pref, TG_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws))) != 0) return st;
	*where = "cublasLtMatmulAlgoGetHeuristic";
	tg_lt_heur h;
	int got = 0;
	memset(&h, 0, sizeof(h));
	if ((st = c->heur(c->handle, p->desc, p->a, p->b, p->d, p->d, p->pref, 1, &h, &got)) != 0) return st;
	if (got < 1 || h.state != 0) return -1;
	p->algo = h.algo;
	p->ws = h.workspaceSize;
	return 0;
}

// tg_lt_set_bias points the plan's epilogue at another bias vector.
static int tg_lt_set_bias(tg_lt *c, tg_lt_plan *p, uintptr_t bias) {
	const void *bp = (const void *)bias;
	return c->desc_set(p->desc, TG_DESC_BIAS_POINTER, &bp, sizeof(bp));
}

static int tg_lt_run(tg_lt *c, tg_lt_plan *p, float alpha, uintptr_t A, uintptr_t B, float beta, uintptr_t D,
                     uintptr_t ws, void *stream) {
	return c->matmul(c->handle, p->desc, &alpha, (const void *)A, p->a, (const void *)B, p->b, &beta,
	                 (const void *)D, p->d, (void *)D, p->d, &p->algo, (void *)ws, p->ws, stream);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"gorgonia.org/cu"

	"tilegen/internal/variant"
)

// cublasLtCandidates are tried in order, like cublasCandidates.
var cublasLtCandidates = []string{
	"libcublasLt.so", "libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11",
	"/usr/local/cuda/lib64/libcublasLt.so", "/usr/local/cuda/lib64/libcublasLt.so.13",
	"/usr/local/cuda/lib64/libcublasLt.so.12", "/usr/local/cuda/lib64/libcublasLt.so.11",
}

// cublasLt epilogues (cublasLtEpilogue_t).
const (
	ltEpilogueBias     = 4
	ltEpilogueReluBias = 6
	ltEpilogueGeluBias = 36
)

// cublasStatusNotSupported is CUBLAS_STATUS_NOT_SUPPORTED.
const cublasStatusNotSupported = 15

// ltWorkspaceBytes is the workspace cublasLt's algorithms may use (32 MiB, what cuBLAS's own
// default grants on Hopper).
const ltWorkspaceBytes = 32 << 20

// errLtNoAlgo: cublasLt's heuristic offers no algorithm for the problem and epilogue (a note, not a
// failure of the baseline).
var errLtNoAlgo = errors.New("cublasLtMatmulAlgoGetHeuristic found no algorithm for this problem and epilogue")

// cublasLt is an open cublasLt handle with its workspace, bound to the worker's stream.
type cublasLt struct {
	c       *C.tg_lt // C memory: cublasLt writes the handle through a pointer
	stream  cu.Stream
	ws      cu.DevicePtr
	Path    string
	Version int
	plans   map[ltKey]*C.tg_lt_plan
}

// ltKey identifies a plan: the problem as the worker launches it (the bias pointer is set per call).
type ltKey struct {
	op            variant.Op
	epi           variant.Epilogue
	m, n, k       int
	lda, ldb, ldc int
}

// openCublasLt loads cublasLt and creates a handle and its workspace in the current context.
func openCublasLt(stream cu.Stream) (*cublasLt, error) {
	c := (*C.tg_lt)(C.calloc(1, C.size_t(unsafe.Sizeof(C.tg_lt{}))))
	var tried []string
	for _, name := range cublasLtCandidates {
		cname := C.CString(name)
		lib := C.tg_lt_dlopen(cname)
		C.free(unsafe.Pointer(cname))
		if lib == nil {
			tried = append(tried, C.GoString(C.tg_lt_dlerror()))
			continue
		}
		c.lib = lib
		break
	}
	if c.lib == nil {
		C.free(unsafe.Pointer(c))
		return nil, fmt.Errorf("cublasLt not found: %s", strings.Join(tried, "; "))
	}
	fail := func(err error) (*cublasLt, error) {
		C.dlclose(c.lib)
		C.free(unsafe.Pointer(c))
		return nil, err
	}
	if missing := C.tg_lt_resolve(c); missing != nil {
		return fail(fmt.Errorf("cublasLt at %s lacks %s", C.GoString(C.tg_lt_path(c)), C.GoString(missing)))
	}
	if st := C.tg_lt_create(c); st != 0 {
		return fail(fmt.Errorf("cublasLtCreate: status %d", int(st)))
	}
	ws, err := cu.MemAlloc(ltWorkspaceBytes)
	if err != nil {
		C.tg_lt_destroy(c)
		return fail(fmt.Errorf("cublasLt workspace: %w", err))
	}
	return &cublasLt{c: c, stream: stream, ws: ws, Path: C.GoString(C.tg_lt_path(c)), Version: int(C.tg_lt_version(c)),
		plans: map[ltKey]*C.tg_lt_plan{}}, nil
}

// ltEpilogue is cublasLt's epilogue for epi.
func ltEpilogue(epi variant.Epilogue) (C.uint32_t, error) {
	switch epi.Kind() {
	case "bias":
		return ltEpilogueBias, nil
	case "bias_relu":
		return ltEpilogueReluBias, nil
	case "bias_gelu":
		return ltEpilogueGeluBias, nil
	}
	return 0, fmt.Errorf("cublasLt has no epilogue for %s", epi)
}

// gemm is the launcher of cublasLtMatmul with the fused epilogue epi for row-major problems of op.
//
// cublasLt's bias runs along the rows of its D. A bias per column of the row-major C is mapped the
// way cuBLAS's row-major calls are (tg_sgemm_rowmajor): read column-major, C is Cᵀ (N×M) = op(B)ᵀ·
// op(A)ᵀ, so cublasLt multiplies the stored B by the stored A with each transpose flag taken from
// the other operand, and D's N rows are C's columns. A bias per row of C has no such mapping (it
// runs along Dᵀ's columns there); it uses cublasLt's row-order layouts instead (CUBLASLT_ORDER_ROW
// on A, B and D: D is C itself, M rows), which the heuristic may decline (errLtNoAlgo, a note).
func (lt *cublasLt) gemm(op variant.Op, epi variant.Epilogue) (gemmFunc, error) {
	ep, err := ltEpilogue(epi)
	if err != nil {
		return nil, err
	}
	return func(m, n, k int, alpha float32, a cu.DevicePtr, lda int, b cu.DevicePtr, ldb int,
		beta float32, c cu.DevicePtr, ldc int, bt batchArgs) error {
		if bt.count > 0 {
			return fmt.Errorf("cublaslt baseline: batches are not supported")
		}
		if bt.bias == 0 {
			return fmt.Errorf("cublaslt baseline (%s) launched without a bias", epi)
		}
		key := ltKey{op: op, epi: epi, m: m, n: n, k: k, lda: lda, ldb: ldb, ldc: ldc}
		p, ok := lt.plans[key]
		if !ok {
			p = (*C.tg_lt_plan)(C.calloc(1, C.size_t(unsafe.Sizeof(C.tg_lt_plan{}))))
			var where *C.char
			ar, ac := op.StoredA(m, k)
			br, bc := op.StoredB(k, n)
			var st C.int
			if epi.BiasPerRow() {
				st = C.tg_lt_plan_make(lt.c, p, C.int(b2i(op.TransA())), C.int(b2i(op.TransB())),
					C.uint64_t(ar), C.uint64_t(ac), C.int64_t(lda), C.uint64_t(br), C.uint64_t(bc), C.int64_t(ldb),
					C.uint64_t(m), C.uint64_t(n), C.int64_t(ldc), 1, ep, C.uintptr_t(bt.bias), ltWorkspaceBytes, &where)
			} else {
				// Column-major: the stored B (br×bc row-major) is bc×br, the stored A ac×ar, D n×m.
				st = C.tg_lt_plan_make(lt.c, p, C.int(b2i(op.TransB())), C.int(b2i(op.TransA())),
					C.uint64_t(bc), C.uint64_t(br), C.int64_t(ldb), C.uint64_t(ac), C.uint64_t(ar), C.int64_t(lda),
					C.uint64_t(n), C.uint64_t(m), C.int64_t(ldc), 0, ep, C.uintptr_t(bt.bias), ltWorkspaceBytes, &where)
			}
			if st != 0 {
				C.tg_lt_plan_free(lt.c, p)
				C.free(unsafe.Pointer(p))
				if st == -1 || st == cublasStatusNotSupported {
					return fmt.Errorf("%w (%s, %s; status %d)", errLtNoAlgo, op, epi, int(st))
				}
				return fmt.Errorf("%s (%s, %s): status %d", C.GoString(where), op, epi, int(st))
			}
			lt.plans[key] = p
		} else if st := C.tg_lt_set_bias(lt.c, p, C.uintptr_t(bt.bias)); st != 0 {
			return fmt.Errorf("cublasLtMatmulDescSetAttribute(BIAS_POINTER): status %d", int(st))
		}
		// Column-major: cublasLt's A is the stored B and its B the stored A.
		first, second := a, b
		if !epi.BiasPerRow() {
			first, second = b, a
		}
		st := C.tg_lt_run(lt.c, p, C.float(alpha), C.uintptr_t(first), C.uintptr_t(second), C.float(beta),
			C.uintptr_t(c), C.uintptr_t(lt.ws), streamHandle(lt.stream))
		if st == 0 {
			return nil
		}
		err := fmt.Errorf("cublasLtMatmul (%s, %s): status %d", op, epi, int(st))
		if st == cublasStatusExecutionFailed {
			if serr := ctxSynchronize(); serr != nil {
				err = fmt.Errorf("%w (%v)", err, serr)
			}
			return &FatalError{Err: err}
		}
		return err
	}, nil
}

func (lt *cublasLt) close() {
	for _, p := range lt.plans {
		C.tg_lt_plan_free(lt.c, p)
		C.free(unsafe.Pointer(p))
	}
	_ = cu.MemFree(lt.ws)
	C.tg_lt_destroy(lt.c)
	C.dlclose(lt.c.lib)
	C.free(unsafe.Pointer(lt.c))
}
