// export-cuda uses a header written by `runner export` from any nvcc project: it runs the exported
// SGEMM on every tuned shape class (each with its op), on edge shapes of every op the header has
// and on vector problems (M or N of 1) of every op, through the row-major entries (NAME_sgemm, NAME_sgemm_op) and the column-major BLAS entry
// (NAME_sgemm_blas, e.g. a column-major TN call) and the strided-batched entry (NAME_sgemm_strided_batched,
// cublasSgemmStridedBatched's arguments: every batch class, with gaps between products and a shared B),
// and, when the header has fused epilogues, the epilogue entry (NAME_sgemm_epilogue: bias per row or
// column, then ReLU or GELU), checks each result against cuBLAS with the same op and layout
// (cublasSgemmStridedBatched for batches; cublasSgemm followed by the same epilogue on the host for
// fused epilogues), and
// times each class the way the tuner did (rotated input sets, one event pair per launch, median),
// printing now/tuned, its time over the time recorded at tuning (not a "ratio", which in tilegen is
// always cuBLAS time / tilegen time). It exits 1 when a result is wrong, when a
// problem no variant accepts is not refused, or (with --strict-time PCT) when a class is more
// than PCT percent slower than at tuning through the header's launcher.
//
// So that a difference from the tuning record can be attributed, each class is also timed with
// the header's own kernel launched through the driver API (cuLaunchKernel, as the tuner launches)
// and, with --ptx-dir, with the exported PTX JIT-compiled by the driver and loaded as the tuner did
// (the code the tuner timed; the header's PTX build runs that code too, its build from source,
// NAME_FROM_SOURCE or CUDA 11, kernels compiled by this nvcc); and an empty kernel is timed through
// both APIs, the launch cost that remains inside an event pair.
//
//   nvcc -O2 -arch=sm_90 -I../export-go/tgsgemm -o export-cuda main.cu -lcublas -lcuda
//   ./export-cuda [--strict-time 5] [--ptx-dir ../export-go/tgsgemm/ptx]
//   ./export-cuda --shapes ../../workloads/unseen.txt
//   ./export-cuda --concurrent shapes.txt
//   ./export-cuda --graph shapes.txt
//   ./export-cuda --preload
//
// With --shapes FILE (one "M N K [op=NT]  # source" per line, the workload corpus format) it does only
// this instead: checks NAME_sgemm (NAME_sgemm_op for a shape with an op other than NN) on each shape
// against cuBLAS with the same op (dense, and padded with alpha and beta) and times both in the same
// run, printing ratio = cuBLAS time / NAME_sgemm time per shape and their geomean, min and median:
// how the export does on shapes it was never tuned on.
//
// With --concurrent FILE it does only this instead: for each shape, the device memory the header's
// module holds once loaded, then four products of that shape (each its own inputs and C) enqueued
// over and over on four streams, first from one host thread without waiting between launches, then
// from four host threads at once, each result checked against cuBLAS: overlapping calls must not
// disturb each other, the split-K and stream-K kernels that keep partial sums between their blocks
// included (the header orders their launches across streams).
//
// With --graph FILE it does only this instead: one product per shape captured into a CUDA graph on
// a non-blocking stream in global capture mode, as the program's first calls of the header (so the
// header's PTX build loads each kernel, and raises its shared-memory limit, while the stream is being
// captured), then the graph launched twice (C NaN-poisoned before each) and every result checked
// against cuBLAS run outside the graph.
//
// With --preload it does only this instead: NAME_preload() timed on the host, the cost of readying
// every kernel of the header that the first calls would otherwise pay (in the PTX build, the driver
// compiles each kernel's PTX, or takes it from its cache: run it twice, or with CUDA_CACHE_DISABLE=1).
//
// -DTG_EXPORT_NAME=NAME builds it against NAME.cuh (default tgsgemm). Where -lcuda is not found,
// add -L with the toolkit's lib64/stubs.
#ifndef TG_EXPORT_NAME
#define TG_EXPORT_NAME tgsgemm
#endif
#define TG_STR_(x) #x
#define TG_STR(x) TG_STR_(x)
#define TG_CAT_(a, b) a##b
#define TG_CAT(a, b) TG_CAT_(a, b)
// TG(_sgemm) is NAME_sgemm.
#define TG(suffix) TG_CAT(TG_EXPORT_NAME, suffix)
#include TG_STR(TG_EXPORT_NAME.cuh)
// Every header has the fused-epilogue entry (NAME_HAS_EPILOGUES is defined when it holds a kernel for
// some epilogue); the checks below run each epilogue it holds and expect the others refused.

#include <cublas_v2.h>
#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#define CHECK_CUDA(x)                                                                                  \
    do {                                                                                               \
        cudaError_t e_ = (x);                                                                          \
        if (e_ != cudaSuccess) {                                                                       \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            std::exit(2);                                                                              \
        }                                                                                              \
    } while (0)
#define CHECK_CU(x)                                                                       \
    do {                                                                                  \
        CUresult r_ = (x);                                                                \
        if (r_ != CUDA_SUCCESS) {                                                         \
            const char* n_ = nullptr;                                                     \
            cuGetErrorName(r_, &n_);                                                      \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, n_ ? n_ : "?"); \
            std::exit(2);                                                                 \
        }                                                                                 \
    } while (0)
#define CHECK_BLAS(x)                                                                   \
    do {                                                                                \
        cublasStatus_t s_ = (x);                                                        \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                              \
            std::fprintf(stderr, "%s:%d: %s: status %d\n", __FILE__, __LINE__, #x, s_); \
            std::exit(2);                                                               \
        }                                                                               \
    } while (0)

// Row-major C = alpha*op(A)*op(B) + beta*C (op: bit 1 op(A) = A^T, bit 0 op(B) = B^T) through
// column-major cuBLAS: C^T = op(B)^T * op(A)^T, and a stored row-major operand read column-major is
// its transpose, so cuBLAS's transa is the row-major op(B)'s and its transb op(A)'s.
static void cublas_rowmajor(cublasHandle_t h, int op, int M, int N, int K, float alpha, const float* A, int lda,
                            const float* B, int ldb, float beta, float* C, int ldc)
{
    cublasOperation_t ta = (op & 1) ? CUBLAS_OP_T : CUBLAS_OP_N, tb = (op & 2) ? CUBLAS_OP_T : CUBLAS_OP_N;
    CHECK_BLAS(cublasSgemm(h, ta, tb, N, M, K, &alpha, B, ldb, A, lda, &beta, C, ldc));
}

static const char* op_name(int op) { return op == 0 ? "NN" : op == 1 ? "NT" : op == 2 ? "TN" : op == 3 ? "TT" : "??"; }

static float* upload(const std::vector<float>& h)
{
    float* d = nullptr;
    CHECK_CUDA(cudaMalloc(&d, std::max<size_t>(h.size(), 1) * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
    return d;
}

static std::vector<float> random_matrix(std::mt19937& rng, size_t n)
{
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (auto& x : v) x = u(rng);
    return v;
}

// compare checks a result against cuBLAS's on rows x cols elements with row stride ld (the
// padding past cols must be untouched). The tolerance per element is 2*(K+2)*2^-24 *
// (|alpha|*(|A||B|)_ij + |beta*C0_ij|) for each of the two results (so twice that between them);
// |A||B| comes from cuBLAS on the absolute values.
static long compare(const std::vector<float>& c, const std::vector<float>& r, const std::vector<float>& s,
                    const std::vector<float>& c0, int rows, int cols, int ld, int K, float alpha, float beta,
                    double* max_abs, double* worst)
{
    double scale = 2.0 * (K + 2) * std::ldexp(1.0, -24);
    long bad = 0;
    *max_abs = 0, *worst = 0;
    for (int i = 0; i < rows; i++) {
        for (int j = 0; j < cols; j++) {
            size_t x = (size_t)i * ld + j;
            double bound = 2.0 * scale * (std::fabs(alpha) * s[x] + std::fabs(beta * c0[x])) + 1e-30;
            double d = std::fabs((double)c[x] - (double)r[x]);
            if (!(d <= bound)) bad++;
            *max_abs = std::max(*max_abs, d);
            *worst = std::max(*worst, d / bound);
        }
        for (int j = cols; j < ld; j++)
            if (c[(size_t)i * ld + j] != c0[(size_t)i * ld + j]) bad++;
    }
    return bad;
}

// check compares the exported row-major SGEMM of op with cuBLAS on one problem (NAME_sgemm for NN,
// NAME_sgemm_op otherwise).
static bool check(cublasHandle_t h, int op, int M, int N, int K, float alpha, float beta, int pad, std::mt19937& rng)
{
    // Stored A is K x M under op(A) = A^T, B N x K under op(B) = B^T.
    int rows_a = (op & 2) ? K : M, rows_b = (op & 1) ? N : K;
    int lda = ((op & 2) ? M : K) + pad, ldb = ((op & 1) ? K : N) + pad, ldc = N + pad;
    std::vector<float> a = random_matrix(rng, (size_t)rows_a * lda), b = random_matrix(rng, (size_t)rows_b * ldb),
                       c0 = random_matrix(rng, (size_t)M * ldc);
    std::vector<float> aa(a.size()), ab(b.size());
    for (size_t i = 0; i < a.size(); i++) aa[i] = std::fabs(a[i]);
    for (size_t i = 0; i < b.size(); i++) ab[i] = std::fabs(b[i]);
    float *dA = upload(a), *dB = upload(b), *dC = upload(c0), *dR = upload(c0), *dAA = upload(aa), *dAB = upload(ab);
    std::vector<float> zeros((size_t)M * ldc, 0.0f);
    float* dS = upload(zeros);

    const char opa = (op & 2) ? 'T' : 'N', opb = (op & 1) ? 'T' : 'N';
    cudaError_t err = op == 0 ? TG(_sgemm)(M, N, K, alpha, dA, lda, dB, ldb, beta, dC, ldc, 0)
                              : TG(_sgemm_op)(opa, opb, M, N, K, alpha, dA, lda, dB, ldb, beta, dC, ldc, 0);
    cublas_rowmajor(h, op, M, N, K, alpha, dA, lda, dB, ldb, beta, dR, ldc);
    cublas_rowmajor(h, op, M, N, K, 1.0f, dAA, lda, dAB, ldb, 0.0f, dS, ldc);
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<float> c((size_t)M * ldc), r((size_t)M * ldc), s((size_t)M * ldc);
    CHECK_CUDA(cudaMemcpy(c.data(), dC, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(r.data(), dR, r.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(s.data(), dS, s.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (float* p : {dA, dB, dC, dR, dAA, dAB, dS}) CHECK_CUDA(cudaFree(p));

    const char* v = TG(_variant_op)(opa, opb, M, N, K, lda, ldb, ldc, dA, dB, dC);
    if (err != cudaSuccess) {
        std::printf("FAIL %s %dx%dx%d alpha=%g beta=%g pad=%d: %s (variant %s)\n", op_name(op), M, N, K, alpha, beta, pad,
                    cudaGetErrorString(err), v ? v : "none");
        return false;
    }
    double max_abs, worst;
    long bad = compare(c, r, s, c0, M, N, ldc, K, alpha, beta, &max_abs, &worst);
    std::printf("%s %s %dx%dx%d alpha=%g beta=%g pad=%d variant=%s max_abs=%.3g worst/tol=%.3f bad=%ld\n",
                bad ? "FAIL" : "ok  ", op_name(op), M, N, K, alpha, beta, pad, v, max_abs, worst, bad);
    return bad == 0;
}

// check_blas calls the column-major BLAS entry, NAME_sgemm_blas(transa, transb, m, n, k, ...) with
// cublasSgemm's arguments, and compares with cublasSgemm called with the very same arguments.
static bool check_blas(cublasHandle_t h, char transa, char transb, int m, int n, int k, float alpha, float beta, int pad,
                       std::mt19937& rng)
{
    // Column-major: A is m x k (lda >= m) under 'N', k x m (lda >= k) under 'T'; B likewise k x n / n x k.
    int cols_a = transa == 'N' ? k : m, cols_b = transb == 'N' ? n : k;
    int lda = (transa == 'N' ? m : k) + pad, ldb = (transb == 'N' ? k : n) + pad, ldc = m + pad;
    std::vector<float> a = random_matrix(rng, (size_t)cols_a * lda), b = random_matrix(rng, (size_t)cols_b * ldb),
                       c0 = random_matrix(rng, (size_t)n * ldc);
    std::vector<float> aa(a.size()), ab(b.size());
    for (size_t i = 0; i < a.size(); i++) aa[i] = std::fabs(a[i]);
    for (size_t i = 0; i < b.size(); i++) ab[i] = std::fabs(b[i]);
    float *dA = upload(a), *dB = upload(b), *dC = upload(c0), *dR = upload(c0), *dAA = upload(aa), *dAB = upload(ab);
    std::vector<float> zeros((size_t)n * ldc, 0.0f);
    float* dS = upload(zeros);
    cublasOperation_t ta = transa == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T, tb = transb == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T;
    const float one = 1.0f, zero = 0.0f;
    cudaError_t err = TG(_sgemm_blas)(transa, transb, m, n, k, alpha, dA, lda, dB, ldb, beta, dC, ldc, 0);
    CHECK_BLAS(cublasSgemm(h, ta, tb, m, n, k, &alpha, dA, lda, dB, ldb, &beta, dR, ldc));
    CHECK_BLAS(cublasSgemm(h, ta, tb, m, n, k, &one, dAA, lda, dAB, ldb, &zero, dS, ldc));
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<float> c((size_t)n * ldc), r((size_t)n * ldc), s((size_t)n * ldc);
    CHECK_CUDA(cudaMemcpy(c.data(), dC, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(r.data(), dR, r.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(s.data(), dS, s.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (float* p : {dA, dB, dC, dR, dAA, dAB, dS}) CHECK_CUDA(cudaFree(p));
    const char* v = TG(_variant_blas)(transa, transb, m, n, k, lda, ldb, ldc, dA, dB, dC);
    if (err != cudaSuccess) {
        std::printf("FAIL blas %c%c m=%d n=%d k=%d: %s (variant %s)\n", transa, transb, m, n, k, cudaGetErrorString(err),
                    v ? v : "none");
        return false;
    }
    // Column-major m x n with ldc is n "rows" of m elements.
    double max_abs, worst;
    long bad = compare(c, r, s, c0, n, m, ldc, k, alpha, beta, &max_abs, &worst);
    std::printf("%s blas %c%c m=%d n=%d k=%d alpha=%g beta=%g pad=%d variant=%s max_abs=%.3g worst/tol=%.3f bad=%ld\n",
                bad ? "FAIL" : "ok  ", transa, transb, m, n, k, alpha, beta, pad, v, max_abs, worst, bad);
    return bad == 0;
}

// act applies an epilogue's activation in double: 0 none, 1 ReLU, 2 GELU (tanh form); slope bounds
// its derivative (how far an error of its argument can grow).
static double act(int a, double x)
{
    if (a == 1) return x > 0 ? x : 0;
    if (a == 2) return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    return x;
}

// check_epilogue calls the fused-epilogue entry, NAME_sgemm_epilogue(epi, M, N, K, ..., bias), and
// compares with cublasSgemm on the same row-major problem followed by bias and activation on the
// host: the tolerance is compare's for the product (times GELU's slope bound 1.13) plus 8 ulp of the
// result for the epilogue's own rounding.
static bool check_epilogue(cublasHandle_t h, int epi, int M, int N, int K, float alpha, float beta, int pad, std::mt19937& rng)
{
    // The enum: odd = bias per row, even = per column; (epi-1)/2 = 0 none, 1 ReLU, 2 GELU.
    const bool per_row = epi % 2 == 1;
    const int a = (epi - 1) / 2;
    int lda = K + pad, ldb = N + pad, ldc = N + pad;
    std::vector<float> A = random_matrix(rng, (size_t)M * lda), B = random_matrix(rng, (size_t)K * ldb),
                       c0 = random_matrix(rng, (size_t)M * ldc), bias = random_matrix(rng, per_row ? M : N);
    std::vector<float> aa(A.size()), ab(B.size());
    for (size_t i = 0; i < A.size(); i++) aa[i] = std::fabs(A[i]);
    for (size_t i = 0; i < B.size(); i++) ab[i] = std::fabs(B[i]);
    float *dA = upload(A), *dB = upload(B), *dC = upload(c0), *dR = upload(c0), *dAA = upload(aa), *dAB = upload(ab),
          *dBias = upload(bias);
    std::vector<float> zeros((size_t)M * ldc, 0.0f);
    float* dS = upload(zeros);
    cudaError_t err = TG(_sgemm_epilogue)(epi, M, N, K, alpha, dA, lda, dB, ldb, beta, dC, ldc, dBias, 0);
    const char* v = TG(_variant_epilogue)(epi, M, N, K, lda, ldb, ldc, dA, dB, dC, dBias);
    cublas_rowmajor(h, 0, M, N, K, alpha, dA, lda, dB, ldb, beta, dR, ldc);
    cublas_rowmajor(h, 0, M, N, K, 1.0f, dAA, lda, dAB, ldb, 0.0f, dS, ldc);
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<float> c((size_t)M * ldc), r((size_t)M * ldc), s((size_t)M * ldc);
    CHECK_CUDA(cudaMemcpy(c.data(), dC, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(r.data(), dR, r.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(s.data(), dS, s.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (float* p : {dA, dB, dC, dR, dAA, dAB, dS, dBias}) CHECK_CUDA(cudaFree(p));
    if (err != cudaSuccess) {
        std::printf("FAIL epilogue %d %dx%dx%d: %s (variant %s)\n", epi, M, N, K, cudaGetErrorString(err), v ? v : "none");
        return false;
    }
    const double scale = 2.0 * (K + 2) * std::ldexp(1.0, -24), slope = a == 2 ? 1.13 : 1.0;
    long bad = 0;
    double max_abs = 0, worst = 0;
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            size_t x = (size_t)i * ldc + j;
            double want = act(a, (double)r[x] + bias[per_row ? i : j]);
            double bound = slope * 2.0 * scale * (std::fabs(alpha) * s[x] + std::fabs(beta * c0[x])) +
                           8 * std::ldexp(1.0, -24) * (std::fabs(want) + std::fabs(bias[per_row ? i : j])) + 1e-30;
            double d = std::fabs((double)c[x] - want);
            if (!(d <= bound)) bad++;
            max_abs = std::max(max_abs, d);
            worst = std::max(worst, d / bound);
        }
        for (int j = N; j < ldc; j++)
            if (c[(size_t)i * ldc + j] != c0[(size_t)i * ldc + j]) bad++;
    }
    std::printf("%s epilogue %d (%s bias, %s) %dx%dx%d alpha=%g beta=%g pad=%d variant=%s max_abs=%.3g worst/tol=%.3f bad=%ld\n",
                bad ? "FAIL" : "ok  ", epi, per_row ? "row" : "col", a == 0 ? "none" : a == 1 ? "ReLU" : "GELU", M, N, K, alpha,
                beta, pad, v, max_abs, worst, bad);
    return bad == 0;
}

// check_batched calls the strided-batched BLAS entry, NAME_sgemm_strided_batched(transa, transb, m,
// n, k, ..., batch) with cublasSgemmStridedBatched's arguments, and compares every product with
// cublasSgemmStridedBatched called with the very same arguments. The strides leave a gap of `gap`
// elements between products (the gaps of C must stay untouched); share_b makes strideB = 0 (one B
// for every product).
static bool check_batched(cublasHandle_t h, char transa, char transb, int m, int n, int k, float alpha, float beta, int pad,
                          int batch, int gap, bool share_b, std::mt19937& rng)
{
    int cols_a = transa == 'N' ? k : m, cols_b = transb == 'N' ? n : k;
    int lda = (transa == 'N' ? m : k) + pad, ldb = (transb == 'N' ? k : n) + pad, ldc = m + pad;
    long long sa = (long long)cols_a * lda + gap, sb = share_b ? 0 : (long long)cols_b * ldb + gap, sc = (long long)n * ldc + gap;
    size_t na = (size_t)(sa * (batch - 1) + (long long)cols_a * lda), nb = (size_t)(sb * (batch - 1) + (long long)cols_b * ldb),
           nc = (size_t)(sc * batch);
    std::vector<float> a = random_matrix(rng, na), b = random_matrix(rng, nb), c0 = random_matrix(rng, nc);
    std::vector<float> aa(a.size()), ab(b.size());
    for (size_t i = 0; i < a.size(); i++) aa[i] = std::fabs(a[i]);
    for (size_t i = 0; i < b.size(); i++) ab[i] = std::fabs(b[i]);
    float *dA = upload(a), *dB = upload(b), *dC = upload(c0), *dR = upload(c0), *dAA = upload(aa), *dAB = upload(ab);
    std::vector<float> zeros(nc, 0.0f);
    float* dS = upload(zeros);
    cublasOperation_t ta = transa == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T, tb = transb == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T;
    const float one = 1.0f, zero = 0.0f;
    cudaError_t err = TG(_sgemm_strided_batched)(transa, transb, m, n, k, alpha, dA, lda, sa, dB, ldb, sb, beta, dC, ldc, sc,
                                                 batch, 0);
    CHECK_BLAS(cublasSgemmStridedBatched(h, ta, tb, m, n, k, &alpha, dA, lda, sa, dB, ldb, sb, &beta, dR, ldc, sc, batch));
    CHECK_BLAS(cublasSgemmStridedBatched(h, ta, tb, m, n, k, &one, dAA, lda, sa, dAB, ldb, sb, &zero, dS, ldc, sc, batch));
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<float> c(nc), r(nc), sabs(nc);
    CHECK_CUDA(cudaMemcpy(c.data(), dC, nc * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(r.data(), dR, nc * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(sabs.data(), dS, nc * sizeof(float), cudaMemcpyDeviceToHost));
    for (float* p : {dA, dB, dC, dR, dAA, dAB, dS}) CHECK_CUDA(cudaFree(p));
    const char* v = TG(_variant_strided_batched)(transa, transb, m, n, k, lda, sa, ldb, sb, ldc, sc, batch, dA, dB, dC);
    if (err != cudaSuccess) {
        std::printf("FAIL batched %c%c m=%d n=%d k=%d batch=%d: %s (variant %s)\n", transa, transb, m, n, k, batch,
                    cudaGetErrorString(err), v ? v : "none");
        return false;
    }
    long bad = 0;
    double max_abs = 0, worst = 0;
    for (int i = 0; i < batch; i++) {
        // Product i: column-major m x n with ldc is n "rows" of m elements; then its gap.
        size_t off = (size_t)(sc * i), len = (size_t)n * ldc;
        std::vector<float> ci(c.begin() + off, c.begin() + off + len), ri(r.begin() + off, r.begin() + off + len),
            si(sabs.begin() + off, sabs.begin() + off + len), c0i(c0.begin() + off, c0.begin() + off + len);
        double ma, w;
        bad += compare(ci, ri, si, c0i, n, m, ldc, k, alpha, beta, &ma, &w);
        max_abs = std::max(max_abs, ma);
        worst = std::max(worst, w);
        for (size_t j = off + len; j < off + (size_t)sc; j++)
            if (c[j] != c0[j]) bad++;
    }
    std::printf("%s batched %c%c m=%d n=%d k=%d batch=%d alpha=%g beta=%g pad=%d gap=%d strideB=%lld variant=%s max_abs=%.3g "
                "worst/tol=%.3f bad=%ld\n",
                bad ? "FAIL" : "ok  ", transa, transb, m, n, k, batch, alpha, beta, pad, gap, sb, v, max_abs, worst, bad);
    return bad == 0;
}

// time_ms times launch(i), i = 0, 1, ..., like the tuner: 3 warm-up launches, then at least 20
// launches and 100 ms of measured time (at most 1000), each between its own event pair, enqueued in
// batches of 128 before the events are read; it returns the median.
template <class F>
static double time_ms(cudaStream_t s, F launch)
{
    for (int i = 0; i < 3; i++) launch(i);
    CHECK_CUDA(cudaStreamSynchronize(s));
    const int batch_max = 128;
    std::vector<cudaEvent_t> ev(2 * batch_max);
    for (auto& e : ev) CHECK_CUDA(cudaEventCreate(&e));
    std::vector<double> samples;
    double total = 0;
    while (samples.size() < 1000 && (samples.size() < 20 || total < 100.0)) {
        int want = 20 - (int)samples.size();
        if (!samples.empty() && total < 100.0) {
            double per = std::max(total / samples.size(), 1e-6);
            want = std::max(want, (int)std::ceil((100.0 - total) / per));
        }
        int batch = std::min({std::max(want, 1), batch_max, 1000 - (int)samples.size()});
        for (int i = 0; i < batch; i++) {
            CHECK_CUDA(cudaEventRecord(ev[2 * i], s));
            launch((int)samples.size() + i);
            CHECK_CUDA(cudaEventRecord(ev[2 * i + 1], s));
        }
        CHECK_CUDA(cudaStreamSynchronize(s));
        for (int i = 0; i < batch; i++) {
            float ms = 0;
            CHECK_CUDA(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
            samples.push_back(ms);
            total += ms;
        }
    }
    for (auto& e : ev) CHECK_CUDA(cudaEventDestroy(e));
    std::sort(samples.begin(), samples.end());
    size_t n = samples.size();
    return n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

// Input sets for timing like the tuner's: beta = 0, dense leading dimensions, as many sets as make
// about three times L2 when one fits in it (at most 64), so a launch does not find its inputs
// cached by the previous one.
struct input_sets {
    int op, M, N, K, n, lda, ldb, ldc;
    std::vector<float*> A, B, C;

    input_sets(int op_, int M_, int N_, int K_, int l2)
        : op(op_), M(M_), N(N_), K(K_), n(1), lda((op_ & 2) ? M_ : K_), ldb((op_ & 1) ? K_ : N_), ldc(N_)
    {
        long long set_bytes = 4LL * ((long long)M * K + (long long)K * N + (long long)M * N);
        if (set_bytes <= l2) n = (int)std::min<long long>(std::max<long long>((3LL * l2 + set_bytes - 1) / set_bytes, 2), 64);
        std::mt19937 rng(0x5eed);
        for (int i = 0; i < n; i++) {
            A.push_back(upload(random_matrix(rng, (size_t)M * K)));
            B.push_back(upload(random_matrix(rng, (size_t)K * N)));
            float* c = nullptr;
            CHECK_CUDA(cudaMalloc(&c, (size_t)M * N * sizeof(float)));
            C.push_back(c);
        }
    }
    ~input_sets()
    {
        for (int i = 0; i < n; i++) {
            CHECK_CUDA(cudaFree(A[i]));
            CHECK_CUDA(cudaFree(B[i]));
            CHECK_CUDA(cudaFree(C[i]));
        }
    }
};

// driver_ms times kernel f (the geometry of exported kernel k) launched with cuLaunchKernel.
static double driver_ms(CUfunction f, const TG(_kernel_info) & k, input_sets& in, cudaStream_t s)
{
    if (k.dynamic_shared > 48 * 1024)
        CHECK_CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k.dynamic_shared));
    // The grid the launcher uses: tiles by the fixed grid z or the launch-time split rule's slices
    // (grid_z: auto), or a stream-K kernel's persistent blocks along x.
    const dim3 g = TG(_grid)(&k, in.M, in.N, in.K);
    return time_ms(s, [&](int i) {
        int x = i % in.n, M = in.M, N = in.N, K = in.K, lda = in.lda, ldb = in.ldb, ldc = in.ldc;
        float alpha = 1.0f, beta = 0.0f;
        const float *A = in.A[x], *B = in.B[x];
        float* C = in.C[x];
        void* args[] = {&M, &N, &K, &alpha, &A, &lda, &B, &ldb, &beta, &C, &ldc};
        CHECK_CU(cuLaunchKernel(f, g.x, g.y, g.z, (unsigned)k.block_x, (unsigned)k.block_y, 1,
                                (unsigned)k.dynamic_shared, (CUstream)s, args, nullptr));
    });
}

// load_ptx JIT-compiles DIR/NAME.ptx in the current context and returns the kernel NAME, or null
// when the file cannot be read.
static CUfunction load_ptx(const std::string& dir, const char* name)
{
    std::string path = dir + "/" + name + ".ptx";
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) {
        std::fprintf(stderr, "%s: cannot open\n", path.c_str());
        return nullptr;
    }
    std::string text;
    char buf[1 << 16];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
    std::fclose(f);
    CUmodule mod;
    CUfunction fn;
    CHECK_CU(cuModuleLoadData(&mod, text.c_str())); // kept loaded until the process exits
    CHECK_CU(cuModuleGetFunction(&fn, mod, name));
    return fn;
}

__global__ void tg_empty_kernel() {}

// shape_line is one product of a --shapes file: "M N K  # source" (the workload corpus format).
struct shape_line {
    int M, N, K, op; // op: bit 1 op(A) = A^T, bit 0 op(B) = B^T
    std::string source;
};

// read_shapes reads a --shapes file (with ops: an op=XX column allowed); it exits 2 naming
// file:line on a malformed line.
static std::vector<shape_line> read_shapes(const char* path, bool ops)
{
    FILE* f = std::fopen(path, "r");
    if (!f) {
        std::fprintf(stderr, "%s: cannot open\n", path);
        std::exit(2);
    }
    std::vector<shape_line> out;
    char buf[4096];
    for (int line = 1; std::fgets(buf, sizeof buf, f); line++) {
        std::string l(buf), src;
        size_t hash = l.find('#');
        if (hash != std::string::npos) {
            src = l.substr(hash + 1);
            l = l.substr(0, hash);
        }
        while (!src.empty() && (src.back() == '\n' || src.back() == '\r' || src.back() == ' ')) src.pop_back();
        while (!src.empty() && src.front() == ' ') src.erase(0, 1);
        long long m, n, k;
        char opa = 'N', opb = 'N', extra[2];
        int used = 0, got = std::sscanf(l.c_str(), "%lld %lld %lld %n", &m, &n, &k, &used);
        if (got <= 0 && l.find_first_not_of(" \t\r\n") == std::string::npos) continue;
        bool bad = got != 3 || m < 1 || n < 1 || k < 1 || m > 0x7fffffff || n > 0x7fffffff || k > 0x7fffffff;
        if (!bad) { // an optional op=XX column (XX in NN, NT, TN, TT), then nothing
            const char* rest = l.c_str() + used;
            int more = 0;
            if (ops && std::sscanf(rest, "op=%c%c %n", &opa, &opb, &more) == 2 && (opa == 'N' || opa == 'T') &&
                (opb == 'N' || opb == 'T'))
                rest += more;
            else
                opa = opb = 'N';
            bad = std::sscanf(rest, "%1s", extra) == 1;
        }
        if (bad) {
            std::fprintf(stderr, "%s:%d: want \"M N K%s  # source\" with positive 32-bit M, N, K\n", path, line,
                         ops ? " [op=NN|NT|TN|TT]" : "");
            std::exit(2);
        }
        out.push_back({(int)m, (int)n, (int)k, (opa == 'T' ? 2 : 0) | (opb == 'T' ? 1 : 0), src});
    }
    std::fclose(f);
    return out;
}

// run_shapes checks and times NAME_sgemm on every shape of a --shapes file against cublasSgemm in
// the same run: two correctness checks per shape (dense with beta = 0, and padded with alpha and
// beta), then, on rotated input sets, the launcher and cuBLAS timed alternately twice (time_ms:
// median of event pairs after warm-up; the lower of each's two medians), ratio = cuBLAS time /
// launcher time (above 1: faster than cuBLAS). Shapes the header was not tuned or fitted on test how its dispatch carries over.
static bool run_shapes(cublasHandle_t h, const char* path, std::mt19937& rng)
{
    std::vector<shape_line> shapes = read_shapes(path, true);
    int dev = 0, l2 = 0;
    CHECK_CUDA(cudaGetDevice(&dev));
    CHECK_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK_BLAS(cublasSetStream(h, s));
    bool ok = true;
    std::vector<double> ratios;
    std::printf("== shapes of %s: correctness, then ratio = cuBLAS time / %s_sgemm time (same run)\n", path, TG_STR(TG_EXPORT_NAME));
    for (const shape_line& sh : shapes) {
        const int op = sh.op;
        const char opa = (op & 2) ? 'T' : 'N', opb = (op & 1) ? 'T' : 'N';
        bool good = check(h, op, sh.M, sh.N, sh.K, 1.0f, 0.0f, 0, rng);
        good &= check(h, op, sh.M, sh.N, sh.K, 1.5f, -0.75f, 3, rng);
        ok &= good;
        input_sets in(op, sh.M, sh.N, sh.K, l2);
        double tl = INFINITY, tc = INFINITY; // the lower median of two alternating rounds each
        for (int round = 0; round < 2; round++) {
            tl = std::min(tl, time_ms(s, [&](int j) {
                int x = j % in.n;
                CHECK_CUDA(op == 0 ? TG(_sgemm)(sh.M, sh.N, sh.K, 1.0f, in.A[x], in.lda, in.B[x], in.ldb, 0.0f, in.C[x], in.ldc, s)
                                   : TG(_sgemm_op)(opa, opb, sh.M, sh.N, sh.K, 1.0f, in.A[x], in.lda, in.B[x], in.ldb, 0.0f, in.C[x],
                                                   in.ldc, s));
            }));
            tc = std::min(tc, time_ms(s, [&](int j) {
                int x = j % in.n;
                cublas_rowmajor(h, op, sh.M, sh.N, sh.K, 1.0f, in.A[x], in.lda, in.B[x], in.ldb, 0.0f, in.C[x], in.ldc);
            }));
        }
        const char* v = TG(_variant_op)(opa, opb, sh.M, sh.N, sh.K, in.lda, in.ldb, in.ldc, in.A[0], in.B[0], in.C[0]);
        double r = tc / tl;
        ratios.push_back(r);
        std::printf("shape %dx%dx%d%s%s variant=%s tilegen_ms=%.5f cublas_ms=%.5f ratio=%.3f correct=%s  # %s\n", sh.M, sh.N,
                    sh.K, op ? " op=" : "", op ? op_name(op) : "", v ? v : "none", tl, tc, r, good ? "yes" : "NO",
                    sh.source.c_str());
    }
    CHECK_CUDA(cudaStreamDestroy(s));
    if (!ratios.empty()) {
        std::vector<double> r = ratios;
        std::sort(r.begin(), r.end());
        double lg = 0;
        int below = 0;
        for (double x : r) {
            lg += std::log(x);
            below += x < 0.9;
        }
        size_t n = r.size();
        double med = n % 2 ? r[n / 2] : 0.5 * (r[n / 2 - 1] + r[n / 2]);
        std::printf("shapes %zu geomean %.3f min %.3f median %.3f below_0.9 %d\n", n, std::exp(lg / n), r[0], med, below);
    }
    return ok;
}

// random_product uploads random row-major A (M x K) and B (K x N) into *A and *B, allocates *C (M x N)
// and returns on the host cuBLAS's A*B (ref) and |A|*|B| (absref, for compare's tolerance), computed
// on the legacy default stream.
static void random_product(cublasHandle_t h, int M, int N, int K, std::mt19937& rng, float** A, float** B, float** C,
                           std::vector<float>& ref, std::vector<float>& absref)
{
    const float one = 1.0f, zero = 0.0f;
    std::vector<float> a = random_matrix(rng, (size_t)M * K), b = random_matrix(rng, (size_t)K * N);
    std::vector<float> aa(a.size()), ab(b.size());
    for (size_t j = 0; j < a.size(); j++) aa[j] = std::fabs(a[j]);
    for (size_t j = 0; j < b.size(); j++) ab[j] = std::fabs(b[j]);
    *A = upload(a), *B = upload(b);
    float *dAA = upload(aa), *dAB = upload(ab), *R = nullptr, *S = nullptr;
    for (float** q : {C, &R, &S}) CHECK_CUDA(cudaMalloc(q, (size_t)M * N * sizeof(float)));
    CHECK_BLAS(cublasSetStream(h, 0));
    CHECK_BLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, *B, N, *A, K, &zero, R, N));
    CHECK_BLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, dAB, N, dAA, K, &zero, S, N));
    CHECK_CUDA(cudaDeviceSynchronize());
    ref.resize((size_t)M * N), absref.resize((size_t)M * N);
    CHECK_CUDA(cudaMemcpy(ref.data(), R, ref.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(absref.data(), S, absref.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (float* q : {dAA, dAB, R, S}) CHECK_CUDA(cudaFree(q));
}

// run_concurrent enqueues, for each shape of a --shapes file, P products of it on P non-blocking
// streams, ROUNDS times over, first from this thread without waiting between launches, then from P
// host threads at once (beta = 0: every launch writes the same C), and checks each of the P results
// against cublasSgemm on the same inputs. Before the first product it prints how much device memory
// loading the header's kernels took (cudaMemGetInfo around a first 1x1x1 call).
static bool run_concurrent(cublasHandle_t h, const char* path, std::mt19937& rng)
{
    std::vector<shape_line> shapes = read_shapes(path, false);
    const int P = 4, ROUNDS = 16;
    {
        size_t free0 = 0, free1 = 0, total = 0;
        float* d = nullptr;
        CHECK_CUDA(cudaMalloc(&d, 3 * sizeof(float)));
        CHECK_CUDA(cudaMemset(d, 0, 3 * sizeof(float)));
        CHECK_CUDA(cudaDeviceSynchronize());
        CHECK_CUDA(cudaMemGetInfo(&free0, &total));
        CHECK_CUDA(TG(_sgemm)(1, 1, 1, 1.0f, d, 1, d + 1, 1, 0.0f, d + 2, 1, 0));
        CHECK_CUDA(cudaDeviceSynchronize());
        CHECK_CUDA(cudaMemGetInfo(&free1, &total));
        CHECK_CUDA(cudaFree(d));
        std::printf("module memory: %.1f MiB of device memory taken by the first call (loading the header's kernels; its PTX\n"
                    "build loads only the kernel a call launches)\n",
                    ((double)free0 - (double)free1) / (1 << 20));
    }
    cudaStream_t st[P];
    for (auto& x : st) CHECK_CUDA(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
    bool ok = true;
    for (const shape_line& sh : shapes) {
        const int M = sh.M, N = sh.N, K = sh.K;
        std::vector<float*> A(P), B(P), C(P);
        std::vector<std::vector<float>> hr(P), hs(P);
        for (int p = 0; p < P; p++) random_product(h, M, N, K, rng, &A[p], &B[p], &C[p], hr[p], hs[p]);
        const std::vector<float> zeros((size_t)M * N, 0.0f);
        const char* v = TG(_variant)(M, N, K, K, N, N, A[0], B[0], C[0]);
        for (int mode = 0; mode < 2; mode++) {
            for (int p = 0; p < P; p++) CHECK_CUDA(cudaMemset(C[p], 0xff, (size_t)M * N * sizeof(float))); // NaN
            CHECK_CUDA(cudaDeviceSynchronize());
            cudaError_t errs[P] = {};
            auto work = [&](int p) {
                for (int r = 0; r < ROUNDS && errs[p] == cudaSuccess; r++)
                    errs[p] = TG(_sgemm)(M, N, K, 1.0f, A[p], K, B[p], N, 0.0f, C[p], N, st[p]);
            };
            if (mode == 0) {
                for (int r = 0; r < ROUNDS; r++)
                    for (int p = 0; p < P; p++)
                        if (errs[p] == cudaSuccess) errs[p] = TG(_sgemm)(M, N, K, 1.0f, A[p], K, B[p], N, 0.0f, C[p], N, st[p]);
            } else {
                std::vector<std::thread> ts;
                for (int p = 0; p < P; p++) ts.emplace_back(work, p);
                for (auto& t : ts) t.join();
            }
            CHECK_CUDA(cudaDeviceSynchronize());
            long bad = 0;
            double worst = 0;
            for (int p = 0; p < P; p++) {
                std::vector<float> c((size_t)M * N);
                CHECK_CUDA(cudaMemcpy(c.data(), C[p], c.size() * sizeof(float), cudaMemcpyDeviceToHost));
                double max_abs, w;
                bad += errs[p] != cudaSuccess ? (long)c.size() : compare(c, hr[p], hs[p], zeros, M, N, N, K, 1.0f, 0.0f, &max_abs, &w);
                worst = std::max(worst, w);
            }
            std::printf("%s concurrent %dx%dx%d variant=%s streams=%d rounds=%d %s worst/tol=%.3f bad=%ld\n", bad ? "FAIL" : "ok  ",
                        M, N, K, v ? v : "none", P, ROUNDS, mode == 0 ? "one-thread" : "threads=4", worst, bad);
            ok &= bad == 0;
        }
        for (int p = 0; p < P; p++)
            for (float* q : {A[p], B[p], C[p]}) CHECK_CUDA(cudaFree(q));
    }
    for (auto& x : st) CHECK_CUDA(cudaStreamDestroy(x));
    return ok;
}

// run_preload is --preload (see the top of the file).
static bool run_preload()
{
    int n = 0;
    TG(_kernels)(&n);
    auto t0 = std::chrono::steady_clock::now();
    cudaError_t e = TG(_preload)();
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%s preload of %d kernels (%s): %.1f ms, %s\n", e == cudaSuccess ? "ok  " : "FAIL", n,
                TG_CAT(TG_EXPORT_NAME, _PTX) ? "the header's PTX build" : "the header built from source", ms, cudaGetErrorString(e));
    return e == cudaSuccess;
}

// run_graph is --graph FILE (see the top of the file).
static bool run_graph(cublasHandle_t h, const char* path, std::mt19937& rng)
{
    std::vector<shape_line> shapes = read_shapes(path, false);
    const size_t n = shapes.size();
    std::vector<float*> A(n), B(n), C(n);
    std::vector<std::vector<float>> hr(n), hs(n);
    for (size_t i = 0; i < n; i++)
        random_product(h, shapes[i].M, shapes[i].N, shapes[i].K, rng, &A[i], &B[i], &C[i], hr[i], hs[i]);
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    std::vector<cudaError_t> errs(n);
    for (size_t i = 0; i < n; i++)
        errs[i] = TG(_sgemm)(shapes[i].M, shapes[i].N, shapes[i].K, 1.0f, A[i], shapes[i].K, B[i], shapes[i].N, 0.0f, C[i],
                             shapes[i].N, s);
    cudaGraph_t g = nullptr;
    cudaError_t end = cudaStreamEndCapture(s, &g);
    bool ok = end == cudaSuccess;
    std::printf("%s capture of %zu first calls (global mode): %s\n", ok ? "ok  " : "FAIL", n, cudaGetErrorString(end));
    if (ok) {
        cudaGraphExec_t ge;
        CHECK_CUDA(cudaGraphInstantiateWithFlags(&ge, g, 0));
        for (int rep = 0; rep < 2; rep++) {
            for (size_t i = 0; i < n; i++)
                CHECK_CUDA(cudaMemset(C[i], 0xff, (size_t)shapes[i].M * shapes[i].N * sizeof(float))); // NaN
            CHECK_CUDA(cudaDeviceSynchronize());
            CHECK_CUDA(cudaGraphLaunch(ge, s));
            CHECK_CUDA(cudaStreamSynchronize(s));
            for (size_t i = 0; i < n; i++) {
                const int M = shapes[i].M, N = shapes[i].N, K = shapes[i].K;
                std::vector<float> c((size_t)M * N);
                CHECK_CUDA(cudaMemcpy(c.data(), C[i], c.size() * sizeof(float), cudaMemcpyDeviceToHost));
                const std::vector<float> zeros(c.size(), 0.0f);
                double max_abs = 0, worst = 0;
                long bad = errs[i] != cudaSuccess ? (long)c.size()
                                                  : compare(c, hr[i], hs[i], zeros, M, N, N, K, 1.0f, 0.0f, &max_abs, &worst);
                const char* v = TG(_variant)(M, N, K, K, N, N, A[i], B[i], C[i]);
                std::printf("%s graph %dx%dx%d launch %d variant=%s call=%s worst/tol=%.3f bad=%ld\n", bad ? "FAIL" : "ok  ", M, N,
                            K, rep + 1, v ? v : "none", cudaGetErrorString(errs[i]), worst, bad);
                ok &= bad == 0;
            }
        }
        CHECK_CUDA(cudaGraphExecDestroy(ge));
    }
    if (g) CHECK_CUDA(cudaGraphDestroy(g));
    CHECK_CUDA(cudaStreamDestroy(s));
    for (size_t i = 0; i < n; i++)
        for (float* q : {A[i], B[i], C[i]}) CHECK_CUDA(cudaFree(q));
    return ok;
}

int main(int argc, char** argv)
{
    double strict = -1;
    std::string ptx_dir;
    const char* shapes_file = nullptr;
    const char* concurrent_file = nullptr;
    const char* graph_file = nullptr;
    bool preload = false;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--strict-time") && i + 1 < argc) {
            strict = std::atof(argv[++i]);
        } else if (!std::strcmp(argv[i], "--ptx-dir") && i + 1 < argc) {
            ptx_dir = argv[++i];
        } else if (!std::strcmp(argv[i], "--shapes") && i + 1 < argc) {
            shapes_file = argv[++i];
        } else if (!std::strcmp(argv[i], "--concurrent") && i + 1 < argc) {
            concurrent_file = argv[++i];
        } else if (!std::strcmp(argv[i], "--graph") && i + 1 < argc) {
            graph_file = argv[++i];
        } else if (!std::strcmp(argv[i], "--preload")) {
            preload = true;
        } else {
            std::fprintf(stderr,
                         "usage: %s [--strict-time PCT] [--ptx-dir DIR] | --shapes FILE | --concurrent FILE | --graph FILE | --preload\n",
                         argv[0]);
            return 2;
        }
    }
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    std::printf("device: %s\n", prop.name);
    cublasHandle_t h;
    CHECK_BLAS(cublasCreate(&h));
    CHECK_BLAS(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH)); // no TF32: a float32 reference
    std::mt19937 rng(1);
    bool ok = true;
    if (shapes_file || concurrent_file || graph_file || preload) {
        ok = shapes_file ? run_shapes(h, shapes_file, rng)
             : graph_file ? run_graph(h, graph_file, rng)
             : preload    ? run_preload()
                          : run_concurrent(h, concurrent_file, rng);
        CHECK_BLAS(cublasDestroy(h));
        std::printf("%s\n", ok ? "PASS" : "FAIL");
        return ok ? 0 : 1;
    }

    int n_classes = 0;
    const TG(_class_info)* cls = TG(_classes)(&n_classes);
    std::printf("== correctness vs cuBLAS\n");
    for (int i = 0; i < n_classes; i++) {
        ok &= check(h, cls[i].op, cls[i].M, cls[i].N, cls[i].K, 1.0f, 0.0f, 0, rng);
        ok &= check(h, cls[i].op, cls[i].M, cls[i].N, cls[i].K, 1.5f, -0.75f, 3, rng);
    }
    const int edges[][3] = {{1, 1, 1}, {97, 89, 83}, {4099, 17, 513}, {1, 4097, 3}, {33, 65, 129}, {2500, 300, 700}};
    for (int op = 0; op < 4; op++)
        if (TG(_default_kernel)(op) >= 0)
            for (auto& e : edges) ok &= check(h, op, e[0], e[1], e[2], -0.5f, 2.0f, 1, rng);
    // Vector problems (M or N of 1) of every op, packed and padded: the header runs them as NN's GEMV
    // where the memory allows (NAME_restate), also under an op it holds no kernel for; the others run
    // on their op's kernels or, without any, are refused.
    const int vecs[][3] = {{1, 3001, 1000}, {2500, 1, 700}, {1, 1, 4099}, {1, 512, 64}, {300, 1, 64}};
    for (int op = 0; op < 4; op++)
        for (auto& e : vecs)
            for (int pad = 0; pad <= 1; pad++) {
                const int M = e[0], N = e[1], K = e[2];
                const int lda = ((op & 2) ? M : K) + pad, ldb = ((op & 1) ? K : N) + pad, ldc = N + pad;
                const float* x = (const float*)256;
                const char* v = TG(_variant_op)((op & 2) ? 'T' : 'N', (op & 1) ? 'T' : 'N', M, N, K, lda, ldb, ldc, x, x, x);
                if (v || TG(_default_kernel)(op) >= 0)
                    ok &= check(h, op, M, N, K, 1.5f, -0.75f, pad, rng);
                else
                    std::printf("ok   %s %dx%dx%d pad=%d refused (no %s kernel, not a restatable vector)\n", op_name(op), M, N, K,
                                pad, op_name(op));
            }
    // The column-major BLAS entry, for every (transa, transb) whose row-major op (transb, transa)
    // the header has: column-major (N, T), a TN call in row-major terms, among them.
    const char trans[] = {'N', 'T'};
    for (char ta : trans)
        for (char tb : trans)
            if (TG(_default_kernel)(TG(_op)(tb, ta)) >= 0) {
                ok &= check_blas(h, ta, tb, 256, 224, 192, 1.0f, 0.0f, 0, rng);
                ok &= check_blas(h, ta, tb, 97, 1041, 139, -1.25f, 0.5f, 3, rng);
            }

    // The strided-batched entry: every batch class called column-major (its row-major op (opa, opb)
    // is column-major (opb, opa) on m = N, n = M), dense and with padding, gaps and a shared B.
    int n_batch = 0;
    const TG(_batch_class)* bcls = TG(_batch_classes)(&n_batch);
    for (int i = 0; i < n_batch; i++) {
        const char ta = (bcls[i].op & 1) ? 'T' : 'N', tb = (bcls[i].op & 2) ? 'T' : 'N';
        ok &= check_batched(h, ta, tb, bcls[i].N, bcls[i].M, bcls[i].K, 1.0f, 0.0f, 0, bcls[i].batch, 0, false, rng);
        ok &= check_batched(h, ta, tb, bcls[i].N, bcls[i].M, bcls[i].K, 1.5f, -0.75f, 3, std::min(bcls[i].batch, 7), 5, false, rng);
        ok &= check_batched(h, ta, tb, 97, 89, 83, -0.5f, 2.0f, 1, 3, 2, true, rng);
    }

    // The fused-epilogue entry: every epilogue the header holds, on a tile-sized and an odd problem;
    // the others must be refused, as a NULL bias must.
    {
        float* d = nullptr;
        CHECK_CUDA(cudaMalloc(&d, 64 * sizeof(float)));
        for (int epi = 1; epi <= 6; epi++) {
            const bool have = TG(_epilogue_kernel)(epi) >= 0;
            if (have) {
                ok &= check_epilogue(h, epi, 512, 384, 256, 1.0f, 0.0f, 0, rng);
                ok &= check_epilogue(h, epi, 97, 89, 83, 1.5f, -0.75f, 3, rng);
            }
            // Refused: an epilogue without a kernel, and a NULL bias for one with a kernel.
            cudaError_t e = TG(_sgemm_epilogue)(epi, 4, 4, 4, 1, d, 4, d, 4, 0, d, 4, have ? nullptr : d, 0);
            std::printf("%s epilogue %d %s -> %s\n", e == cudaErrorInvalidValue ? "ok  " : "FAIL", epi,
                        have ? "bias=NULL" : "(no kernel)", cudaGetErrorName(e));
            ok &= e == cudaErrorInvalidValue;
        }
        CHECK_CUDA(cudaFree(d));
    }

    std::printf("== refusals (must return an error and launch nothing)\n");
    {
        float* d = nullptr;
        CHECK_CUDA(cudaMalloc(&d, 64 * sizeof(float)));
        cudaError_t e1 = TG(_sgemm)(4, 4, 4, 1, d, 3, d, 4, 0, d, 4, 0);  // lda < K
        cudaError_t e2 = TG(_sgemm)(0, 4, 4, 1, d, 4, d, 4, 0, d, 4, 0);  // M = 0
        cudaError_t e3 = TG(_sgemm_blas)('N', 'T', 4, 4, 4, 1, d, 3, d, 4, 0, d, 4, 0);  // lda < m
        cudaError_t e4 = TG(_sgemm_op)('X', 'N', 4, 4, 4, 1, d, 4, d, 4, 0, d, 4, 0);  // no such op
        bool refused = e1 == cudaErrorInvalidValue && e2 == cudaErrorInvalidValue && e3 == cudaErrorInvalidValue &&
                       e4 == cudaErrorInvalidValue;
        std::printf("%s lda<K -> %s, M=0 -> %s, blas lda<m -> %s, op XN -> %s\n", refused ? "ok  " : "FAIL", cudaGetErrorName(e1),
                    cudaGetErrorName(e2), cudaGetErrorName(e3), cudaGetErrorName(e4));
        ok &= refused;
        for (int op = 0; op < 4; op++) {
            if (TG(_batch_default)(op) < 0) {
                // An op without strided-batched kernels is an error too.
                cudaError_t e = TG(_sgemm_strided_batched_op)((op & 2) ? 'T' : 'N', (op & 1) ? 'T' : 'N', 4, 4, 4, 1, d, 4, 16, d, 4, 16,
                                                              0, d, 4, 16, 2, 0);
                std::printf("%s batched %s (no kernel) -> %s\n", e == cudaErrorInvalidValue ? "ok  " : "FAIL", op_name(op),
                            cudaGetErrorName(e));
                ok &= e == cudaErrorInvalidValue;
            } else {
                // batch 0, and C products that overlap (strideC < M*ldc), are refused.
                const char a = (op & 2) ? 'T' : 'N', b = (op & 1) ? 'T' : 'N';
                cudaError_t e1 = TG(_sgemm_strided_batched_op)(a, b, 4, 4, 4, 1, d, 4, 16, d, 4, 16, 0, d, 4, 16, 0, 0);
                cudaError_t e2 = TG(_sgemm_strided_batched_op)(a, b, 4, 4, 4, 1, d, 4, 16, d, 4, 16, 0, d, 4, 8, 2, 0);
                bool r = e1 == cudaErrorInvalidValue && e2 == cudaErrorInvalidValue;
                std::printf("%s batched %s batch=0 -> %s, strideC overlap -> %s\n", r ? "ok  " : "FAIL", op_name(op), cudaGetErrorName(e1),
                            cudaGetErrorName(e2));
                ok &= r;
            }
            if (TG(_default_kernel)(op) >= 0) continue;
            // An op the header has no kernel for is an error, never a wrong launch.
            cudaError_t e = TG(_sgemm_op)((op & 2) ? 'T' : 'N', (op & 1) ? 'T' : 'N', 4, 4, 4, 1, d, 4, d, 4, 0, d, 4, 0);
            std::printf("%s %s (no kernel) -> %s\n", e == cudaErrorInvalidValue ? "ok  " : "FAIL", op_name(op), cudaGetErrorName(e));
            ok &= e == cudaErrorInvalidValue;
        }
        CHECK_CUDA(cudaFree(d));
    }

    std::printf("== timing vs the times recorded at tuning (median of event pairs, one launch each)\n");
    int dev = 0, l2 = 0, rt = 0, drv = 0;
    CHECK_CUDA(cudaGetDevice(&dev));
    CHECK_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    CHECK_CUDA(cudaRuntimeGetVersion(&rt));
    CHECK_CUDA(cudaDriverGetVersion(&drv));
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    {
        // The launch cost that stays inside an event pair when nothing else is queued.
        cudaFunction_t ef;
        CHECK_CUDA(cudaGetFuncBySymbol(&ef, (const void*)tg_empty_kernel));
        double rt_ms = time_ms(s, [&](int) {
            CHECK_CUDA(cudaLaunchKernel((const void*)tg_empty_kernel, dim3(1), dim3(1), (void**)nullptr, 0, s));
        });
        double drv_ms = time_ms(s, [&](int) { CHECK_CU(cuLaunchKernel((CUfunction)ef, 1, 1, 1, 1, 1, 1, 0, (CUstream)s, nullptr, nullptr)); });
        std::printf("empty kernel: runtime cudaLaunchKernel %.5f ms, driver cuLaunchKernel %.5f ms (CUDA runtime %d, driver %d)\n",
                    rt_ms, drv_ms, rt, drv);
    }
    std::printf("ms; launcher: %s_sgemm (%s); driver: its kernel through cuLaunchKernel; ptx: the exported PTX\n"
                "JIT-compiled by the driver, launched the same way (the tuner's code and launch); now/tuned: launcher / tuned\n",
                TG_STR(TG_EXPORT_NAME), TG_CAT(TG_EXPORT_NAME, _PTX) ? "the header's PTX build" : "the header built from source");
    std::printf("%-20s %-40s %4s %10s %10s %10s %10s %9s %9s\n", "shape", "variant", "sets", "launcher", "driver", "ptx",
                "tuned", "now/tuned", "ptx/tuned");
    for (int i = 0; i < n_classes; i++) {
        const TG(_kernel_info)& k = TG(_kernels)(NULL)[cls[i].kernel];
        input_sets in(cls[i].op, cls[i].M, cls[i].N, cls[i].K, l2);
        auto launcher = [&](int j) {
            int x = j % in.n;
            CHECK_CUDA(TG(_launch)(in.op, in.M, in.N, in.K, 1.0f, in.A[x], in.lda, in.B[x], in.ldb, 0.0f, in.C[x], in.ldc, s));
        };
        double ms = time_ms(s, launcher);
        const void* fn = NULL;
        CHECK_CUDA(TG(_function)(cls[i].kernel, &fn));
        CUfunction df = NULL;
#if TG_CAT(TG_EXPORT_NAME, _PTX)
        // The PTX build's function is a library kernel (cudaKernel_t, the driver's CUkernel).
        CHECK_CU(cuKernelGetFunction(&df, (CUkernel)fn));
#else
        cudaFunction_t hf;
        CHECK_CUDA(cudaGetFuncBySymbol(&hf, fn));
        df = (CUfunction)hf;
#endif
        double dms = driver_ms(df, k, in, s);
        // The launcher again after the driver: the lower median of the two, so that a stall of the
        // host during one of them (a tiny kernel waits for its launch inside the event pair) does
        // not read as a slow launcher.
        ms = std::min(ms, time_ms(s, launcher));
        double pms = NAN;
        if (!ptx_dir.empty())
            if (CUfunction pf = load_ptx(ptx_dir, k.name)) pms = driver_ms(pf, k, in, s);
        double now_tuned = ms / cls[i].tuned_ms;
        bool slow = strict >= 0 && now_tuned > 1.0 + strict / 100.0;
        char ptx[2][16] = {"-", "-"};
        if (!std::isnan(pms)) {
            std::snprintf(ptx[0], sizeof ptx[0], "%.5f", pms);
            std::snprintf(ptx[1], sizeof ptx[1], "%.3f", pms / cls[i].tuned_ms);
        }
        std::printf("%5dx%5dx%5d:%s %-40s %4d %10.5f %10.5f %10s %10.5f %9.3f %9s%s\n", cls[i].M, cls[i].N, cls[i].K, op_name(cls[i].op), k.name, in.n,
                    ms, dms, ptx[0], cls[i].tuned_ms, now_tuned, ptx[1], slow ? "  SLOW" : "");
        ok &= !slow;
    }
    if (n_batch > 0) {
        // Strided batches: the launcher against cublasSgemmStridedBatched in this run (ratio = cuBLAS
        // time / launcher time, above 1: faster than cuBLAS) and against the time at tuning.
        std::printf("%-24s %-44s %10s %10s %7s %10s %9s\n", "batch shape", "variant", "launcher", "cuBLAS", "ratio", "tuned",
                    "now/tuned");
        CHECK_BLAS(cublasSetStream(h, s));
        for (int i = 0; i < n_batch; i++) {
            const TG(_batch_class)& b = bcls[i];
            int lda = (b.op & 2) ? b.M : b.K, ldb = (b.op & 1) ? b.K : b.N, ldc = b.N;
            long long sa = (long long)b.M * b.K, sb = (long long)b.K * b.N, sc = (long long)b.M * b.N;
            float *A = nullptr, *B = nullptr, *C = nullptr;
            CHECK_CUDA(cudaMalloc(&A, sa * b.batch * sizeof(float)));
            CHECK_CUDA(cudaMalloc(&B, sb * b.batch * sizeof(float)));
            CHECK_CUDA(cudaMalloc(&C, sc * b.batch * sizeof(float)));
            CHECK_CUDA(cudaMemset(A, 0, sa * b.batch * sizeof(float)));
            CHECK_CUDA(cudaMemset(B, 0, sb * b.batch * sizeof(float)));
            const char oa = (b.op & 2) ? 'T' : 'N', ob = (b.op & 1) ? 'T' : 'N';
            double ms = time_ms(s, [&](int) {
                CHECK_CUDA(TG(_sgemm_strided_batched_op)(oa, ob, b.M, b.N, b.K, 1.0f, A, lda, sa, B, ldb, sb, 0.0f, C, ldc, sc, b.batch, s));
            });
            const float one = 1.0f, zero = 0.0f;
            cublasOperation_t ta = (b.op & 1) ? CUBLAS_OP_T : CUBLAS_OP_N, tb = (b.op & 2) ? CUBLAS_OP_T : CUBLAS_OP_N;
            double cms = time_ms(s, [&](int) {
                CHECK_BLAS(cublasSgemmStridedBatched(h, ta, tb, b.N, b.M, b.K, &one, B, ldb, sb, A, lda, sa, &zero, C, ldc, sc, b.batch));
            });
            char shape[64];
            std::snprintf(shape, sizeof shape, "%dx%dx%d:%s:b%d", b.M, b.N, b.K, op_name(b.op), b.batch);
            std::printf("%-24s %-44s %10.5f %10.5f %7.3f %10.5f %9.3f\n", shape, TG(_kernels)(NULL)[b.kernel].name, ms, cms, cms / ms,
                        b.tuned_ms, ms / b.tuned_ms);
            for (float* p : {A, B, C}) CHECK_CUDA(cudaFree(p));
        }
    }
    CHECK_CUDA(cudaStreamDestroy(s));
    CHECK_BLAS(cublasDestroy(h));
    std::printf("%s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
