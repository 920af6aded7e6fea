// SIMT SGEMM with warp specialization, a harness experiment (issue 18, part 1): regtile's
// 128x256x16 tile (8 consumer warps, 8x16 thread tiles, tg::WarpTile's fragments and FFMAs) fed by
// one producer warp through a STAGES-deep cp.async ring with mbarrier hand-offs instead of a block
// barrier per k tile; timed against the shipped regtile kernel (same tile, A through registers, B
// through the ring, one __syncthreads per tile) and cuBLAS in the same process. Interior shapes
// only (M, N multiples of the tile, K of 16, aligned): a timing experiment, checked against cuBLAS.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include "../../../generated/cuda/regtile_128x256x16_w64_t8x16_p4_f1_s4_b1.cu"

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s at %d: %s\n", #x, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)

__device__ __forceinline__ void mb_init(uint32_t bar, unsigned n) { asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(bar), "r"(n) : "memory"); }
__device__ __forceinline__ void mb_arrive(uint32_t bar) { asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared.b64 st, [%0];\n}\n" ::"r"(bar) : "memory"); }
__device__ __forceinline__ void mb_wait(uint32_t bar, unsigned par)
{
    asm volatile("{\n.reg .pred p;\nW:\nmbarrier.try_wait.parity.shared.b64 p, [%0], %1;\n@!p bra W;\n}\n" ::"r"(bar), "r"(par) : "memory");
}
__device__ __forceinline__ void cp_arrive(uint32_t bar) { asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];\n" ::"r"(bar) : "memory"); }
__device__ __forceinline__ void cp16(uint32_t d, const float* s) { asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(s)); }
__device__ __forceinline__ void cp4(uint32_t d, const float* s) { asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(d), "l"(s)); }

// P producer warps; GROUP block rows per group of the block order (0: row by row).
template <int S, int P, int GROUP>
__global__ void __launch_bounds__(256 + 32 * P, 1) simt_ws(int M, int N, int K, const float* __restrict__ A, int lda,
                                                          const float* __restrict__ B, int ldb, float* __restrict__ C, int ldc)
{
    using Tl = tg::WarpTile<128, 256, 16, 64, 8, 16, 4, 256>;
    constexpr int BM = 128, BN = 256, BK = 16, AS = Tl::AS, BS = Tl::BS, SLOT = Tl::A_TILE + Tl::B_TILE;
    extern __shared__ float4 smem4[];
    float* smem = reinterpret_cast<float*>(smem4);
    const uint32_t sb = (uint32_t)__cvta_generic_to_shared(smem);
    const uint32_t full = sb + S * SLOT * 4, empty = full + 8 * S;
    const int tid = threadIdx.x;
    int bx = blockIdx.x, by = blockIdx.y;
    if (GROUP > 0) {
        const int gx = gridDim.x, gy = gridDim.y, id = by * gx + bx, per = GROUP * gx;
        const int first = (id / per) * GROUP, rows = min(gy - first, GROUP);
        by = first + (id % per) % rows;
        bx = (id % per) / rows;
    }
    const int m0 = by * BM, n0 = bx * BN;
    const int nt = K / BK;
    if (tid == 0) {
        for (int s = 0; s < S; ++s) { mb_init(full + 8 * s, 32 * P); mb_init(empty + 8 * s, 8); }
    }
    __syncthreads();
    if (tid >= 256) { // producer warps
        if (P == 4) asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::);
        const int p = tid - 256;
        for (int kt = 0; kt < nt; ++kt) {
            const int s = kt % S;
            if (kt >= S) mb_wait(empty + 8 * s, ((kt / S) - 1) & 1);
            const uint32_t as = sb + s * SLOT * 4, bs = as + Tl::A_TILE * 4;
            const int k0 = kt * BK;
            // A (m, k) -> As[k][m]: element copies, consecutive lanes along k of one row.
#pragma unroll 8
            for (int i = 0; i < BM * BK / (32 * P); ++i) {
                const int e = p + i * 32 * P, k = e % BK, m = e / BK;
                cp4(as + 4 * (k * AS + m), A + (size_t)(m0 + m) * lda + k0 + k);
            }
            // B rows k, 16-byte chunks.
#pragma unroll 8
            for (int i = 0; i < BK * BN / 4 / (32 * P); ++i) {
                const int c = p + i * 32 * P, k = c / (BN / 4), n = (c % (BN / 4)) * 4;
                cp16(bs + 4 * (k * BS + n), B + (size_t)(k0 + k) * ldb + n0 + n);
            }
            cp_arrive(full + 8 * s);
        }
        asm volatile("cp.async.wait_all;\n" ::: "memory");
        return;
    }
    if (P == 4) asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::);
    const int warp = tid / 32, lane = tid % 32;
    const int wm = (warp / Tl::WARPS_N) * Tl::WM, wn = (warp % Tl::WARPS_N) * Tl::WN;
    const int lm = lane / Tl::LN, ln = lane % Tl::LN;
    const int aoff = wm + lm * 4, boff = wn + ln * 4;
    float acc[8][16];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 16; ++j) acc[i][j] = 0.f;
    for (int kt = 0; kt < nt; ++kt) {
        const int s = kt % S;
        mb_wait(full + 8 * s, (kt / S) & 1);
        const float* as = smem + s * SLOT;
        Tl::compute(acc, as + aoff, as + Tl::A_TILE + boff);
        __syncwarp();
        if (lane == 0) mb_arrive(empty + 8 * s);
    }
    const int r0 = m0 + aoff, c0 = n0 + boff;
#pragma unroll
    for (int j = 0; j < Tl::F4; ++j) {
        float4 v = Tl::group(acc, j);
        *reinterpret_cast<float4*>(C + (size_t)(r0 + Tl::grow(j)) * ldc + c0 + Tl::gcol(j)) = v;
    }
}

struct WK { const char* name; void (*fn)(int, int, int, const float*, int, const float*, int, float*, int); int smem, threads; };
template <int S, int P, int G>
WK mk(const char* name)
{
    using Tl = tg::WarpTile<128, 256, 16, 64, 8, 16, 4, 256>;
    int smem = S * (Tl::A_TILE + Tl::B_TILE) * 4 + 16 * S;
    CK(cudaFuncSetAttribute(simt_ws<S, P, G>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    cudaFuncAttributes fa; CK(cudaFuncGetAttributes(&fa, simt_ws<S, P, G>));
    printf("%-20s regs %d spill %zu smem %d\n", name, fa.numRegs, fa.localSizeBytes, smem);
    return WK{name, simt_ws<S, P, G>, smem, 256 + 32 * P};
}

int main()
{
    std::vector<WK> ks = {mk<4, 2, 0>("ws_s4_p2"), mk<4, 4, 0>("ws_s4_p4"), mk<6, 4, 0>("ws_s6_p4"), mk<8, 4, 0>("ws_s8_p4")};
    const int rt_smem = 83456;
    CK(cudaFuncSetAttribute(regtile_128x256x16_w64_t8x16_p4_f1_s4_b1, cudaFuncAttributeMaxDynamicSharedMemorySize, rt_smem));
    cublasHandle_t h; cublasCreate(&h); cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH);
    for (int S : {4096, 8192}) {
        size_t n = (size_t)S * S;
        std::vector<float> hA(n), hB(n);
        unsigned long long x = 88172645463325252ull;
        for (auto& v : hA) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; v = (float)((x >> 11) * (1.0 / 9007199254740992.0)) * 2 - 1; }
        for (auto& v : hB) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; v = (float)((x >> 11) * (1.0 / 9007199254740992.0)) * 2 - 1; }
        float *A, *B, *C, *R;
        CK(cudaMalloc(&A, n * 4)); CK(cudaMalloc(&B, n * 4)); CK(cudaMalloc(&C, n * 4)); CK(cudaMalloc(&R, n * 4));
        CK(cudaMemcpy(A, hA.data(), n * 4, cudaMemcpyHostToDevice)); CK(cudaMemcpy(B, hB.data(), n * 4, cudaMemcpyHostToDevice));
        const float one = 1, zero = 0;
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, S, S, S, &one, B, S, A, S, &zero, R, S);
        cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
        auto timeit = [&](auto f) {
            for (int i = 0; i < 3; ++i) f();
            std::vector<float> ts;
            for (int i = 0; i < 30; ++i) { cudaEventRecord(e0); f(); cudaEventRecord(e1); cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms, e0, e1); ts.push_back(ms); }
            std::sort(ts.begin(), ts.end()); return ts[ts.size() / 2];
        };
        std::vector<float> hR(n), hC(n);
        CK(cudaMemcpy(hR.data(), R, n * 4, cudaMemcpyDeviceToHost));
        auto check = [&](const char* name) {
            CK(cudaMemcpy(hC.data(), C, n * 4, cudaMemcpyDeviceToHost));
            double worst = 0;
            for (size_t i = 0; i < n; i += 97) worst = std::max(worst, (double)fabs(hC[i] - hR[i]));
            printf("%d check %-20s max |C - cuBLAS| %.3g %s\n", S, name, worst, worst < 1e-2 ? "ok" : "FAIL");
        };
        double fl = 2.0 * S * S * (double)S;
        // Rotate: cuBLAS, regtile, each WS kernel; three rounds, report each round.
        for (int round = 0; round < 3; ++round) {
            float tc = timeit([&] { cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, S, S, S, &one, B, S, A, S, &zero, C, S); });
            float tr = timeit([&] { regtile_128x256x16_w64_t8x16_p4_f1_s4_b1<<<dim3(S / 256, S / 128), 256, rt_smem>>>(S, S, S, 1.f, A, S, B, S, 0.f, C, S); });
            if (round == 0) check("regtile");
            printf("%d r%d cublas %.1f TF  regtile %.1f TF x%.3f", S, round, fl / tc / 1e9, fl / tr / 1e9, tc / tr);
            for (auto& k : ks) {
                CK(cudaMemset(C, 0xff, n * 4));
                float t = timeit([&] { k.fn<<<dim3(S / 256, S / 128), k.threads, k.smem>>>(S, S, S, A, S, B, S, C, S); });
                CK(cudaDeviceSynchronize());
                printf("  %s %.1f x%.3f", k.name, fl / t / 1e9, tc / t);
                if (round == 0) { printf("\n"); check(k.name); }
            }
            printf("\n");
        }
        cudaFree(A); cudaFree(B); cudaFree(C); cudaFree(R);
    }
    return 0;
}
