// clocks.cu: sustained GEMMs against cuBLAS at 4096^3 and 8192^3, with the GPU's clocks sampled by
// run.sh. For each size and each of five phases (cuBLAS TF32 math, the tf32 export's kernel, cuBLAS
// SGEMM, the 3xtf32 export's kernel, the FP32 export's) it checks the result against cuBLAS, warms up,
// then launches back to back for about two seconds, timing every launch with events, and prints the
// phase's wall-clock start and end (for the clock log), the median of the first five, of the last
// five and of all launches. Plain C++ against the exported headers (tgt.cuh: precision tf32,
// tgx.cuh: precision 3xtf32, tgsgemm.cuh: the committed FP32 example), the CUDA runtime and cuBLAS.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tgt.cuh"
#include "tgx.cuh"
#include "tgsgemm.cuh"

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

static double now_s()
{
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main()
{
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return 1;
    for (int n : {4096, 8192}) {
        size_t elems = (size_t)n * n;
        std::vector<float> host(elems);
        srand(n);
        for (auto& x : host) x = (float)rand() / RAND_MAX - 0.5f;
        float *A, *B, *C, *R;
        CK(cudaMalloc(&A, elems * 4));
        CK(cudaMalloc(&B, elems * 4));
        CK(cudaMalloc(&C, elems * 4));
        CK(cudaMalloc(&R, elems * 4));
        CK(cudaMemcpy(A, host.data(), elems * 4, cudaMemcpyHostToDevice));
        for (auto& x : host) x = (float)rand() / RAND_MAX - 0.5f;
        CK(cudaMemcpy(B, host.data(), elems * 4, cudaMemcpyHostToDevice));
        const float one = 1.0f, zero = 0.0f;
        // Row-major C = A B is column-major C^T = B^T A^T: cuBLAS gets (B, A).
        auto cublas = [&](cublasMath_t math, float* out) {
            cublasSetMathMode(h, math);
            return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, B, n, A, n, &zero, out, n) ==
                           CUBLAS_STATUS_SUCCESS
                       ? cudaSuccess
                       : cudaErrorUnknown;
        };
        struct Phase {
            const char* name;
            int kind;
        } phases[] = {{"cublas_tf32", 0}, {"tilegen_tf32", 1}, {"cublas_sgemm", 2}, {"tilegen_3xtf32", 3},
                          {"tilegen_fp32", 4}};
        for (auto& ph : phases) {
            auto run = [&](float* out) -> cudaError_t {
                switch (ph.kind) {
                case 0: return cublas(CUBLAS_TF32_TENSOR_OP_MATH, out);
                case 1: return tgt_sgemm(n, n, n, 1.0f, A, n, B, n, 0.0f, out, n, 0);
                case 2: return cublas(CUBLAS_DEFAULT_MATH, out);
                case 3: return tgx_sgemm(n, n, n, 1.0f, A, n, B, n, 0.0f, out, n, 0);
                default: return tgsgemm_sgemm(n, n, n, 1.0f, A, n, B, n, 0.0f, out, n, 0);
                }
            };
            // Check against cuBLAS SGEMM: relative Frobenius error.
            CK(cublas(CUBLAS_DEFAULT_MATH, R));
            CK(run(C));
            CK(cudaDeviceSynchronize());
            std::vector<float> c(elems), r(elems);
            CK(cudaMemcpy(c.data(), C, elems * 4, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(r.data(), R, elems * 4, cudaMemcpyDeviceToHost));
            double num = 0, den = 0;
            for (size_t i = 0; i < elems; ++i) {
                num += ((double)c[i] - r[i]) * ((double)c[i] - r[i]);
                den += (double)r[i] * r[i];
            }
            const double rel = std::sqrt(num / den);
            const bool ok = std::isfinite(rel) && rel < (ph.kind == 1 || ph.kind == 0 ? 1e-2 : 1e-5);
            // Warm-up, which also estimates the time of one launch: about two seconds of launches.
            cudaEvent_t w0, w1;
            CK(cudaEventCreate(&w0));
            CK(cudaEventCreate(&w1));
            CK(cudaEventRecord(w0));
            for (int i = 0; i < 3; ++i) CK(run(C));
            CK(cudaEventRecord(w1));
            CK(cudaEventSynchronize(w1));
            float warm;
            CK(cudaEventElapsedTime(&warm, w0, w1));
            const int reps = std::max(20, (int)(2000.0 / (warm / 3)));
            std::vector<cudaEvent_t> ev(reps + 1);
            for (auto& e : ev) CK(cudaEventCreate(&e));
            const double t0 = now_s();
            CK(cudaEventRecord(ev[0]));
            for (int i = 0; i < reps; ++i) {
                CK(run(C));
                CK(cudaEventRecord(ev[i + 1]));
            }
            CK(cudaEventSynchronize(ev[reps]));
            const double t1 = now_s();
            std::vector<double> ms(reps);
            for (int i = 0; i < reps; ++i) {
                float x;
                CK(cudaEventElapsedTime(&x, ev[i], ev[i + 1]));
                ms[i] = x;
            }
            for (auto& e : ev) cudaEventDestroy(e);
            std::vector<double> first(ms.begin(), ms.begin() + 5), last(ms.end() - 5, ms.end());
            const double tflops = 2.0 * n * n * n / (median(ms) * 1e-3) / 1e12;
            printf("%d %-15s %s rel_err=%.2e start=%.3f end=%.3f launches=%d first5_ms=%.4f last5_ms=%.4f median_ms=%.4f tflops=%.1f variant=%s\n",
                   n, ph.name, ok ? "ok " : "BAD", rel, t0, t1, reps, median(first), median(last), median(ms), tflops,
                   ph.kind == 1   ? tgt_variant(n, n, n, n, n, n, A, B, C)
                   : ph.kind == 3 ? tgx_variant(n, n, n, n, n, n, A, B, C)
                   : ph.kind == 4 ? tgsgemm_variant(n, n, n, n, n, n, A, B, C)
                                  : "cublas");
            fflush(stdout);
        }
        cudaFree(A);
        cudaFree(B);
        cudaFree(C);
        cudaFree(R);
    }
    cublasDestroy(h);
    return 0;
}
