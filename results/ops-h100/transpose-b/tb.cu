// tb: does a k-contiguous B pay for its own transposition? Under op(B) = Bᵀ (NT and TT, B stored
// N x K) every tilegen kernel transposes B's tiles on the way into shared memory, and NT and TT run
// 5-15 % behind the same products under NN and TN (results/workload/nvidia-h100-80gb-hbm3/portfolio/
// {nt,tt}/workload). This harness times, on each shape of a file ("M N K op=NT|TT  # source"), with
// an export's header (tg.cuh: `runner export --name tg`) and cuBLAS in one process:
//   cublas   cublasSgemm with the op (the baseline);
//   direct   the export's entry for the op (tg_sgemm_op);
//   split    the two parts of the composite apart: the transpose of B into a K x N workspace
//            (transpose_ms, a 64 x 64 shared-memory tile, float4 along both rows) and the export's
//            entry for the op with B untransposed (NN for NT, TN for TT) on that workspace (gemm_ms);
//   composite both, back to back on one stream (what a composite kernel of the export would cost).
// Every result is first checked against cuBLAS (relative Frobenius error below 1e-4, NaN-poisoned C).
// Timing as ../../workload/nvidia-h100-80gb-hbm3/vector-nt/ab.cu: three rounds whose order rotates,
// each the median of event pairs after warm-up over rotated input sets, the lowest round kept.
//
//   nvcc -O2 -arch=sm_90 -I EXPORT_DIR -o tb tb.cu -lcublas
//   ./tb shapes.txt
#include "tg.cuh"

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            std::exit(2);                                                                          \
        }                                                                                          \
    } while (0)
#define CB(x)                                                                           \
    do {                                                                                \
        cublasStatus_t s_ = (x);                                                        \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                              \
            std::fprintf(stderr, "%s:%d: %s: status %d\n", __FILE__, __LINE__, #x, s_); \
            std::exit(2);                                                               \
        }                                                                               \
    } while (0)

// transpose writes the rows x cols matrix in (leading dimension ldi) transposed into out (cols x
// rows, leading dimension ldo). A block moves a 64 x 64 tile through shared memory (65 floats a row:
// no bank conflicts on the column reads); with rows, cols, ldi and ldo multiples of 4 and 16-byte
// aligned pointers it reads and writes float4s, else one float at a time with guards.
template <bool VEC>
__global__ void __launch_bounds__(256) transpose(const float* __restrict__ in, int ldi, float* __restrict__ out, int ldo,
                                                 int rows, int cols)
{
    __shared__ float t[64][65];
    const int r0 = blockIdx.y * 64, c0 = blockIdx.x * 64;
    const int tid = threadIdx.x;
    if (VEC && r0 + 64 <= rows && c0 + 64 <= cols) {
        // 64 rows x 16 float4: four float4s a thread.
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int f = tid + i * 256, r = f / 16, c = (f % 16) * 4;
            const float4 v = *reinterpret_cast<const float4*>(in + (size_t)(r0 + r) * ldi + c0 + c);
            t[r][c] = v.x, t[r][c + 1] = v.y, t[r][c + 2] = v.z, t[r][c + 3] = v.w;
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int f = tid + i * 256, c = f / 16, r = (f % 16) * 4;
            *reinterpret_cast<float4*>(out + (size_t)(c0 + c) * ldo + r0 + r) = make_float4(t[r][c], t[r + 1][c], t[r + 2][c], t[r + 3][c]);
        }
        return;
    }
    for (int f = tid; f < 64 * 64; f += 256) {
        const int r = f / 64, c = f % 64;
        if (r0 + r < rows && c0 + c < cols) t[r][c] = in[(size_t)(r0 + r) * ldi + c0 + c];
    }
    __syncthreads();
    for (int f = tid; f < 64 * 64; f += 256) {
        const int c = f / 64, r = f % 64;
        if (r0 + r < rows && c0 + c < cols) out[(size_t)(c0 + c) * ldo + r0 + r] = t[r][c];
    }
}

static void launch_transpose(const float* in, int ldi, float* out, int ldo, int rows, int cols, cudaStream_t s)
{
    const dim3 grid((cols + 63) / 64, (rows + 63) / 64);
    const bool vec = rows % 4 == 0 && cols % 4 == 0 && ldi % 4 == 0 && ldo % 4 == 0 && (uintptr_t)in % 16 == 0 &&
                     (uintptr_t)out % 16 == 0;
    if (vec) transpose<true><<<grid, 256, 0, s>>>(in, ldi, out, ldo, rows, cols);
    else transpose<false><<<grid, 256, 0, s>>>(in, ldi, out, ldo, rows, cols);
    CK(cudaGetLastError());
}

static double time_ms(cudaStream_t s, const std::function<void(int)>& launch)
{
    for (int i = 0; i < 3; i++) launch(i);
    CK(cudaStreamSynchronize(s));
    const int batch_max = 128;
    std::vector<cudaEvent_t> ev(2 * batch_max);
    for (auto& e : ev) CK(cudaEventCreate(&e));
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
            CK(cudaEventRecord(ev[2 * i], s));
            launch((int)samples.size() + i);
            CK(cudaEventRecord(ev[2 * i + 1], s));
        }
        CK(cudaStreamSynchronize(s));
        for (int i = 0; i < batch; i++) {
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
            samples.push_back(ms);
            total += ms;
        }
    }
    for (auto& e : ev) CK(cudaEventDestroy(e));
    std::sort(samples.begin(), samples.end());
    size_t n = samples.size();
    return n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

static float* upload(const std::vector<float>& h)
{
    float* d = nullptr;
    CK(cudaMalloc(&d, std::max<size_t>(h.size(), 1) * sizeof(float)));
    CK(cudaMemcpy(d, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
    return d;
}

// rel_err is ||c - r||_F / ||r||_F of two device results of n floats (NaN: infinity).
static double rel_err(const float* dc, const float* dr, size_t n)
{
    std::vector<float> c(n), r(n);
    CK(cudaMemcpy(c.data(), dc, n * sizeof(float), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(r.data(), dr, n * sizeof(float), cudaMemcpyDeviceToHost));
    double d = 0, z = 0;
    for (size_t i = 0; i < n; i++) {
        if (!std::isfinite(c[i])) return INFINITY;
        d += ((double)c[i] - r[i]) * ((double)c[i] - r[i]);
        z += (double)r[i] * r[i];
    }
    return std::sqrt(d / std::max(z, 1e-300));
}

static double geomean(const std::vector<double>& v)
{
    double x = 0;
    for (double e : v) x += std::log(e);
    return v.empty() ? NAN : std::exp(x / v.size());
}

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s SHAPES_FILE\n", argv[0]);
        return 2;
    }
    FILE* f = std::fopen(argv[1], "r");
    if (!f) {
        std::fprintf(stderr, "%s: cannot open\n", argv[1]);
        return 2;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device: %s\n", prop.name);
    const long long l2 = prop.l2CacheSize;
    cublasHandle_t h;
    CB(cublasCreate(&h));
    CB(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CB(cublasSetStream(h, s));
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<double> rd, rc;
    bool ok = true;
    char buf[4096];
    for (int line = 1; std::fgets(buf, sizeof buf, f); line++) {
        std::string l(buf), src;
        size_t hash = l.find('#');
        if (hash != std::string::npos) src = l.substr(hash + 1), l = l.substr(0, hash);
        while (!src.empty() && (src.back() == '\n' || src.back() == ' ')) src.pop_back();
        int M, N, K, used = 0;
        if (std::sscanf(l.c_str(), "%d %d %d %n", &M, &N, &K, &used) != 3) continue;
        char opa = 'N', opb = 'T';
        if (std::sscanf(l.c_str() + used, "op=%c%c", &opa, &opb) != 2 || opb != 'T') {
            std::fprintf(stderr, "line %d: want op=NT or op=TT\n", line);
            return 2;
        }
        // Stored A is K x M under op(A) = T (lda = M), else M x K; B is N x K (ldb = K); the
        // workspace holds B transposed, K x N (ldw = N).
        const int lda = opa == 'T' ? M : K, ldb = K, ldw = N;
        const cublasOperation_t tb = opa == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N;
        long long set_bytes = 4LL * ((long long)M * K + 2LL * K * N + (long long)M * N);
        int n = set_bytes <= l2 ? (int)std::min<long long>(std::max<long long>((3 * l2 + set_bytes - 1) / set_bytes, 2), 64) : 1;
        std::vector<float*> A(n), B(n), C(n), Wk(n);
        for (int i = 0; i < n; i++) {
            std::vector<float> a((size_t)M * K), b((size_t)K * N);
            for (auto& x : a) x = u(rng);
            for (auto& x : b) x = u(rng);
            A[i] = upload(a), B[i] = upload(b);
            CK(cudaMalloc(&C[i], (size_t)M * N * sizeof(float)));
            CK(cudaMalloc(&Wk[i], (size_t)K * N * sizeof(float)));
        }
        float* R = nullptr;
        CK(cudaMalloc(&R, (size_t)M * N * sizeof(float)));
        const float one = 1.0f, zero = 0.0f;
        auto cub = [&](int j) { CB(cublasSgemm(h, CUBLAS_OP_T, tb, N, M, K, &one, B[j % n], ldb, A[j % n], lda, &zero, C[j % n], N)); };
        auto direct = [&](int j) { CK(tg_sgemm_op(opa, 'T', M, N, K, 1.0f, A[j % n], lda, B[j % n], ldb, 0.0f, C[j % n], N, s)); };
        auto tr = [&](int j) { launch_transpose(B[j % n], ldb, Wk[j % n], ldw, N, K, s); };
        auto gemm = [&](int j) { CK(tg_sgemm_op(opa, 'N', M, N, K, 1.0f, A[j % n], lda, Wk[j % n], ldw, 0.0f, C[j % n], N, s)); };
        auto composite = [&](int j) { tr(j), gemm(j); };
        CB(cublasSgemm(h, CUBLAS_OP_T, tb, N, M, K, &one, B[0], ldb, A[0], lda, &zero, R, N));
        double err[2];
        const std::function<void(int)> checked[2] = {direct, composite};
        for (int q = 0; q < 2; q++) {
            CK(cudaMemsetAsync(C[0], 0xff, (size_t)M * N * sizeof(float), s));
            CK(cudaMemsetAsync(Wk[0], 0xff, (size_t)K * N * sizeof(float), s));
            checked[q](0);
            CK(cudaStreamSynchronize(s));
            err[q] = rel_err(C[0], R, (size_t)M * N);
        }
        const bool good = err[0] < 1e-4 && err[1] < 1e-4;
        ok &= good;
        // cuBLAS, direct, composite, transpose, gemm.
        const std::function<void(int)> who[5] = {cub, direct, composite, tr, gemm};
        double t[5] = {INFINITY, INFINITY, INFINITY, INFINITY, INFINITY};
        for (int round = 0; round < 3; round++)
            for (int q = 0; q < 5; q++) {
                int w = (round + q) % 5;
                t[w] = std::min(t[w], time_ms(s, who[w]));
            }
        const char* vd = tg_variant_op(opa, 'T', M, N, K, lda, ldb, N, A[0], B[0], C[0]);
        const char* vg = tg_variant_op(opa, 'N', M, N, K, lda, ldw, N, A[0], Wk[0], C[0]);
        rd.push_back(t[0] / t[1]), rc.push_back(t[0] / t[2]);
        std::printf("shape %dx%dx%d op=%c%c direct=%s gemm=%s cublas_ms=%.5f direct_ms=%.5f composite_ms=%.5f transpose_ms=%.5f "
                    "gemm_ms=%.5f ratio_direct=%.3f ratio_composite=%.3f transpose_gbps=%.0f err_direct=%.1e err_composite=%.1e%s  # %s\n",
                    M, N, K, opa, opb, vd ? vd : "none", vg ? vg : "none", t[0], t[1], t[2], t[3], t[4], t[0] / t[1], t[0] / t[2],
                    8.0 * N * K / (t[3] * 1e6), err[0], err[1], good ? "" : " WRONG", src.c_str());
        std::fflush(stdout);
        for (int i = 0; i < n; i++) {
            CK(cudaFree(A[i]));
            CK(cudaFree(B[i]));
            CK(cudaFree(C[i]));
            CK(cudaFree(Wk[i]));
        }
        CK(cudaFree(R));
    }
    std::fclose(f);
    std::printf("all %zu: geomean ratio_direct %.3f ratio_composite %.3f\n", rd.size(), geomean(rd), geomean(rc));
    std::printf("%s\n", ok ? "PASS" : "FAIL");
    CB(cublasDestroy(h));
    return ok ? 0 : 1;
}
