// diagnostic: where an unaligned shallow-K shape loses (loads of B, store of C), and a C epilogue
// staged through shared memory. Usage: ./bench

#include "cpasync_128x128x16_w64_t8x8_s3_k1_x0.cu"
#include "cpasync_64x64x16_w32_t8x4_s4_k1_x0.cu"
#include "cpasync_64x64x16_w32_t8x4_s3_k1_x1.cu"
#include "rows.cuh"
#include "proto128.cu"
#include "proto128b.cu"
#include "proto64.cu"
#include "proto64x.cu"
#include "proto128f.cu"
#include "proto64xf.cu"
#include "proto128fcs.cu"
#include "proto128cs.cu"
#include <cublas_v2.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <random>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(2);} } while (0)
typedef void (*Kern)(int, int, int, float, const float*, int, const float*, int, float, float*, int);
struct K { const char* name; Kern f; int bm, bn, threads, smem; };
template <class F> static double time_ms(F launch) {
    for (int i = 0; i < 5; i++) launch();
    CK(cudaDeviceSynchronize());
    std::vector<cudaEvent_t> ev(400); for (auto& e : ev) CK(cudaEventCreate(&e));
    std::vector<float> s;
    for (int i = 0; i < 200; i++) { CK(cudaEventRecord(ev[2*i])); launch(); CK(cudaEventRecord(ev[2*i+1])); }
    CK(cudaDeviceSynchronize());
    for (int i = 0; i < 200; i++) { float ms; CK(cudaEventElapsedTime(&ms, ev[2*i], ev[2*i+1])); s.push_back(ms); }
    for (auto& e : ev) cudaEventDestroy(e);
    std::sort(s.begin(), s.end()); return 0.5 * (s[99] + s[100]);
}
int main() {
    K ks[] = {
        {"cpasync_128x128_s3", cpasync_128x128x16_w64_t8x8_s3_k1_x0, 128, 128, 256, 50688},
        {"realign_128x128_s3", proto128, 128, 128, 256, 50688},
        {"realign_128x128_s3_b2", proto128b, 128, 128, 256, 50688},
        {"cpasync_64x64_s4", cpasync_64x64x16_w32_t8x4_s4_k1_x0, 64, 64, 128, 34816},
        {"realign_64x64_s4", proto64, 64, 64, 128, 34816},
        {"cpasync_64x64_s3x", cpasync_64x64x16_w32_t8x4_s3_k1_x1, 64, 64, 128, 26112},
        {"realign_64x64_s3x", proto64x, 64, 64, 128, 26112},
        {"forced_128x128_s3_b2", proto128f, 128, 128, 256, 50688},
        {"forced_64x64_s3x", proto64xf, 64, 64, 128, 26112},
        {"forced_128x128_b2_cs", proto128fcs, 128, 128, 256, 50688},
        {"cpasync_128x128_cs", proto128cs, 128, 128, 256, 50688},
    };
    for (auto& k : ks) CK(cudaFuncSetAttribute(k.f, cudaFuncAttributeMaxDynamicSharedMemorySize, k.smem));
    cublasHandle_t h; cublasCreate(&h);
    int shapes[][3] = {{8191, 8191, 97}, {4093, 4091, 127}, {3001, 2999, 97}, {2048, 2047, 97}};
    const size_t cap = (size_t)8200 * 8200;
    float *A, *B, *C, *R;
    CK(cudaMalloc(&A, cap * 4)); CK(cudaMalloc(&B, cap * 4)); CK(cudaMalloc(&C, cap * 4)); CK(cudaMalloc(&R, cap * 4));
    { std::vector<float> h(cap); std::mt19937 g(1); std::uniform_real_distribution<float> u(-1, 1); for (auto& x : h) x = u(g);
      CK(cudaMemcpy(A, h.data(), cap * 4, cudaMemcpyHostToDevice)); CK(cudaMemcpy(B, h.data(), cap * 4, cudaMemcpyHostToDevice)); }
    auto up4 = [](int x) { return (x + 3) / 4 * 4; };
    for (auto& sh : shapes) {
        int M = sh[0], N = sh[1], Kd = sh[2];
        struct L { const char* tag; int lda, ldb, ldc; } lds[] = {
            {"odd", Kd, N, N}, {"C16", Kd, N, up4(N)}, {"all16", up4(Kd), up4(N), up4(N)}};
        for (auto& l : lds) {
            float one = 1, zero = 0;
            auto cub = [&] { cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, Kd, &one, B, l.ldb, A, l.lda, &zero, R, l.ldc); };
            cub(); CK(cudaDeviceSynchronize());
            double tc = time_ms(cub);
            std::vector<float> r((size_t)M * l.ldc), c((size_t)M * l.ldc);
            CK(cudaMemcpy(r.data(), R, r.size() * 4, cudaMemcpyDeviceToHost));
            printf("%5dx%5dx%5d %-5s lda=%d ldb=%d ldc=%d cublas %.4f ms\n", M, N, Kd, l.tag, l.lda, l.ldb, l.ldc, tc);
            for (auto& k : ks) {
                dim3 grid((N + k.bn - 1) / k.bn, (M + k.bm - 1) / k.bm);
                auto run = [&] { k.f<<<grid, k.threads, k.smem>>>(M, N, Kd, 1.0f, A, l.lda, B, l.ldb, 0.0f, C, l.ldc); };
                CK(cudaMemset(C, 0xff, (size_t)M * l.ldc * 4));
                run(); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
                CK(cudaMemcpy(c.data(), C, c.size() * 4, cudaMemcpyDeviceToHost));
                double num = 0, den = 0; bool nan = false;
                for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) { double d = c[(size_t)i*l.ldc+j] - r[(size_t)i*l.ldc+j]; if (std::isnan(c[(size_t)i*l.ldc+j])) nan = true; num += d*d; den += (double)r[(size_t)i*l.ldc+j]*r[(size_t)i*l.ldc+j]; }
                double t = time_ms(run);
                if (l.tag[0] == 'o') { // beta != 0 against cuBLAS
                    float b7 = 0.7f;
                    CK(cudaMemcpy(C, A + 12345, (size_t)M * l.ldc * 4, cudaMemcpyDeviceToDevice));
                    CK(cudaMemcpy(R, A + 12345, (size_t)M * l.ldc * 4, cudaMemcpyDeviceToDevice));
                    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, Kd, &one, B, l.ldb, A, l.lda, &b7, R, l.ldc);
                    k.f<<<grid, k.threads, k.smem>>>(M, N, Kd, 1.0f, A, l.lda, B, l.ldb, 0.7f, C, l.ldc);
                    CK(cudaDeviceSynchronize());
                    std::vector<float> r2(c.size());
                    CK(cudaMemcpy(c.data(), C, c.size() * 4, cudaMemcpyDeviceToHost));
                    CK(cudaMemcpy(r2.data(), R, c.size() * 4, cudaMemcpyDeviceToHost));
                    double n2 = 0, d2 = 0; size_t bad = 0;
                    for (size_t x = 0; x < c.size(); x++) { double d = c[x] - r2[x]; if (!(std::fabs(d) <= 1e-3 * (1 + std::fabs(r2[x])))) bad++; n2 += d*d; d2 += (double)r2[x]*r2[x]; }
                    printf("    %-20s beta=0.7 err %.1e bad %zu\n", k.name, std::sqrt(n2 / d2), bad);
                }
                printf("    %-20s %.4f ms ratio %.3f err %.1e%s\n", k.name, t, tc / t, std::sqrt(num / den), nan ? " NAN" : "");
            }
        }
    }
    return 0;
}
