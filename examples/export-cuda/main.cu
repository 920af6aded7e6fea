// export-cuda uses a header written by `runner export` from any nvcc project: it runs the exported
// SGEMM on every tuned shape class and on edge shapes, checks each result against cuBLAS, and
// times each class the way the tuner did (rotated input sets, one event pair per launch, median),
// printing the ratio to the time recorded at tuning. It exits 1 when a result is wrong, when a
// problem no variant accepts is not refused, or (with --strict-time PCT) when a class is more
// than PCT percent slower than at tuning.
//
//   nvcc -O2 -arch=sm_90 -I../export-go/tgsgemm -o export-cuda main.cu -lcublas
//   ./export-cuda [--strict-time 5]
#include "tgsgemm.cuh"

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#define CHECK_CUDA(x)                                                                                  \
    do {                                                                                               \
        cudaError_t e_ = (x);                                                                          \
        if (e_ != cudaSuccess) {                                                                       \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            std::exit(2);                                                                              \
        }                                                                                              \
    } while (0)
#define CHECK_BLAS(x)                                                                   \
    do {                                                                                \
        cublasStatus_t s_ = (x);                                                        \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                              \
            std::fprintf(stderr, "%s:%d: %s: status %d\n", __FILE__, __LINE__, #x, s_); \
            std::exit(2);                                                               \
        }                                                                               \
    } while (0)

// Row-major C = alpha*A*B + beta*C through column-major cuBLAS: C^T = B^T * A^T.
static void cublas_rowmajor(cublasHandle_t h, int M, int N, int K, float alpha, const float* A, int lda,
                            const float* B, int ldb, float beta, float* C, int ldc)
{
    CHECK_BLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, ldb, A, lda, &beta, C, ldc));
}

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

// check compares the exported SGEMM with cuBLAS on one problem. The tolerance per element is
// 2*(K+2)*2^-24 * (|alpha|*(|A||B|)_ij + |beta*C0_ij|) for each of the two results (so twice that
// between them); |A||B| comes from cuBLAS on the absolute values.
static bool check(cublasHandle_t h, int M, int N, int K, float alpha, float beta, int pad, std::mt19937& rng)
{
    int lda = K + pad, ldb = N + pad, ldc = N + pad;
    std::vector<float> a = random_matrix(rng, (size_t)M * lda), b = random_matrix(rng, (size_t)K * ldb),
                       c0 = random_matrix(rng, (size_t)M * ldc);
    std::vector<float> aa(a.size()), ab(b.size());
    for (size_t i = 0; i < a.size(); i++) aa[i] = std::fabs(a[i]);
    for (size_t i = 0; i < b.size(); i++) ab[i] = std::fabs(b[i]);
    float *dA = upload(a), *dB = upload(b), *dC = upload(c0), *dR = upload(c0), *dAA = upload(aa), *dAB = upload(ab);
    std::vector<float> zeros((size_t)M * ldc, 0.0f);
    float* dS = upload(zeros);

    cudaError_t err = tgsgemm_sgemm(M, N, K, alpha, dA, lda, dB, ldb, beta, dC, ldc, 0);
    cublas_rowmajor(h, M, N, K, alpha, dA, lda, dB, ldb, beta, dR, ldc);
    cublas_rowmajor(h, M, N, K, 1.0f, dAA, lda, dAB, ldb, 0.0f, dS, ldc);
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<float> c((size_t)M * ldc), r((size_t)M * ldc), s((size_t)M * ldc);
    CHECK_CUDA(cudaMemcpy(c.data(), dC, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(r.data(), dR, r.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(s.data(), dS, s.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (float* p : {dA, dB, dC, dR, dAA, dAB, dS}) CHECK_CUDA(cudaFree(p));

    const char* v = tgsgemm_variant(M, N, K, lda, ldb, ldc, dA, dB, dC);
    if (err != cudaSuccess) {
        std::printf("FAIL %dx%dx%d alpha=%g beta=%g pad=%d: %s (variant %s)\n", M, N, K, alpha, beta, pad,
                    cudaGetErrorString(err), v ? v : "none");
        return false;
    }
    double scale = 2.0 * (K + 2) * std::ldexp(1.0, -24), max_abs = 0, worst = 0;
    long bad = 0;
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            size_t x = (size_t)i * ldc + j;
            double bound = 2.0 * scale * (std::fabs(alpha) * s[x] + std::fabs(beta * c0[x])) + 1e-30;
            double d = std::fabs((double)c[x] - (double)r[x]);
            if (!(d <= bound)) bad++;
            max_abs = std::max(max_abs, d);
            worst = std::max(worst, d / bound);
        }
    }
    // The padding columns must be untouched.
    for (int i = 0; i < M; i++)
        for (int j = N; j < ldc; j++)
            if (c[(size_t)i * ldc + j] != c0[(size_t)i * ldc + j]) bad++;
    std::printf("%s %dx%dx%d alpha=%g beta=%g pad=%d variant=%s max_abs=%.3g worst/tol=%.3f bad=%ld\n",
                bad ? "FAIL" : "ok  ", M, N, K, alpha, beta, pad, v, max_abs, worst, bad);
    return bad == 0;
}

// median_ms times the exported SGEMM like the tuner: beta = 0, dense leading dimensions, input sets
// rotated so that together they are about three times L2 when one fits in it, 3 warm-up launches,
// then at least 20 launches and 100 ms (at most 1000), each between its own event pair.
static double median_ms(int M, int N, int K, int* sets_out)
{
    int dev = 0, l2 = 0;
    CHECK_CUDA(cudaGetDevice(&dev));
    CHECK_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    long long set_bytes = 4LL * ((long long)M * K + (long long)K * N + (long long)M * N);
    int nsets = 1;
    if (set_bytes <= l2) nsets = (int)std::min<long long>(std::max<long long>((3LL * l2 + set_bytes - 1) / set_bytes, 2), 64);
    *sets_out = nsets;
    std::mt19937 rng(0x5eed);
    std::vector<float*> A(nsets), B(nsets), C(nsets);
    for (int i = 0; i < nsets; i++) {
        A[i] = upload(random_matrix(rng, (size_t)M * K));
        B[i] = upload(random_matrix(rng, (size_t)K * N));
        CHECK_CUDA(cudaMalloc(&C[i], (size_t)M * N * sizeof(float)));
    }
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    auto launch = [&](int i) {
        int x = i % nsets;
        CHECK_CUDA(tgsgemm_sgemm(M, N, K, 1.0f, A[x], K, B[x], N, 0.0f, C[x], N, s));
    };
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
    for (int i = 0; i < nsets; i++) {
        CHECK_CUDA(cudaFree(A[i]));
        CHECK_CUDA(cudaFree(B[i]));
        CHECK_CUDA(cudaFree(C[i]));
    }
    CHECK_CUDA(cudaStreamDestroy(s));
    std::sort(samples.begin(), samples.end());
    size_t n = samples.size();
    return n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

int main(int argc, char** argv)
{
    double strict = -1;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--strict-time") && i + 1 < argc) {
            strict = std::atof(argv[++i]);
        } else {
            std::fprintf(stderr, "usage: %s [--strict-time PCT]\n", argv[0]);
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

    int n_classes = 0;
    const tgsgemm_class_info* cls = tgsgemm_classes(&n_classes);
    std::printf("== correctness vs cuBLAS\n");
    for (int i = 0; i < n_classes; i++) {
        ok &= check(h, cls[i].M, cls[i].N, cls[i].K, 1.0f, 0.0f, 0, rng);
        ok &= check(h, cls[i].M, cls[i].N, cls[i].K, 1.5f, -0.75f, 3, rng);
    }
    const int edges[][3] = {{1, 1, 1}, {97, 89, 83}, {4099, 17, 513}, {1, 4097, 3}, {33, 65, 129}, {2500, 300, 700}};
    for (auto& e : edges) ok &= check(h, e[0], e[1], e[2], -0.5f, 2.0f, 1, rng);

    std::printf("== refusals (must return an error and launch nothing)\n");
    {
        float* d = nullptr;
        CHECK_CUDA(cudaMalloc(&d, 64 * sizeof(float)));
        cudaError_t e1 = tgsgemm_sgemm(4, 4, 4, 1, d, 3, d, 4, 0, d, 4, 0);  // lda < K
        cudaError_t e2 = tgsgemm_sgemm(0, 4, 4, 1, d, 4, d, 4, 0, d, 4, 0);  // M = 0
        bool refused = e1 == cudaErrorInvalidValue && e2 == cudaErrorInvalidValue;
        std::printf("%s lda<K -> %s, M=0 -> %s\n", refused ? "ok  " : "FAIL", cudaGetErrorName(e1), cudaGetErrorName(e2));
        ok &= refused;
        CHECK_CUDA(cudaFree(d));
    }

    std::printf("== timing vs the times recorded at tuning\n");
    std::printf("%-16s %-18s %7s %11s %11s %8s\n", "shape", "variant", "sets", "now ms", "tuned ms", "ratio");
    for (int i = 0; i < n_classes; i++) {
        int sets = 0;
        double ms = median_ms(cls[i].M, cls[i].N, cls[i].K, &sets);
        double ratio = ms / cls[i].tuned_ms;
        bool slow = strict >= 0 && ratio > 1.0 + strict / 100.0;
        std::printf("%5dx%5dx%5d %-18s %7d %11.5f %11.5f %8.3f%s\n", cls[i].M, cls[i].N, cls[i].K,
                    tgsgemm_kernels(NULL)[cls[i].kernel].name, sets, ms, cls[i].tuned_ms, ratio, slow ? "  SLOW" : "");
        ok &= !slow;
    }
    CHECK_BLAS(cublasDestroy(h));
    std::printf("%s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
