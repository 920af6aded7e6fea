#ifndef TILEGEN_WG_PIPELINE_CUH
#define TILEGEN_WG_PIPELINE_CUH
// tilegen/wg_pipeline.cuh: the main loop and epilogue of the wgmma_tf32 family, C = A * B
// (row-major) on Hopper's warpgroup MMA (tilegen/wgmma.cuh).
//
// TF32 wgmma reads its shared-memory operand K-major only. Of a row-major A (M x K) and B (K x N),
// A is K-major and B is not, so the block computes the transpose, C^T = B^T * A^T: B^T is the MMA's
// register operand (each lane reads its fragment from B's rows in shared memory, which is free to
// be in any layout) and A the shared operand, its rows copied by 16-byte cp.async straight into
// the core-matrix layout the descriptor names. A block tile is BM rows of C by BN = 64 * WG
// columns; warpgroup wg owns columns 64 wg .. 64 wg + 63 (the MMA's 64 rows) and all BM rows (the
// MMA's N = BM), one m64nBMk8 MMA per k-step of 8.
//
// Shared memory: STAGES slots of SLOT floats after a pad to 1024 bytes (SMEM_BYTES in all).
//
// 3xTF32 (SPLIT3): the tensor core reads an FP32 operand's high 19 bits (it ignores the low 13),
// so A and B^T go to it as they are for their TF32 high part, and their residual x - trunc(x)
// (exact in FP32, rounded to TF32) is written beside A in shared memory once per k tile (each
// thread for the 16-byte chunks it copied) and computed on B^T's fragment. Each k-step is three
// MMAs, small terms first: b_hi * a_lo + b_lo * a_hi + b_hi * a_hi. (Against a split rounded to
// nearest, which writes the high part too: error 5.5e-7 against 4.7e-7 relative at 2048^3, cuBLAS
// SGEMM's 8.1e-7, and 3-6 % faster.) The tensor core adds into its accumulator with truncation,
// so products go into a partial accumulator that is added to the running sum in FP32 every FOLD
// k tiles (tilegen/mma_tf32.cuh says why). TF32: one MMA per k-step into the running sum, A as
// stored (the tensor core truncates it), B^T rounded on the fragment.
//
// The ring: STAGES slots of A (and its residual) and B; each thread waits for its own copies of a
// k tile, writes their residuals, fences them to the async proxy, and one barrier publishes the
// tile; the slot refilled after that barrier is one whose MMAs every warpgroup has waited for
// (wg_mainloop: the previous tile's, or with PIPE the one before it). Edge tiles zero-fill past M,
// N and K (seed 003). Blocks run in groups of block rows (wg_origin) for L2 reuse.
#include "tilegen/cp_async.cuh"
#include "tilegen/guards.cuh"
#include "tilegen/mma_tf32.cuh"
#include "tilegen/tc_pipeline.cuh"
#include "tilegen/wgmma.cuh"

namespace tg {

// WgTf32Config is the tiling: BM x (64 WG) x BK block tiles, STAGES ring slots, SPLIT3 three MMAs
// per product (3xTF32) or one (TF32).
template <int BM_, int WG_, int BK_, int STAGES_, bool SPLIT3_, bool PIPE_, int FOLD_, int OP_ = 0>
struct WgTf32Config {
    static constexpr int BM = BM_, WG = WG_, BN = 64 * WG_, BK = BK_, STAGES = STAGES_;
    static constexpr bool SPLIT3 = SPLIT3_, PIPE = PIPE_;
    // OP 0, NN: C^T = B^T A^T, A (stored M x K) the shared operand, B (stored K x N) the register
    // operand, its tile k-row by k-row. OP 1, NT: C = A B, B (stored N x K) the shared operand, A
    // (stored M x K) the register operand, its tile row by row along k (RK). OP 2, TT: C = A B, B
    // (stored N x K) shared, A (stored K x M) the register operand, k-row by k-row. (TN has no
    // K-major operand.) "A tile" below is the shared operand's, "B tile" the register operand's.
    static constexpr int OP = OP_;
    static constexpr bool RK = OP == 1;
    // The block's tile of C: NN BM rows by BN columns; NT and TT BN rows by BM columns.
    static constexpr int TILE_ROWS = OP == 0 ? BM : BN, TILE_COLS = OP == 0 ? BN : BM;
    // Block order: groups of GROUP block rows (1024 rows of C) taken column by column, so that the
    // blocks running at once share A's and B's panels in L2 (measured on H100 at 4096^3: TF32
    // 247 -> 326 TFLOP/s against row by row; 3xTF32 unchanged there and +5 % at 8192^3).
    static constexpr int GROUP = TILE_ROWS >= 1024 ? 1 : 1024 / TILE_ROWS;
    // 3xTF32: k tiles per fresh accumulator (1, 2 or 4); with PIPE at least 2.
    static constexpr int FOLD = FOLD_;
    static_assert(FOLD == 1 || FOLD == 2 || FOLD == 4, "FOLD");
    static_assert(!PIPE || !SPLIT3 || FOLD >= 2, "a pipelined 3xTF32 loop folds every 2 or 4 tiles");
    static constexpr int THREADS = 128 * WG;
    static constexpr int NACC = BM / 2; // accumulator registers per thread (m64nBM)
    static constexpr int KC = BK / 4;   // 16-byte chunks per row of an A tile
    // B's row stride in floats. k-rows: BS % 32 == 8 puts a warp's fragment reads (k t, column g)
    // in banks 8t + g. Rows along k (RK): BS = BK + 4 puts (row g, k t) in banks 4g + t (BK 32) or
    // 20g + t mod 32 (BK 16), distinct either way.
    static constexpr int BS = RK ? BK + 4 : BN + 8;
    static constexpr int A_TILE = BM * BK, A_LO = SPLIT3 ? BM * BK : 0, B_TILE = RK ? BN * BS : BK * BS;
    // Fragment element offsets in the B tile: row + 8, k + 4, the next k-step of 8.
    static constexpr int F_ROW8 = RK ? 8 * BS : 8, F_K4 = RK ? 4 : 4 * BS, F_KK = RK ? 8 : 8 * BS;
    // Floats per ring slot, a multiple of 1024 bytes: each A tile starts on a swizzle-atom boundary.
    static constexpr int SLOT = (A_TILE + A_LO + B_TILE + 255) / 256 * 256;
    static constexpr int A_CHUNKS = BM * BK / 4, B_CHUNKS = BK * BN / 4;
    // The A tile is K-major with the swizzle as wide as its rows (BK * 4 bytes: 64 or 128): row r at
    // byte r * BK * 4, its 16-byte chunk kc at kc ^ ((r * BK * 4 / 128) % KC) (CuTe's
    // Swizzle<log2 KC, 4, 3>), so that the eight rows of a core matrix fall in distinct banks. In the
    // descriptor: groups of 8 rows SBO = 32 BK bytes apart, a k-step of 8 is 32 bytes further along
    // the row (the hardware applies the swizzle to the address), mode 1 (128 B) or 2 (64 B).
    static constexpr unsigned SBO = 32 * BK, KSTEP = 32;
    static constexpr unsigned SWIZZLE = BK == 32 ? 1 : 2;
    static_assert(BK == 16 || BK == 32, "swizzled A rows of 64 or 128 bytes");
    static_assert((BM == 64 || BM == 128 || BM == 256) && BK % 8 == 0, "tiling: wgmma N of 64, 128 or 256");
    static_assert(OP >= 0 && OP <= 2, "OP: NN, NT or TT");
    static_assert(A_CHUNKS % THREADS == 0 && B_CHUNKS % THREADS == 0, "whole copies per thread");
    static constexpr int SMEM_BYTES = STAGES * SLOT * 4 + 1024;
};

// wg_a_offset is the float offset, in an A tile, of the 16-byte chunk holding row r, k 4 kc..4 kc+3.
template <class Cfg>
__device__ __forceinline__ int wg_a_offset(int r, int kc)
{
    return r * Cfg::BK + ((kc ^ ((r * Cfg::BK / 32) % Cfg::KC)) * 4);
}

// wg_a_chunk is the i-th A chunk of thread tid: consecutive threads take consecutive chunks of a
// row (contiguous global memory; the swizzle spreads them over distinct banks).
template <class Cfg>
__device__ __forceinline__ void wg_a_chunk(int tid, int i, int& r, int& kc)
{
    const int c = tid + i * Cfg::THREADS;
    kc = c % Cfg::KC;
    r = c / Cfg::KC;
}

// wg_chunk copies one 16-byte chunk of a tile: cp.async when FULL (no guards), else tc_chunk's
// guarded copy of its n valid elements (v: the operand is 16-byte aligned, base its start).
template <bool FULL>
__device__ __forceinline__ void wg_chunk(float* dst, const float* src, int n, bool v, const float* base)
{
    if (FULL)
        cp_async16(dst, src);
    else
        tc_chunk(dst, src, n, v, base);
}

// wg_load_tile copies k tile k0 of the shared operand S (rows s0.. of ns, BM x BK, row-major along
// k with leading dimension lds) and of the register operand R (rows r0.. of nr, BN of them; stored
// along k with leading dimension ldr when RK, else k-row by k-row) into a ring slot. FULL: no
// guards (interior block, whole k tile, aligned operands).
template <class Cfg, bool FULL>
__device__ __forceinline__ void wg_load_tile(float* as, float* bs, const float* __restrict__ S, int lds, int ns,
                                             int s0, const float* __restrict__ R, int ldr, int nr, int r0, int K,
                                             int k0, int tid, bool vs, bool vr)
{
#pragma unroll
    for (int i = 0; i < Cfg::A_CHUNKS / Cfg::THREADS; ++i) {
        int r, kc;
        wg_a_chunk<Cfg>(tid, i, r, kc);
        float* dst = as + wg_a_offset<Cfg>(r, kc);
        const float* src = S + (size_t)(s0 + r) * lds + k0 + 4 * kc;
        wg_chunk<FULL>(dst, src, s0 + r < ns ? min(max(K - k0 - 4 * kc, 0), 4) : 0, vs, S);
    }
#pragma unroll
    for (int i = 0; i < Cfg::B_CHUNKS / Cfg::THREADS; ++i) {
        const int c = tid + i * Cfg::THREADS;
        if (Cfg::RK) {
            const int r = c / Cfg::KC, kc = (c % Cfg::KC) * 4;
            float* dst = bs + r * Cfg::BS + kc;
            const float* src = R + (size_t)(r0 + r) * ldr + k0 + kc;
            wg_chunk<FULL>(dst, src, r0 + r < nr ? min(max(K - k0 - kc, 0), 4) : 0, vr, R);
        } else {
            const int r = c / (Cfg::BN / 4), nc = (c % (Cfg::BN / 4)) * 4;
            float* dst = bs + r * Cfg::BS + nc;
            const float* src = R + (size_t)(k0 + r) * ldr + r0 + nc;
            wg_chunk<FULL>(dst, src, k0 + r < K ? min(max(nr - r0 - nc, 0), 4) : 0, vr, R);
        }
    }
}

// wg_residual is x's 3xTF32 residual: the tensor core reads an FP32 operand's high 19 bits (it
// ignores the low 13, so x itself is its high part, truncated), and x - trunc(x) is exact in FP32,
// rounded here to a TF32 operand (tilegen/mma_tf32.cuh's to_tf32).
__device__ __forceinline__ uint32_t wg_residual(float x)
{
    return to_tf32(x - __uint_as_float(__float_as_uint(x) & 0xffffe000u));
}

// wg_split_tile writes the residuals of the A chunks this thread copied into a slot (3xTF32) at
// the same offsets of the residual tile; the chunks themselves stay as copied (the high part).
template <class Cfg>
__device__ __forceinline__ void wg_split_tile(const float* as, float* alo, int tid)
{
#pragma unroll
    for (int i = 0; i < Cfg::A_CHUNKS / Cfg::THREADS; ++i) {
        int r, kc;
        wg_a_chunk<Cfg>(tid, i, r, kc);
        const int off = wg_a_offset<Cfg>(r, kc);
        const float4 v = *reinterpret_cast<const float4*>(as + off);
        const uint4 l = make_uint4(wg_residual(v.x), wg_residual(v.y), wg_residual(v.z), wg_residual(v.w));
        *reinterpret_cast<uint4*>(alo + off) = l;
    }
}

// WgFrag is a lane's B^T fragments of one ring slot: per k-step of 8 the high part (or the TF32
// operand) and the residual (3xTF32).
template <class Cfg>
struct WgFrag {
    uint32_t hi[Cfg::BK / 8][4], lo[Cfg::SPLIT3 ? Cfg::BK / 8 : 1][4];
};

// wg_frag reads the lane's register-operand fragments of a slot (a0 (g, t), a1 (g+8, t), a2 (g, t+4),
// a3 (g+8, t+4): k t and t+4 of rows g and g+8): the value and its residual (3xTF32) or the value
// rounded to TF32. bs points at the lane's first element (row nb + g, k t).
template <class Cfg>
__device__ __forceinline__ void wg_frag(WgFrag<Cfg>& f, const float* bs)
{
#pragma unroll
    for (int kk = 0; kk < Cfg::BK / 8; ++kk) {
        const float* p = bs + kk * Cfg::F_KK;
        const float x[4] = {p[0], p[Cfg::F_ROW8], p[Cfg::F_K4], p[Cfg::F_K4 + Cfg::F_ROW8]};
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            if (Cfg::SPLIT3) {
                f.hi[kk][e] = __float_as_uint(x[e]);
                f.lo[kk][e] = wg_residual(x[e]);
            } else
                f.hi[kk][e] = to_tf32(x[e]);
        }
    }
}

// wg_issue issues one slot's MMAs for this warpgroup against the A tile at shared address as (its
// residual at alo) and commits them as one group. d receives the products: the 3xTF32 partial
// accumulator (overwritten when fresh) or the running sum (TF32).
template <class Cfg>
__device__ __forceinline__ void wg_issue(float (&d)[Cfg::NACC], const WgFrag<Cfg>& f, uint32_t as, uint32_t alo,
                                         bool fresh)
{
    wgmma_reg_fence(d);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < Cfg::BK / 8; ++kk) {
        const uint64_t hi = wgmma_desc_sw(as + kk * Cfg::KSTEP, Cfg::SBO, Cfg::SWIZZLE);
        if (Cfg::SPLIT3) {
            const uint64_t lo = wgmma_desc_sw(alo + kk * Cfg::KSTEP, Cfg::SBO, Cfg::SWIZZLE);
            WgmmaTf32<Cfg::BM>::mma(d, f.hi[kk], lo, kk != 0 || !fresh);
            WgmmaTf32<Cfg::BM>::mma(d, f.lo[kk], hi, 1);
            WgmmaTf32<Cfg::BM>::mma(d, f.hi[kk], hi, 1);
        } else {
            WgmmaTf32<Cfg::BM>::mma(d, f.hi[kk], hi, 1);
        }
    }
    wgmma_commit();
}

// WgLoop carries the main loop's state: operands, edge flags and the ring position.
template <class Cfg>
struct WgLoop {
    const float* __restrict__ S; // the shared operand (rows s0.. of ns, along k)
    const float* __restrict__ R; // the register operand (rows r0.. of nr)
    int lds, ldr, ns, nr, K, s0, r0, tid, nt;
    bool vs, vr, inner;
    float* smem;
    uint32_t sbase;
    int bfrag; // the lane's first B-tile element (row nb + g, k t), in floats from a slot's B tile

    __device__ __forceinline__ void load(int kt, int slot) const
    {
        if (kt < nt) {
            float* p = smem + slot * Cfg::SLOT;
            if (inner && (kt + 1) * Cfg::BK <= K)
                wg_load_tile<Cfg, true>(p, p + Cfg::A_TILE + Cfg::A_LO, S, lds, ns, s0, R, ldr, nr, r0, K, kt * Cfg::BK, tid, vs, vr);
            else
                wg_load_tile<Cfg, false>(p, p + Cfg::A_TILE + Cfg::A_LO, S, lds, ns, s0, R, ldr, nr, r0, K, kt * Cfg::BK, tid, vs, vr);
        }
        cp_async_commit();
    }
    // ready waits for the slot's copies (WAIT groups may stay in flight), splits A (3xTF32) and
    // publishes the slot to every warpgroup's MMAs.
    template <int WAIT>
    __device__ __forceinline__ void ready(int slot) const
    {
        cp_async_wait<WAIT>();
        if (Cfg::SPLIT3) wg_split_tile<Cfg>(smem + slot * Cfg::SLOT, smem + slot * Cfg::SLOT + Cfg::A_TILE, tid);
        fence_async_shared();
        __syncthreads();
    }
    __device__ __forceinline__ uint32_t a_addr(int slot) const { return sbase + (uint32_t)(slot * Cfg::SLOT) * 4u; }
    __device__ __forceinline__ const float* b_ptr(int slot) const { return smem + slot * Cfg::SLOT + Cfg::A_TILE + Cfg::A_LO + bfrag; }
};

// wg_mainloop runs the whole K range through the ring into acc (this warpgroup's m64nBM
// accumulator, the MMA's D layout).
//
// Without PIPE a slot's MMAs are waited for before the next barrier: the slot refilled after the
// barrier is the one computed before it, STAGES - 1 tiles are in flight. With PIPE one group of
// MMAs stays in flight while the next slot's fragments are read and its MMAs issued (wait<1>), so
// the tensor core is not idle across the barrier: the fragments alternate between two register
// sets, and the slot refilled is the one computed two tiles before (STAGES - 2 tiles in flight).
// 3xTF32 sums FOLD tiles in a partial accumulator and adds it to the running sum after a full wait
// (no instruction may read an accumulator while MMAs are in flight).
template <class Cfg>
__device__ __forceinline__ void wg_mainloop(float (&acc)[Cfg::NACC], float* smem, const float* __restrict__ A,
                                            int lda, const float* __restrict__ B, int ldb, int M, int N, int K,
                                            int m0, int n0, int tid)
{
    WgLoop<Cfg> L;
    if (Cfg::OP == 0) { // C^T = B^T A^T: A shared (rows m), B registers (rows n)
        L.S = A, L.lds = lda, L.ns = M, L.s0 = m0;
        L.R = B, L.ldr = ldb, L.nr = N, L.r0 = n0;
    } else { // C = A B: B shared (rows n), A registers (rows m)
        L.S = B, L.lds = ldb, L.ns = N, L.s0 = n0;
        L.R = A, L.ldr = lda, L.nr = M, L.r0 = m0;
    }
    L.K = K;
    L.tid = tid;
    L.nt = (K + Cfg::BK - 1) / Cfg::BK;
    L.vs = aligned16((uintptr_t)L.S, L.lds);
    L.vr = aligned16((uintptr_t)L.R, L.ldr);
    L.inner = L.vs && L.vr && L.s0 + Cfg::BM <= L.ns && L.r0 + Cfg::BN <= L.nr;
    // The ring starts on a 1024-byte boundary (the swizzle atom); dynamic_shared holds 1 KiB more.
    const uint32_t raw = (uint32_t)__cvta_generic_to_shared(smem);
    L.sbase = (raw + 1023u) & ~1023u;
    L.smem = smem + (L.sbase - raw) / 4;
    const int lane = tid % 32, g = lane / 4, t = lane % 4;
    const int nb = (tid / 128) * 64 + ((tid / 32) % 4) * 16; // this warp's first B-tile row
    L.bfrag = Cfg::RK ? (nb + g) * Cfg::BS + t : t * Cfg::BS + nb + g;
    const int nt = L.nt;
    float d[Cfg::SPLIT3 ? Cfg::NACC : 1];
    float(&part)[Cfg::NACC] = *reinterpret_cast<float(*)[Cfg::NACC]>(Cfg::SPLIT3 ? d : acc);
    auto fold = [&]() {
        if (Cfg::SPLIT3) {
            wgmma_reg_fence(part);
#pragma unroll
            for (int i = 0; i < Cfg::NACC; ++i) acc[i] += part[i];
        }
    };

    if (!Cfg::PIPE) {
#pragma unroll
        for (int s = 0; s < Cfg::STAGES - 1; ++s) L.load(s, s);
        WgFrag<Cfg> f;
        int cur = 0, next = Cfg::STAGES - 1;
        for (int kt = 0; kt < nt; ++kt) {
            L.template ready<Cfg::STAGES - 2>(cur);
            L.load(kt + Cfg::STAGES - 1, next);
            wg_frag<Cfg>(f, L.b_ptr(cur));
            wg_issue<Cfg>(part, f, L.a_addr(cur), L.a_addr(cur) + Cfg::A_TILE * 4u, kt % Cfg::FOLD == 0);
            wgmma_wait<0>();
            wgmma_reg_fence(part);
            if (kt % Cfg::FOLD == Cfg::FOLD - 1 || kt + 1 == nt) fold();
            cur = cur + 1 == Cfg::STAGES ? 0 : cur + 1;
            next = next + 1 == Cfg::STAGES ? 0 : next + 1;
        }
    } else {
        static_assert(!Cfg::PIPE || Cfg::STAGES >= 3, "PIPE keeps STAGES - 2 tiles in flight");
        constexpr int G = Cfg::SPLIT3 ? Cfg::FOLD : 2; // tiles per unrolled group
#pragma unroll
        for (int s = 0; s < Cfg::STAGES - 2; ++s) L.load(s, s);
        WgFrag<Cfg> f[2];
        int cur = 0, next = Cfg::STAGES - 2;
        for (int k0 = 0; k0 < nt; k0 += G) {
#pragma unroll
            for (int j = 0; j < G; ++j) {
                if (k0 + j < nt) {
                    L.template ready<Cfg::STAGES - 3>(cur);
                    L.load(k0 + j + Cfg::STAGES - 2, next);
                    wg_frag<Cfg>(f[j % 2], L.b_ptr(cur));
                    wg_issue<Cfg>(part, f[j % 2], L.a_addr(cur), L.a_addr(cur) + Cfg::A_TILE * 4u, j == 0);
                    if (Cfg::SPLIT3 && j == G - 1) {
                        wgmma_wait<0>();
                        fold();
                    } else {
                        wgmma_wait<1>();
                    }
                    cur = cur + 1 == Cfg::STAGES ? 0 : cur + 1;
                    next = next + 1 == Cfg::STAGES ? 0 : next + 1;
                }
            }
        }
        wgmma_wait<0>();
        wgmma_reg_fence(part);
        if (Cfg::SPLIT3 && nt % G != 0) fold();
    }
    cp_async_wait<0>();
}

// wg_origin is the block's first row and column of C in the grouped block order (Cfg::GROUP):
// blocks id = y * gridDim.x + x run GROUP block rows at a time, down each column of blocks.
template <class Cfg>
__device__ __forceinline__ void wg_origin(int& m0, int& n0)
{
    const int gx = gridDim.x, gy = gridDim.y, id = blockIdx.y * gx + blockIdx.x;
    const int per = Cfg::GROUP * gx, first = (id / per) * Cfg::GROUP, rows = min(gy - first, Cfg::GROUP);
    m0 = (first + (id % per) % rows) * Cfg::TILE_ROWS;
    n0 = ((id % per) / rows) * Cfg::TILE_COLS;
}

// wg_store writes the block's C tile from the accumulators. NN: the lane's d[4j + e] is C^T's row
// (column of C) nb + g (+8 for e >= 2) and column (row of C) 8j + 2t (+1 for odd e); a warp's
// store covers four rows of C, 32 contiguous bytes each. NT, TT: d[4j + e] is C's row nb + g (+8)
// and column 8j + 2t (+1), two adjacent columns in one 8-byte store. beta == 0 never reads C.
template <class Cfg>
__device__ __forceinline__ void wg_store(const float (&acc)[Cfg::NACC], float* __restrict__ C, int ldc, int M, int N,
                                         int m0, int n0, float alpha, float beta, int tid)
{
    const int lane = tid % 32, g = lane / 4, t = lane % 4;
    const int nb = (tid / 128) * 64 + ((tid / 32) % 4) * 16;
    if (Cfg::OP != 0) {
        const bool v8 = ((uintptr_t)C & 7) == 0 && (ldc & 1) == 0;
#pragma unroll
        for (int j = 0; j < Cfg::BM / 8; ++j) {
            store2(acc[4 * j], acc[4 * j + 1], C, ldc, M, N, m0 + nb + g, n0 + 8 * j + 2 * t, alpha, beta, v8);
            store2(acc[4 * j + 2], acc[4 * j + 3], C, ldc, M, N, m0 + nb + g + 8, n0 + 8 * j + 2 * t, alpha, beta, v8);
        }
        return;
    }
    const int col = n0 + nb + g;
#pragma unroll
    for (int j = 0; j < Cfg::BM / 8; ++j) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int r = m0 + 8 * j + 2 * t + (e & 1), c = col + (e >> 1) * 8;
            if (r < M && c < N) {
                float* p = C + (size_t)r * ldc + c;
                const float v = alpha * acc[4 * j + e];
                *p = beta != 0.0f ? fmaf(beta, *p, v) : v;
            }
        }
    }
}

} // namespace tg
#endif // TILEGEN_WG_PIPELINE_CUH
