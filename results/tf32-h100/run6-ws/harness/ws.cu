// wgmma_tf32 with a producer warpgroup (tilegen/wg_ws.cuh) against the barrier-per-tile loop, NN, NT and TT: checks against a float64 reference with odd shapes and padded
// leading dimensions, then times against cuBLAS with the same op (SGEMM for 3xtf32, TF32 math for tf32).
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include "tilegen/wg_ws.cuh"

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s at %d: %s\n", #x, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)

template <int BM, int WG, int BK, int ST, bool S3, bool PIPE, int F, int OP>
__global__ void __launch_bounds__(128 * WG, 1) wgk(const float* __restrict__ A, int lda, const float* __restrict__ B, int ldb,
                                               float* __restrict__ C, int ldc, int M, int N, int K, float alpha, float beta)
{
    using Cfg = tg::WgTf32Config<BM, WG, BK, ST, S3, PIPE, F, OP>;
    extern __shared__ float4 tg_tc_smem[];
    const int tid = threadIdx.x;
    int m0, n0;
    tg::wg_origin<Cfg>(m0, n0);
    float acc[Cfg::NACC];
#pragma unroll
    for (int i = 0; i < Cfg::NACC; ++i) acc[i] = 0.0f;
    tg::wg_mainloop<Cfg>(acc, reinterpret_cast<float*>(tg_tc_smem), A, lda, B, ldb, M, N, K, m0, n0, tid);
    tg::wg_store<Cfg>(acc, C, ldc, M, N, m0, n0, alpha, beta, tid);
}


// GroupCfg overrides the block order's group of block rows (wg_origin) for the GROUP experiment.
template <class C, int G>
struct GroupCfg : C {
    static constexpr int GROUP = G > 0 ? G : C::GROUP;
};

// DropCfg leaves one operand's copies out (1: the shared operand's, 2: the register operand's), for
// the bandwidth experiment: the kernel then computes on whatever the ring holds (its checks fail).
template <class C, int D>
struct DropCfg : C {
    static constexpr int A_CHUNKS = D == 1 ? 0 : C::A_CHUNKS, B_CHUNKS = D == 2 ? 0 : C::B_CHUNKS;
};

template <int BM, int WG, int BK, int ST, bool S3, int F, int OP, int LAG, int PR = 56, int G = 0, int D = 0>
__global__ void __launch_bounds__(128 * (WG + 1), 1) wsk(const float* __restrict__ A, int lda, const float* __restrict__ B, int ldb,
                                               float* __restrict__ C, int ldc, int M, int N, int K, float alpha, float beta)
{
    using Cfg = DropCfg<GroupCfg<tg::WgWsConfig<tg::WgTf32Config<BM, WG, BK, ST, S3, true, F, OP>, LAG, PR>, G>, D>;
    extern __shared__ float4 tg_tc_smem[];
    tg::wg_ws_gemm<Cfg>(reinterpret_cast<float*>(tg_tc_smem), A, lda, B, ldb, C, ldc, M, N, K, alpha, beta);
}

__global__ void refk(int opa, int opb, const float* A, int lda, const float* B, int ldb, const float* C0, int ldc, double* R, int M, int N, int K, double alpha, double beta)
{
    int n = blockIdx.x * blockDim.x + threadIdx.x, m = blockIdx.y;
    if (n >= N || m >= M) return;
    double s = 0;
    for (int k = 0; k < K; ++k) {
        double a = opa ? A[(size_t)k * lda + m] : A[(size_t)m * lda + k];
        double b = opb ? B[(size_t)n * ldb + k] : B[(size_t)k * ldb + n];
        s += a * b;
    }
    R[(size_t)m * N + n] = alpha * s + (beta != 0 ? beta * (double)C0[(size_t)m * ldc + n] : 0.0);
}

struct Kern {
    const char* name;
    void (*fn)(const float*, int, const float*, int, float*, int, int, int, int, float, float);
    int TR, TC, threads, smem, op;
    bool split3;
};

template <int BM, int WG, int BK, int ST, bool S3, bool PIPE, int F, int OP>
Kern mk(const char* name)
{
    using Cfg = tg::WgTf32Config<BM, WG, BK, ST, S3, PIPE, F, OP>;
    int smem = Cfg::SMEM_BYTES;
    CK(cudaFuncSetAttribute(wgk<BM, WG, BK, ST, S3, PIPE, F, OP>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, wgk<BM, WG, BK, ST, S3, PIPE, F, OP>));
    printf("%-28s regs %d spill %zu smem %d\n", name, fa.numRegs, fa.localSizeBytes, smem);
    return Kern{name, wgk<BM, WG, BK, ST, S3, PIPE, F, OP>, Cfg::TILE_ROWS, Cfg::TILE_COLS, 128 * WG, smem, OP, S3};
}


template <int BM, int WG, int BK, int ST, bool S3, int F, int OP, int LAG, int PR = 56, int G = 0, int D = 0>
Kern mkws(const char* name)
{
    using Cfg = tg::WgWsConfig<tg::WgTf32Config<BM, WG, BK, ST, S3, true, F, OP>, LAG, PR>;
    int smem = Cfg::SMEM_BYTES;
    CK(cudaFuncSetAttribute(wsk<BM, WG, BK, ST, S3, F, OP, LAG, PR, G, D>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, wsk<BM, WG, BK, ST, S3, F, OP, LAG, PR, G, D>));
    printf("%-28s regs %d spill %zu smem %d\n", name, fa.numRegs, fa.localSizeBytes, smem);
    return Kern{name, wsk<BM, WG, BK, ST, S3, F, OP, LAG, PR, G, D>, Cfg::TILE_ROWS, Cfg::TILE_COLS, 128 * (WG + 1), smem, OP, S3};
}

void launch(const Kern& k, const float* A, int lda, const float* B, int ldb, float* C, int ldc, int M, int N, int K, float al, float be)
{
    dim3 grid((N + k.TC - 1) / k.TC, (M + k.TR - 1) / k.TR);
    k.fn<<<grid, k.threads, k.smem>>>(A, lda, B, ldb, C, ldc, M, N, K, al, be);
}
static int opa(const Kern& k) { return k.op == 2; }
static int opb(const Kern& k) { return k.op != 0; }

static unsigned long long rs = 88172645463325252ull;
float rnd() { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return (float)((rs >> 11) * (1.0 / 9007199254740992.0)) * 2.f - 1.f; }

int main()
{
    std::vector<Kern> ks;
    ks.push_back(mkws<128, 2, 32, 4, true, 2, 0, 1, 40>("ws3x_k32_s4_f2_l1"));
    ks.push_back(mkws<128, 2, 16, 8, true, 4, 0, 2, 40>("ws3x_k16_s8_f4_l2"));
    ks.push_back(mkws<128, 2, 16, 8, true, 4, 0, 3, 40>("ws3x_k16_s8_f4_l3"));
    ks.push_back(mkws<128, 2, 16, 8, true, 4, 0, 4, 40>("ws3x_k16_s8_f4_l4"));
    ks.push_back(mkws<128, 2, 16, 8, true, 4, 0, 6, 40>("ws3x_k16_s8_f4_l6"));
    ks.push_back(mkws<128, 2, 16, 8, true, 2, 0, 4, 40>("ws3x_k16_s8_f2_l4"));
    ks.push_back(mkws<128, 2, 16, 6, true, 4, 0, 3, 40>("ws3x_k16_s6_f4_l3"));
    ks.push_back(mkws<128, 2, 16, 6, true, 4, 0, 4, 40>("ws3x_k16_s6_f4_l4"));
    cublasHandle_t h; cublasCreate(&h);

    struct Sh { int M, N, K, pad; float al, be; } shs[] = {
        {257, 383, 129, 3, 1.5f, -0.5f}, {128, 128, 32, 0, 1.f, 0.f}, {1000, 1000, 1000, 0, 1.f, 0.f},
        {1, 700, 333, 1, 1.f, 0.f}, {517, 3, 1031, 1, 0.75f, 0.25f}, {640, 640, 7, 1, 1.f, 1.f}, {97, 89, 83, 5, -0.5f, 2.f}};
    int nchk = 0, nbad = 0;
    for (auto& s : shs) {
        for (auto& k : ks) {
            int ar = opa(k) ? s.K : s.M, ac = opa(k) ? s.M : s.K, br = opb(k) ? s.N : s.K, bc = opb(k) ? s.K : s.N;
            int lda = ac + s.pad, ldb = bc + s.pad, ldc = s.N + s.pad;
            std::vector<float> hA((size_t)ar * lda), hB((size_t)br * ldb), hC((size_t)s.M * ldc);
            for (auto& x : hA) x = rnd();
            for (auto& x : hB) x = rnd();
            for (auto& x : hC) x = rnd();
            float *A, *B, *C, *C0; double* R;
            CK(cudaMalloc(&A, hA.size() * 4)); CK(cudaMalloc(&B, hB.size() * 4)); CK(cudaMalloc(&C, hC.size() * 4)); CK(cudaMalloc(&C0, hC.size() * 4));
            CK(cudaMalloc(&R, (size_t)s.M * s.N * 8));
            CK(cudaMemcpy(A, hA.data(), hA.size() * 4, cudaMemcpyHostToDevice));
            CK(cudaMemcpy(B, hB.data(), hB.size() * 4, cudaMemcpyHostToDevice));
            CK(cudaMemcpy(C0, hC.data(), hC.size() * 4, cudaMemcpyHostToDevice));
            CK(cudaMemcpy(C, hC.data(), hC.size() * 4, cudaMemcpyHostToDevice));
            refk<<<dim3((s.N + 127) / 128, s.M), 128>>>(opa(k), opb(k), A, lda, B, ldb, C0, ldc, R, s.M, s.N, s.K, s.al, s.be);
            launch(k, A, lda, B, ldb, C, ldc, s.M, s.N, s.K, s.al, s.be);
            cudaError_t e = cudaDeviceSynchronize();
            if (e != cudaSuccess) { printf("%s %dx%dx%d: %s\n", k.name, s.M, s.N, s.K, cudaGetErrorString(e)); exit(1); }
            std::vector<double> hR((size_t)s.M * s.N);
            std::vector<float> out(hC.size());
            CK(cudaMemcpy(hR.data(), R, hR.size() * 8, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(out.data(), C, out.size() * 4, cudaMemcpyDeviceToHost));
            double rmax = 0, num = 0, den = 0; int bad = 0;
            for (double r : hR) rmax = std::max(rmax, fabs(r));
            double tol = (k.split3 ? 4e-7 : 2e-3) * sqrt((double)s.K) * 4 * rmax;
            for (int m = 0; m < s.M; ++m)
                for (int n = 0; n < ldc; ++n) {
                    float c = out[(size_t)m * ldc + n];
                    if (n >= s.N) { if (c != hC[(size_t)m * ldc + n]) bad++; continue; } // padding untouched
                    double d = c - hR[(size_t)m * s.N + n];
                    if (!(fabs(d) <= tol)) bad++;
                    num += d * d; den += hR[(size_t)m * s.N + n] * hR[(size_t)m * s.N + n];
                }
            nchk++;
            if (bad) { nbad++; printf("check %-26s %5dx%5dx%5d pad %d rel %.3g bad %d FAIL\n", k.name, s.M, s.N, s.K, s.pad, sqrt(num / den), bad); }
            cudaFree(A); cudaFree(B); cudaFree(C); cudaFree(C0); cudaFree(R);
        }
    }
    printf("checks: %d, failed %d\n", nchk, nbad);

    for (int S : {4096, 8192}) {
        size_t n = (size_t)S * S;
        std::vector<float> hA(n);
        for (auto& x : hA) x = rnd();
        float *A, *B, *C;
        CK(cudaMalloc(&A, n * 4)); CK(cudaMalloc(&B, n * 4)); CK(cudaMalloc(&C, n * 4));
        CK(cudaMemcpy(A, hA.data(), n * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(B, hA.data(), n * 4, cudaMemcpyHostToDevice));
        cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
        auto timeit = [&](auto f) {
            for (int i = 0; i < 3; ++i) f();
            std::vector<float> ts;
            for (int i = 0; i < 30; ++i) { cudaEventRecord(e0); f(); cudaEventRecord(e1); cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms, e0, e1); ts.push_back(ms); }
            std::sort(ts.begin(), ts.end());
            return ts[ts.size() / 2];
        };
        const float one = 1, zero = 0;
        double fl = 2.0 * S * S * (double)S;
        for (int op = 0; op < 3; ++op) {
            int oa = op == 2, ob = op != 0;
            cublasOperation_t ta = ob ? CUBLAS_OP_T : CUBLAS_OP_N, tb = oa ? CUBLAS_OP_T : CUBLAS_OP_N;
            cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
            float tS = timeit([&] { cublasSgemm(h, ta, tb, S, S, S, &one, B, S, A, S, &zero, C, S); });
            cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH);
            float tT = timeit([&] { cublasSgemm(h, ta, tb, S, S, S, &one, B, S, A, S, &zero, C, S); });
            printf("%d %s cublas sgemm %.1f TF tf32 %.1f TF\n", S, op == 0 ? "NN" : op == 1 ? "NT" : "TT", fl / tS / 1e9, fl / tT / 1e9);
            for (auto& k : ks) {
                if (k.op != op) continue;
                float t = timeit([&] { launch(k, A, S, B, S, C, S, S, S, S, 1.f, 0.f); });
                CK(cudaDeviceSynchronize());
                printf("%d %-26s %6.1f TF  x%.3f (vs %s)\n", S, k.name, fl / t / 1e9, (k.split3 ? tS : tT) / t, k.split3 ? "sgemm" : "tf32");
            }
        }
        cudaFree(A); cudaFree(B); cudaFree(C);
    }
    return 0;
}
