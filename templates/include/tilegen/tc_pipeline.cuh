#ifndef TILEGEN_TC_PIPELINE_CUH
#define TILEGEN_TC_PIPELINE_CUH
// tilegen/tc_pipeline.cuh: the tensor-core main loop of the mma_tf32 family. Both operands ride a
// STAGES-deep cp.async ring in their stored (row-major) layout, padded so that the fragment reads
// of tilegen/mma_tf32.cuh are free of bank conflicts; each warp computes a WM x WN warp tile as
// (WM/16) x (WN/8) m16n8k8 TF32 MMAs per k-step of 8, either one MMA (TF32) or three (3xTF32:
// a_lo*b_hi + a_hi*b_lo + a_hi*b_hi, small terms first, split on the fragment as it is read).
//
// Edge guards (seed 003): a k tile of an interior block whose operands are 16-byte aligned and
// that lies wholly inside K is copied with plain 16-byte cp.async; any other tile copies each
// 16-byte chunk with a source size that covers only the elements inside the matrix (zero-filled
// past M, N and K) or, for a misaligned operand, element by element. Zeros add nothing, so the math
// needs no guard; the store skips what lies outside C.
#include "tilegen/cp_async.cuh"
#include "tilegen/guards.cuh"
#include "tilegen/mma_tf32.cuh"

namespace tg {

// MmaTf32Config is the tiling: a BM x BN x BK block tile on (BM/WM) x (BN/WN) warps, STAGES ring
// slots, SPLIT3 three MMAs (3xTF32) or one (TF32).
template <int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_, bool SPLIT3_>
struct MmaTf32Config {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, STAGES = STAGES_;
    static constexpr bool SPLIT3 = SPLIT3_;
    static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN;
    static constexpr int THREADS = WARPS_M * WARPS_N * 32;
    static constexpr int MI = WM / 16, NI = WN / 8; // m16 rows and n8 columns of MMA tiles per warp
    // A's row stride in floats: AS % 32 == 8 or 24 puts the 8-byte reads (row g, k 2t..2t+1) of the
    // lanes g = 0..3 of each half warp in distinct bank octets.
    static constexpr int AS = BK + 8;
    // B's row stride: BS % 32 == 4 puts the reads (k 2t, column g) of a warp in banks 8t + g.
    static constexpr int BS = BN + 4;
    static constexpr int A_TILE = BM * AS, B_TILE = BK * BS;
    static constexpr int A_CHUNKS = BM * BK / 4, B_CHUNKS = BK * BN / 4; // 16-byte copies per tile
    static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 8 == 0 && BK % 8 == 0, "tiling");
    static_assert(A_CHUNKS % THREADS == 0 && B_CHUNKS % THREADS == 0, "whole copies per thread");
    static_assert(BN % 32 == 0, "B stride padding assumes BN % 32 == 0");
};

// tc_chunk copies one 16-byte chunk whose first element is src, of which n (0..4) lie inside the
// matrix, into dst; the rest is zero. v16: the operand's rows are 16-byte aligned (one cp.async with
// a source size), else element copies. base is a valid address for copies that read nothing.
__device__ __forceinline__ void tc_chunk(float* dst, const float* src, int n, bool v16, const float* base)
{
    if (v16) {
        unsigned s = (unsigned)__cvta_generic_to_shared(dst);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(n > 0 ? src : base), "r"(4 * n));
    } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) cp_async4_zfill(dst + e, e < n ? src + e : base, e < n);
    }
}

// tc_load_tile copies k tile k0 of A (rows m0.., BM x BK) and of B (columns n0.., BK x BN) into
// one ring slot. FULL: no guards (interior block, whole k tile, aligned operands).
template <class Cfg, bool FULL>
__device__ __forceinline__ void tc_load_tile(float* as, float* bs, const float* __restrict__ A, int lda,
                                             const float* __restrict__ B, int ldb, int M, int N, int K, int m0,
                                             int n0, int k0, int tid, bool va, bool vb)
{
#pragma unroll
    for (int i = 0; i < Cfg::A_CHUNKS / Cfg::THREADS; ++i) {
        const int c = tid + i * Cfg::THREADS;
        const int r = c / (Cfg::BK / 4), kc = (c % (Cfg::BK / 4)) * 4;
        float* dst = as + r * Cfg::AS + kc;
        const float* src = A + (size_t)(m0 + r) * lda + k0 + kc;
        if (FULL)
            cp_async16(dst, src);
        else
            tc_chunk(dst, src, m0 + r < M ? min(max(K - k0 - kc, 0), 4) : 0, va, A);
    }
#pragma unroll
    for (int i = 0; i < Cfg::B_CHUNKS / Cfg::THREADS; ++i) {
        const int c = tid + i * Cfg::THREADS;
        const int r = c / (Cfg::BN / 4), nc = (c % (Cfg::BN / 4)) * 4;
        float* dst = bs + r * Cfg::BS + nc;
        const float* src = B + (size_t)(k0 + r) * ldb + n0 + nc;
        if (FULL)
            cp_async16(dst, src);
        else
            tc_chunk(dst, src, k0 + r < K ? min(max(N - n0 - nc, 0), 4) : 0, vb, B);
    }
}

// tc_warp_tile accumulates one ring slot into a warp's tile: per k-step of 8, the B fragments of
// the warp's NI columns (split), then per m16 row block its A fragment (split) and its MMAs. as and
// bs point at the lane's first A element (row wm + g, k 2t) and B element (k 2t, column wn + g).
template <class Cfg>
__device__ __forceinline__ void tc_warp_tile(float (&acc)[Cfg::MI][Cfg::NI][4], const float* as, const float* bs)
{
#pragma unroll
    for (int kk = 0; kk < Cfg::BK; kk += 8) {
        uint32_t bh[Cfg::NI][2], bl[Cfg::NI][2];
#pragma unroll
        for (int j = 0; j < Cfg::NI; ++j) {
            const float x = bs[kk * Cfg::BS + j * 8], y = bs[(kk + 1) * Cfg::BS + j * 8];
            if (Cfg::SPLIT3) {
                split_tf32(x, bh[j][0], bl[j][0]);
                split_tf32(y, bh[j][1], bl[j][1]);
            } else {
                bh[j][0] = to_tf32(x);
                bh[j][1] = to_tf32(y);
            }
        }
#pragma unroll
        for (int i = 0; i < Cfg::MI; ++i) {
            const float2 p = *reinterpret_cast<const float2*>(as + i * 16 * Cfg::AS + kk);
            const float2 q = *reinterpret_cast<const float2*>(as + (i * 16 + 8) * Cfg::AS + kk);
            // Fragment slots: a0 (g, t) <- k 2t, a1 (g+8, t), a2 (g, t+4) <- k 2t+1, a3 (g+8, t+4).
            uint32_t ah[4], al[4];
            if (Cfg::SPLIT3) {
                split_tf32(p.x, ah[0], al[0]);
                split_tf32(q.x, ah[1], al[1]);
                split_tf32(p.y, ah[2], al[2]);
                split_tf32(q.y, ah[3], al[3]);
#pragma unroll
                for (int j = 0; j < Cfg::NI; ++j) {
                    // This k-step's products in a fresh accumulator, added to the running sum
                    // rounded to nearest (tilegen/mma_tf32.cuh: the tensor core truncates).
                    const uint32_t bhj[2] = {bh[j][0], bh[j][1]}, blj[2] = {bl[j][0], bl[j][1]};
                    float d[4];
                    mma_tf32_zero(d, al, bhj);
                    mma_tf32(d, ah, blj);
                    mma_tf32(d, ah, bhj);
#pragma unroll
                    for (int e = 0; e < 4; ++e) acc[i][j][e] += d[e];
                }
            } else {
                ah[0] = to_tf32(p.x);
                ah[1] = to_tf32(q.x);
                ah[2] = to_tf32(p.y);
                ah[3] = to_tf32(q.y);
#pragma unroll
                for (int j = 0; j < Cfg::NI; ++j) {
                    const uint32_t bhj[2] = {bh[j][0], bh[j][1]};
                    mma_tf32(acc[i][j], ah, bhj);
                }
            }
        }
    }
}

// tc_mainloop runs the whole K range through the ring: STAGES-1 tiles in flight while one is
// computed, one barrier per k tile (the slot refilled is the one computed in the previous
// iteration, which every warp has left once it passes the barrier).
template <class Cfg>
__device__ __forceinline__ void tc_mainloop(float (&acc)[Cfg::MI][Cfg::NI][4], float* smem, const float* __restrict__ A,
                                            int lda, const float* __restrict__ B, int ldb, int M, int N, int K, int m0,
                                            int n0, int tid, int wm, int wn, int lane)
{
    float* const As = smem;
    float* const Bs = smem + Cfg::STAGES * Cfg::A_TILE;
    const bool va = aligned16((uintptr_t)A, lda), vb = aligned16((uintptr_t)B, ldb);
    const bool inner = va && vb && m0 + Cfg::BM <= M && n0 + Cfg::BN <= N;
    const int nt = (K + Cfg::BK - 1) / Cfg::BK;
    const int g = lane / 4, t = lane % 4;
    const int aoff = (wm + g) * Cfg::AS + 2 * t, boff = 2 * t * Cfg::BS + wn + g;

#pragma unroll
    for (int s = 0; s < Cfg::STAGES - 1; ++s) {
        if (s < nt) {
            if (inner && (s + 1) * Cfg::BK <= K)
                tc_load_tile<Cfg, true>(As + s * Cfg::A_TILE, Bs + s * Cfg::B_TILE, A, lda, B, ldb, M, N, K, m0, n0, s * Cfg::BK, tid, va, vb);
            else
                tc_load_tile<Cfg, false>(As + s * Cfg::A_TILE, Bs + s * Cfg::B_TILE, A, lda, B, ldb, M, N, K, m0, n0, s * Cfg::BK, tid, va, vb);
        }
        cp_async_commit();
    }
    int slot = 0, next = Cfg::STAGES - 1;
    for (int kt = 0; kt < nt; ++kt) {
        cp_async_wait<Cfg::STAGES - 2>();
        __syncthreads();
        const int nk = kt + Cfg::STAGES - 1;
        if (nk < nt) {
            if (inner && (nk + 1) * Cfg::BK <= K)
                tc_load_tile<Cfg, true>(As + next * Cfg::A_TILE, Bs + next * Cfg::B_TILE, A, lda, B, ldb, M, N, K, m0, n0, nk * Cfg::BK, tid, va, vb);
            else
                tc_load_tile<Cfg, false>(As + next * Cfg::A_TILE, Bs + next * Cfg::B_TILE, A, lda, B, ldb, M, N, K, m0, n0, nk * Cfg::BK, tid, va, vb);
        }
        cp_async_commit();
        tc_warp_tile<Cfg>(acc, As + slot * Cfg::A_TILE + aoff, Bs + slot * Cfg::B_TILE + boff);
        slot = slot + 1 == Cfg::STAGES ? 0 : slot + 1;
        next = next + 1 == Cfg::STAGES ? 0 : next + 1;
    }
    cp_async_wait<0>();
}

} // namespace tg
#endif // TILEGEN_TC_PIPELINE_CUH
