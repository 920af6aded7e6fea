// tb: does a transposed operand pay for its own transposition? Every tilegen SIMT kernel computes
// outer products of a column of op(A) and a row of op(B), and reads them best where op(A) is stored
// K x M and op(B) K x N: the TN op. Under NN (A stored M x K) it transposes A's tiles on their way
// into shared memory, under NT and TT (B stored N x K) B's, and the bench has NN 4096^3 at 0.963 of
// cuBLAS, NT 0.931, TT 0.955 and TN 0.993. This harness times, on each shape of a file
// ("M N K op=NN|NT|TT  # source"), with an export's header (tg.cuh: `runner export --name tg`) and
// cuBLAS in one process:
//   cublas   cublasSgemm with the op (the baseline);
//   direct   the export's entry for the op (tg_sgemm_op);
//   comp_b   B transposed into a K x N workspace when stored N x K, then the entry of (op(A), N);
//   comp_tn  A transposed into a K x M workspace when stored M x K and B as in comp_b, then the TN
//            entry;
// and their parts apart (the transposes: a 64 x 64 shared-memory tile, float4 along both rows; the
// entries on the workspaces). Every result is first checked against cuBLAS (relative Frobenius error
// below 1e-4, NaN-poisoned C and workspaces).
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
    std::vector<double> rd, rc, rt, rbest;
    bool ok = true;
    char buf[4096];
    for (int line = 1; std::fgets(buf, sizeof buf, f); line++) {
        std::string l(buf), src;
        size_t hash = l.find('#');
        if (hash != std::string::npos) src = l.substr(hash + 1), l = l.substr(0, hash);
        while (!src.empty() && (src.back() == '\n' || src.back() == ' ')) src.pop_back();
        int M, N, K, used = 0;
        if (std::sscanf(l.c_str(), "%d %d %d %n", &M, &N, &K, &used) != 3) continue;
        char opa = 'N', opb = 'N';
        if (std::sscanf(l.c_str() + used, "op=%c%c", &opa, &opb) != 2 || (opa != 'N' && opa != 'T') || (opb != 'N' && opb != 'T') ||
            (opa == 'T' && opb == 'N')) {
            std::fprintf(stderr, "line %d: want op=NN, NT or TT\n", line);
            return 2;
        }
        // Stored A is K x M under op(A) = T (lda = M), else M x K (lda = K); B is N x K under
        // op(B) = T (ldb = K), else K x N (ldb = N). The workspaces hold A transposed (K x M, ldwa =
        // M) and B transposed (K x N, ldwb = N).
        const int lda = opa == 'T' ? M : K, ldb = opb == 'T' ? K : N, ldwa = M, ldwb = N;
        const cublasOperation_t ta = opa == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N, tbo = opb == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N;
        long long set_bytes = 4LL * (2LL * M * K + 2LL * K * N + (long long)M * N);
        int n = set_bytes <= l2 ? (int)std::min<long long>(std::max<long long>((3 * l2 + set_bytes - 1) / set_bytes, 2), 64) : 1;
        std::vector<float*> A(n), B(n), C(n), WA(n), WB(n);
        for (int i = 0; i < n; i++) {
            std::vector<float> a((size_t)M * K), b((size_t)K * N);
            for (auto& x : a) x = u(rng);
            for (auto& x : b) x = u(rng);
            A[i] = upload(a), B[i] = upload(b);
            CK(cudaMalloc(&C[i], (size_t)M * N * sizeof(float)));
            CK(cudaMalloc(&WA[i], (size_t)K * M * sizeof(float)));
            CK(cudaMalloc(&WB[i], (size_t)K * N * sizeof(float)));
        }
        float* R = nullptr;
        CK(cudaMalloc(&R, (size_t)M * N * sizeof(float)));
        const float one = 1.0f, zero = 0.0f;
        // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
        auto cub = [&](int j) { CB(cublasSgemm(h, tbo, ta, N, M, K, &one, B[j % n], ldb, A[j % n], lda, &zero, C[j % n], N)); };
        auto direct = [&](int j) { CK(tg_sgemm_op(opa, opb, M, N, K, 1.0f, A[j % n], lda, B[j % n], ldb, 0.0f, C[j % n], N, s)); };
        // The composite "b": B transposed when stored N x K, then the entry of (opa, N). The composite
        // "tn": A transposed when stored M x K and B when stored N x K, then the TN entry (the one op
        // whose two operands a SIMT tile reads along M and N as stored).
        const bool tb_b = opb == 'T', tn_a = opa == 'N', tn_b = opb == 'T';
        auto trb = [&](int j) { launch_transpose(B[j % n], ldb, WB[j % n], ldwb, N, K, s); };
        auto tra = [&](int j) { launch_transpose(A[j % n], lda, WA[j % n], ldwa, M, K, s); };
        auto gemm_b = [&](int j) { CK(tg_sgemm_op(opa, 'N', M, N, K, 1.0f, A[j % n], lda, WB[j % n], ldwb, 0.0f, C[j % n], N, s)); };
        auto gemm_tn = [&](int j) {
            CK(tg_sgemm_op('T', 'N', M, N, K, 1.0f, tn_a ? WA[j % n] : A[j % n], tn_a ? ldwa : lda, tn_b ? WB[j % n] : B[j % n],
                           tn_b ? ldwb : ldb, 0.0f, C[j % n], N, s));
        };
        auto comp_b = [&](int j) { if (tb_b) trb(j); gemm_b(j); };
        auto comp_tn = [&](int j) { if (tn_a) tra(j); if (tn_b) trb(j); gemm_tn(j); };
        CB(cublasSgemm(h, tbo, ta, N, M, K, &one, B[0], ldb, A[0], lda, &zero, R, N));
        double err[3];
        const std::function<void(int)> checked[3] = {direct, comp_b, comp_tn};
        for (int q = 0; q < 3; q++) {
            CK(cudaMemsetAsync(C[0], 0xff, (size_t)M * N * sizeof(float), s));
            CK(cudaMemsetAsync(WA[0], 0xff, (size_t)K * M * sizeof(float), s));
            CK(cudaMemsetAsync(WB[0], 0xff, (size_t)K * N * sizeof(float), s));
            checked[q](0);
            CK(cudaStreamSynchronize(s));
            err[q] = rel_err(C[0], R, (size_t)M * N);
        }
        const bool good = err[0] < 1e-4 && err[1] < 1e-4 && err[2] < 1e-4;
        ok &= good;
        // cuBLAS, direct, composite b, composite tn, transpose of A, transpose of B, gemm of b, gemm of tn.
        const int nw = 8;
        const std::function<void(int)> who[nw] = {cub, direct, comp_b, comp_tn, tra, trb, gemm_b, gemm_tn};
        double t[nw];
        for (double& x : t) x = INFINITY;
        for (int round = 0; round < 3; round++)
            for (int q = 0; q < nw; q++) {
                int w = (round + q) % nw;
                t[w] = std::min(t[w], time_ms(s, who[w]));
            }
        const char* vd = tg_variant_op(opa, opb, M, N, K, lda, ldb, N, A[0], B[0], C[0]);
        const char* vb = tg_variant_op(opa, 'N', M, N, K, lda, ldwb, N, A[0], WB[0], C[0]);
        const char* vt = tg_variant_op('T', 'N', M, N, K, tn_a ? ldwa : lda, tn_b ? ldwb : ldb, N, WA[0], WB[0], C[0]);
        rd.push_back(t[0] / t[1]), rc.push_back(t[0] / t[2]), rt.push_back(t[0] / t[3]);
        rbest.push_back(t[0] / std::min({t[1], t[2], t[3]}));
        std::printf("shape %dx%dx%d op=%c%c direct=%s gemm_b=%s gemm_tn=%s cublas_ms=%.5f direct_ms=%.5f comp_b_ms=%.5f comp_tn_ms=%.5f "
                    "transpose_a_ms=%.5f transpose_b_ms=%.5f gemm_b_ms=%.5f gemm_tn_ms=%.5f ratio_direct=%.3f ratio_comp_b=%.3f "
                    "ratio_comp_tn=%.3f transpose_gbps=%.0f err_direct=%.1e err_comp_b=%.1e err_comp_tn=%.1e%s  # %s\n",
                    M, N, K, opa, opb, vd ? vd : "none", vb ? vb : "none", vt ? vt : "none", t[0], t[1], t[2], t[3], t[4], t[5], t[6],
                    t[7], t[0] / t[1], t[0] / t[2], t[0] / t[3], 8.0 * (double)std::max(M, N) * K / (std::max(t[4], t[5]) * 1e6),
                    err[0], err[1], err[2], good ? "" : " WRONG", src.c_str());
        std::fflush(stdout);
        for (int i = 0; i < n; i++) {
            CK(cudaFree(A[i]));
            CK(cudaFree(B[i]));
            CK(cudaFree(C[i]));
            CK(cudaFree(WA[i]));
            CK(cudaFree(WB[i]));
        }
        CK(cudaFree(R));
    }
    std::fclose(f);
    std::printf("all %zu: geomean ratio_direct %.3f ratio_comp_b %.3f ratio_comp_tn %.3f best_of_three %.3f\n", rd.size(), geomean(rd),
                geomean(rc), geomean(rt), geomean(rbest));
    std::printf("%s\n", ok ? "PASS" : "FAIL");
    CB(cublasDestroy(h));
    return ok ? 0 : 1;
}
