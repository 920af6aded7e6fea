#ifndef TILEGEN_KMAJOR_CUH
#define TILEGEN_KMAJOR_CUH
// tilegen/kmajor.cuh: GEMM whose operands both run along k (op NT: A stored M x K, B stored N x K)
// kept as they are stored, k-contiguous, in shared memory. The other register-tiled kernels want
// k-major tiles (As[k][m], Bs[k][n]) and so must transpose a k-contiguous operand on its way in
// (registers and scalar stores, or 4-byte copies); here nothing is transposed:
//   - the tiles are copied by 16-byte cp.async into a STAGES-deep ring, rows of BK floats plus 4
//     (an odd number of float4s, so 8 consecutive rows start in 8 distinct 4-bank groups);
//   - a thread reads its fragments along k: one LDS.128 gives 4 k values of one row of A (or B),
//     so per 4 k steps a thread reads TM + TN float4s for 4*TM*TN FFMAs, the same ratio as the
//     k-major tiles' TM/4 + TN/4 float4s per k step;
//   - a warp's lanes form an LM x LN grid and a thread owns rows lm + LM*i and columns ln + LN*j of
//     its warp tile (strided, not float4 groups): the lanes of a quarter warp read consecutive rows
//     (conflict-free) or the same one (broadcast), and store consecutive columns of C.
// Any M, N, K, lda, ldb, ldc (seed 003: zero-filled partial tiles): interior blocks copy full k
// tiles unguarded, other tiles zero-fill per float4 (16-byte-aligned rows) or per element.
#include "tilegen/cp_async.cuh"
#include "tilegen/guards.cuh"

namespace tg {

// KMajor is the block's geometry: a BM x BN tile of C, BK k per shared tile, T threads in warps of
// LM x LN lanes with TM x TN thread tiles, a STAGES-deep ring.
template <int BM_, int BN_, int BK_, int LM_, int TM_, int TN_, int T_, int STAGES_>
struct KMajor {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_, T = T_, STAGES = STAGES_;
    static constexpr int LM = LM_, LN = 32 / LM_;
    static constexpr int WM = LM * TM, WN = LN * TN, WARPS_N = BN / WN;
    static_assert(LM * LN == 32 && (BM / WM) * (BN / WN) * 32 == T, "warps of LM x LN lanes must cover the block tile");
    static_assert(BK % 8 == 0, "rows of BK + 4 floats must be an odd number of float4s");
    // Shared rows: BK floats of one row of A (of B) plus 4.
    static constexpr int LD = BK + 4, KQ = BK / 4;
    static constexpr int A_TILE = BM * LD, B_TILE = BN * LD;
    static constexpr int SMEM_FLOATS = STAGES * (A_TILE + B_TILE);
    // Each thread copies A_COPIES float4s of A's tile and B_COPIES of B's per k tile; copy c of
    // thread t is float4 (t + c*T) % KQ of row (t + c*T) / KQ, ROWS_PER_PASS rows after copy c-1's.
    static constexpr int A_COPIES = BM * KQ / T, B_COPIES = BN * KQ / T, ROWS_PER_PASS = T / KQ;
    static_assert(A_COPIES * T == BM * KQ && B_COPIES * T == BN * KQ && ROWS_PER_PASS * KQ == T,
                  "the tiles must split into whole float4s per thread");

    // copy_rows puts one k tile of a k-contiguous operand into shared memory: COPIES float4s per
    // thread of rows row0 + c*ROWS_PER_PASS, float4 q, from src (row row0, column k0 + 4q of the
    // operand: the caller's pointer plus k0). FAST: every row inside, the whole k tile inside K,
    // 16-byte rows. Else rows at or past `rows` and columns at or past kLeft (K - k0) are zero; a
    // float4 inside both is one 16-byte copy when v16, else four element copies. A zero-filling copy
    // reads nothing but still names a source: safe, an element inside the operand.
    template <int COPIES, bool FAST>
    static __device__ __forceinline__ void copy_rows(float* dst, const float* src, int ld, int row0, int q, int rows, int kLeft,
                                                     bool v16, const float* safe)
    {
#pragma unroll
        for (int c = 0; c < COPIES; ++c) {
            const int r = row0 + c * ROWS_PER_PASS;
            float* d = dst + r * LD + 4 * q;
            const float* g = src + (size_t)(c * ROWS_PER_PASS) * ld;
            if (FAST) {
                cp_async16(d, g);
            } else {
                const bool row = r < rows;
                if (v16 && 4 * q + 4 <= kLeft) {
                    cp_async16_zfill(d, row ? g : safe, row);
                } else {
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const bool ok = row && 4 * q + e < kLeft;
                        cp_async4_zfill(d + e, ok ? g + e : safe, ok);
                    }
                }
            }
        }
    }

    // compute runs one k tile: per 4 k steps, this thread's TM float4s of A (rows as + LM*i*LD) and,
    // one after the other, its TN float4s of B, each followed by its 4*TM FFMAs in k order.
    static __device__ __forceinline__ void compute(float (&acc)[TM][TN], const float* as, const float* bs)
    {
#pragma unroll
        for (int kq = 0; kq < KQ; ++kq) {
            float4 a[TM];
#pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = *reinterpret_cast<const float4*>(as + i * LM * LD + 4 * kq);
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                const float4 b = *reinterpret_cast<const float4*>(bs + j * LN * LD + 4 * kq);
#pragma unroll
                for (int i = 0; i < TM; ++i) acc[i][j] = fmaf(a[i].x, b.x, acc[i][j]);
#pragma unroll
                for (int i = 0; i < TM; ++i) acc[i][j] = fmaf(a[i].y, b.y, acc[i][j]);
#pragma unroll
                for (int i = 0; i < TM; ++i) acc[i][j] = fmaf(a[i].z, b.z, acc[i][j]);
#pragma unroll
                for (int i = 0; i < TM; ++i) acc[i][j] = fmaf(a[i].w, b.w, acc[i][j]);
            }
        }
    }

    // store writes the thread tile: C[row0 + LM*i][col0 + LN*j] = alpha*acc + beta*C inside M x N
    // (beta == 0 never reads C). A warp's stores of one (i, j) cover LN consecutive columns of LM rows.
    static __device__ __forceinline__ void store(const float (&acc)[TM][TN], float* __restrict__ C, int ldc, int M, int N,
                                                 int row0, int col0, float alpha, float beta)
    {
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const int r = row0 + i * LM;
            if (r >= M) continue;
            float* crow = C + (size_t)r * ldc;
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                const int c = col0 + j * LN;
                if (c < N) crow[c] = beta == 0.0f ? alpha * acc[i][j] : fmaf(beta, crow[c], alpha * acc[i][j]);
            }
        }
    }
};

// kmajor_mainloop accumulates the block's tile over k in [0, K): the ring is filled STAGES - 1 k tiles
// ahead; each iteration waits for its tile, refills the slot the previous iteration read (every
// thread has passed the barrier, so all are done with it) and computes. FAST: interior block with
// 16-byte rows; its full k tiles take unguarded copies, the k tail the guarded ones. a and b are the
// operands at this thread's first copied row (row ar of A's tile, br of B's) and float4 aq (bq) of
// it; aRows and bRows the rows left in A and B from the block's first (Ab, Bb: its first element).
template <class Cfg, bool FAST>
static __device__ void kmajor_mainloop(float (&acc)[Cfg::TM][Cfg::TN], float* const As, float* const Bs, const int K,
                                       const float* Ab, const float* a, const int lda, const int ar, const int aRows,
                                       const bool va, const float* Bb, const float* b, const int ldb, const int br,
                                       const int bRows, const bool vb, const int q, const int arow, const int bcol)
{
    constexpr int BK = Cfg::BK, STAGES = Cfg::STAGES;
    static_assert(STAGES >= 2, "a ring of at least two k tiles");
    const int nt = (K + BK - 1) / BK;
    auto load = [&](int t) {
        const int k0 = t * BK, slot = t % STAGES;
        float* as = As + slot * Cfg::A_TILE;
        float* bs = Bs + slot * Cfg::B_TILE;
        if (FAST && k0 + BK <= K) {
            Cfg::template copy_rows<Cfg::A_COPIES, true>(as, a + k0, lda, ar, q, aRows, K - k0, true, Ab);
            Cfg::template copy_rows<Cfg::B_COPIES, true>(bs, b + k0, ldb, br, q, bRows, K - k0, true, Bb);
        } else {
            Cfg::template copy_rows<Cfg::A_COPIES, false>(as, a + k0, lda, ar, q, aRows, K - k0, va, Ab);
            Cfg::template copy_rows<Cfg::B_COPIES, false>(bs, b + k0, ldb, br, q, bRows, K - k0, vb, Bb);
        }
    };
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < nt) load(s);
        cp_async_commit();
    }
    for (int t = 0; t < nt; ++t) {
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        if (t + STAGES - 1 < nt) load(t + STAGES - 1);
        cp_async_commit();
        const int slot = t % STAGES;
        Cfg::compute(acc, As + slot * Cfg::A_TILE + arow * Cfg::LD, Bs + slot * Cfg::B_TILE + bcol * Cfg::LD);
    }
    cp_async_wait<0>();
}

} // namespace tg
#endif // TILEGEN_KMAJOR_CUH
