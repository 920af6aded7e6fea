#ifndef TILEGEN_PIPELINE_CUH
#define TILEGEN_PIPELINE_CUH
// tilegen/pipeline.cuh: the main loops of the register-tiled kernels. They walk a block's k range
// tile by tile, moving the operands' next tiles towards shared memory (tilegen/loaders.cuh) while
// computing on the current ones (tilegen/fragments.cuh), one barrier per tile:
//   registers_mainloop  (regtile STAGES = 1) A and B through registers, A stored transposed.
//   staged_mainloop     (regtile, splitk) A through registers, B through a STAGES-deep cp.async
//                       ring. In both, PF = 1 loads the next tile's registers before computing the
//                       current one (seed 001 prefetch) and stores them into the other of two
//                       buffers; PF = 0 loads them after the math and a barrier.
//   async_mainloop      (cpasync, slicedk) both operands through the ring, A (and a transposed B)
//                       transposed in flight by element copies; XB = 1 double-buffers the
//                       fragments across the k-tile boundary.
// A kernel instantiates its main loop twice, FAST = true for interior blocks with aligned operands
// (only the fast and tail paths, tilegen/guards.cuh) and FAST = false for the rest, so that the hot
// loop is as small as a kernel without edge handling (instruction-cache footprint, registers).
//
// The ring: tile t lives in slot t % STAGES; one commit group per tile, empty groups past the end
// so that wait_group counts stay uniform; waiting for all but STAGES - 2 groups means tile kt has
// landed (this thread's copies), and the barrier after it makes it visible to all and frees the
// slot of tile kt-1, which the next copies then fill.
#include "tilegen/cp_async.cuh"
#include "tilegen/guards.cuh"
#include "tilegen/loaders.cuh"
#include "tilegen/fragments.cuh"

namespace tg {

// StagedConfig: a staged_mainloop (or registers_mainloop) kernel on the warp tiling Tile (a
// tg::WarpTile). LA and LB are how A and B run in global memory (tilegen/loaders.cuh): A is
// k-contiguous under op(A) = A and mn-contiguous under op(A) = A^T, B the other way round; both
// staged loaders serve either layout; the cp.async ring copies an mn-contiguous B in float4s and a
// k-contiguous one (op(B) = B^T) transposed, one element per copy (AsyncCopy<KContiguous>: its
// tile rows need BS % 32 == 4, PAD = 4 on 32-multiple tiles). EDGE_Z16: an
// edge block copies an aligned B float4 past N as one zero-filling 16-byte cp.async (see
// AsyncCopy::copy); split-K kernels take it (1000^3: +8 % for a split-K kernel whose edge blocks
// set the kernel's time), the single-slice kernels keep four guarded 4-byte copies there, because
// the 16-byte path changed ptxas's register allocation of their hot loop and cost them 4-5 % at
// 4096^3, where no block takes the edge path at all.
template <class Tile, int STAGES_, int PF_, bool EDGE_Z16_, Layout LA = Layout::KContiguous, Layout LB = Layout::MNContiguous>
struct StagedConfig : Tile {
    static constexpr int STAGES = STAGES_, PF = PF_, XB = 0;
    static constexpr bool ALD = false, EDGE_Z16 = EDGE_Z16_;
    static constexpr int NA = PF ? 2 : 1;             // A buffers
    static constexpr int NB = STAGES >= 2 ? STAGES : NA; // B ring slots (or buffers)
    using ALoad = StagedLoad<LA, Tile::BM, Tile::BK, Tile::AS, Tile::T>;
    using BLoad = StagedLoad<LB, Tile::BN, Tile::BK, Tile::BS, Tile::T>;
    using BCopy = AsyncCopy<LB, Tile::BN, Tile::BK, Tile::BS, Tile::T>;
    static_assert(Tile::SK == 1, "staged kernels do not slice k inside the block");
};

// AsyncConfig: an async_mainloop kernel. A shares B's ring (4-byte copies; any lda, no registers).
// LB is how B runs: mn-contiguous (float4 copies) or, under op(B) = B^T, k-contiguous (4-byte
// copies transposed in flight like A's; then no operand needs 16-byte rows).
template <class Tile, int STAGES_, int XB_, Layout LB = Layout::MNContiguous>
struct AsyncConfig : Tile {
    static constexpr int STAGES = STAGES_, PF = 0, XB = XB_;
    static constexpr bool ALD = true, EDGE_Z16 = true;
    static constexpr int NA = STAGES, NB = STAGES;
    using ACopy = AsyncCopy<Layout::KContiguous, Tile::BM, Tile::BK, Tile::AS, Tile::T>;
    using BCopy = AsyncCopy<LB, Tile::BN, Tile::BK, Tile::BS, Tile::T>;
    static_assert(STAGES >= 2, "the ring needs two slots at least");
    static_assert(!XB || Tile::KS % 2 == 0, "XB: fragments alternate between two register sets per k step");
};

// The main loops take the block's operands and this thread's coordinates as values (the kernel
// computes them once): the shared tiles As, Bs (NA and NB tiles, or ring slots); the k range
// [kBegin, kEnd) and its nt BK tiles (only the last may be partial); A at the block's first row (Ab,
// lda, aM = rows left before M, va = 16-byte rows) and B at its first column (Bb, ldb, bN, vb); the
// thread's first float4 of the staged A loads (am, ak) and of the B loads and copies (bk, bn), its
// first element of the element-wise copies (aPtr, bPtr), and its first fragment (aoffk, boffk; see
// tg::WarpTile). Each load or copy site picks the tile's path in place: the tail when the tile
// crosses kEnd, else fast or edge by FAST. (The sites are written out rather than factored into
// helpers: nvcc optimizes a helper on its own before inlining it, which moves instructions, and
// the generated PTX is kept exactly as it was measured.)

// registers_mainloop: STAGES == 1, A and B through registers; PF = 1 prefetches the next tile's
// registers before the math into the other of two buffers, PF = 0 loads them after it and a barrier
// into the one buffer.
template <class Cfg, bool FAST>
static __device__ void registers_mainloop(float (&acc)[Cfg::TM][Cfg::TN], float* const As, float* const Bs,
                                          const int kBegin, const int kEnd, const int nt, const float* const Ab,
                                          const int lda, const int aM, const int am, const int ak, const bool va,
                                          const float* const Bb, const int ldb, const int bN, const int bk, const int bn,
                                          const bool vb, const int aoffk, const int boffk)
{
    using ALoad = typename Cfg::ALoad;
    using BLoad = typename Cfg::BLoad;
    constexpr int BK = Cfg::BK, A_TILE = Cfg::A_TILE, B_TILE = Cfg::B_TILE;
    static_assert(Cfg::STAGES == 1, "registers_mainloop: B through registers");
    float4 ra[ALoad::F4];
    float4 rb[BLoad::F4];
    if (nt > 0) {
        const int k0 = kBegin + 0 * BK;
        if (k0 + BK > kEnd) {
            ALoad::template load<PATH_TAIL>(ra, Ab, lda, aM, kEnd, am, k0 + ak, va);
            BLoad::template load<PATH_TAIL>(rb, Bb, ldb, bN, kEnd, bn, k0 + bk, vb);
        } else if (FAST) {
            ALoad::template load<PATH_FAST>(ra, Ab, lda, aM, kEnd, am, k0 + ak, va);
            BLoad::template load<PATH_FAST>(rb, Bb, ldb, bN, kEnd, bn, k0 + bk, vb);
        } else {
            ALoad::template load<PATH_EDGE>(ra, Ab, lda, aM, kEnd, am, k0 + ak, va);
            BLoad::template load<PATH_EDGE>(rb, Bb, ldb, bN, kEnd, bn, k0 + bk, vb);
        }
        ALoad::store(As, ra, ak, am);
        BLoad::store(Bs, rb, bk, bn);
    }
    int abuf = 0, bbuf = 0;
    for (int kt = 0; kt < nt; ++kt) {
        // Tile kt is visible to all; every thread is done with tile kt-1, so its buffers are free.
        __syncthreads();
        const bool more = kt + 1 < nt;
        if constexpr (Cfg::PF) {
            if (more) { // register prefetch: the loads are in flight during the math
                const int k0 = kBegin + (kt + 1) * BK;
                if (k0 + BK > kEnd) {
                    ALoad::template load<PATH_TAIL>(ra, Ab, lda, aM, kEnd, am, k0 + ak, va);
                    BLoad::template load<PATH_TAIL>(rb, Bb, ldb, bN, kEnd, bn, k0 + bk, vb);
                } else if (FAST) {
                    ALoad::template load<PATH_FAST>(ra, Ab, lda, aM, kEnd, am, k0 + ak, va);
                    BLoad::template load<PATH_FAST>(rb, Bb, ldb, bN, kEnd, bn, k0 + bk, vb);
                } else {
                    ALoad::template load<PATH_EDGE>(ra, Ab, lda, aM, kEnd, am, k0 + ak, va);
                    BLoad::template load<PATH_EDGE>(rb, Bb, ldb, bN, kEnd, bn, k0 + bk, vb);
                }
            }
        }
        Cfg::compute(acc, As + abuf * A_TILE + aoffk, Bs + bbuf * B_TILE + boffk);
        abuf = abuf + 1 == Cfg::NA ? 0 : abuf + 1;
        bbuf = bbuf + 1 == Cfg::NB ? 0 : bbuf + 1;
        if (more) {
            if constexpr (!Cfg::PF) {
                __syncthreads(); // single buffer: wait until every thread is done reading it
                const int k0 = kBegin + (kt + 1) * BK;
                if (k0 + BK > kEnd) {
                    ALoad::template load<PATH_TAIL>(ra, Ab, lda, aM, kEnd, am, k0 + ak, va);
                    BLoad::template load<PATH_TAIL>(rb, Bb, ldb, bN, kEnd, bn, k0 + bk, vb);
                } else if (FAST) {
                    ALoad::template load<PATH_FAST>(ra, Ab, lda, aM, kEnd, am, k0 + ak, va);
                    BLoad::template load<PATH_FAST>(rb, Bb, ldb, bN, kEnd, bn, k0 + bk, vb);
                } else {
                    ALoad::template load<PATH_EDGE>(ra, Ab, lda, aM, kEnd, am, k0 + ak, va);
                    BLoad::template load<PATH_EDGE>(rb, Bb, ldb, bN, kEnd, bn, k0 + bk, vb);
                }
            }
            ALoad::store(As + abuf * A_TILE, ra, ak, am);
            BLoad::store(Bs + abuf * B_TILE, rb, bk, bn);
        }
    }
}

// staged_mainloop: STAGES >= 2, A through registers (PF as above), B through the ring.
template <class Cfg, bool FAST>
static __device__ void staged_mainloop(float (&acc)[Cfg::TM][Cfg::TN], float* const As, float* const Bs, const int kBegin,
                                       const int kEnd, const int nt, const float* const Ab, const int lda, const int aM,
                                       const int am, const int ak, const bool va, const float* const Bb, const int ldb,
                                       const int bN, const int bk, const int bn, const bool vb, const int tid,
                                       const float* const bPtr, const int aoffk, const int boffk)
{
    using ALoad = typename Cfg::ALoad;
    using BCopy = typename Cfg::BCopy;
    constexpr int BK = Cfg::BK, STAGES = Cfg::STAGES, A_TILE = Cfg::A_TILE, B_TILE = Cfg::B_TILE;
    constexpr bool Z16 = Cfg::EDGE_Z16;
    static_assert(STAGES >= 2, "staged_mainloop: B through the ring");
    float4 ra[ALoad::F4];
    // The ring's first STAGES - 1 tiles of B.
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < nt) {
            const int k0 = kBegin + s * BK;
            if (k0 + BK > kEnd)
                BCopy::template copy<PATH_TAIL, Z16, false>(Bs + s * B_TILE, Bb, ldb, bN, kEnd, k0 + bk, bn, bk, bn, vb, k0, tid, bPtr);
            else if (FAST)
                BCopy::template copy<PATH_FAST, Z16, false>(Bs + s * B_TILE, Bb, ldb, bN, kEnd, k0 + bk, bn, bk, bn, vb, k0, tid, bPtr);
            else
                BCopy::template copy<PATH_EDGE, Z16, false>(Bs + s * B_TILE, Bb, ldb, bN, kEnd, k0 + bk, bn, bk, bn, vb, k0, tid, bPtr);
        }
        cp_async_commit();
    }
    if (nt > 0) {
        const int k0 = kBegin + 0 * BK;
        if (k0 + BK > kEnd) {
            ALoad::template load<PATH_TAIL>(ra, Ab, lda, aM, kEnd, am, k0 + ak, va);
        } else if (FAST) {
            ALoad::template load<PATH_FAST>(ra, Ab, lda, aM, kEnd, am, k0 + ak, va);
        } else {
            ALoad::template load<PATH_EDGE>(ra, Ab, lda, aM, kEnd, am, k0 + ak, va);
        }
        ALoad::store(As, ra, ak, am);
    }
    int bbuf = 0, abuf = 0;
    int bnext = STAGES - 1; // ring slot of tile kt + STAGES - 1
    for (int kt = 0; kt < nt; ++kt) {
        cp_async_wait<STAGES - 2>(); // this thread's copies of tile kt have landed
        // Tile kt is visible to all; every thread is done with tile kt-1, so its slot and buffer are free.
        __syncthreads();
        if (kt + STAGES - 1 < nt) {
            const int k0 = kBegin + (kt + STAGES - 1) * BK;
            if (k0 + BK > kEnd)
                BCopy::template copy<PATH_TAIL, Z16, false>(Bs + bnext * B_TILE, Bb, ldb, bN, kEnd, k0 + bk, bn, bk, bn, vb, k0, tid, bPtr);
            else if (FAST)
                BCopy::template copy<PATH_FAST, Z16, false>(Bs + bnext * B_TILE, Bb, ldb, bN, kEnd, k0 + bk, bn, bk, bn, vb, k0, tid, bPtr);
            else
                BCopy::template copy<PATH_EDGE, Z16, false>(Bs + bnext * B_TILE, Bb, ldb, bN, kEnd, k0 + bk, bn, bk, bn, vb, k0, tid, bPtr);
        }
        cp_async_commit();
        bnext = bnext + 1 == STAGES ? 0 : bnext + 1;
        const bool more = kt + 1 < nt;
        if constexpr (Cfg::PF) {
            if (more) { // register prefetch: the loads are in flight during the math
                const int k0 = kBegin + (kt + 1) * BK;
                if (k0 + BK > kEnd) {
                    ALoad::template load<PATH_TAIL>(ra, Ab, lda, aM, kEnd, am, k0 + ak, va);
                } else if (FAST) {
                    ALoad::template load<PATH_FAST>(ra, Ab, lda, aM, kEnd, am, k0 + ak, va);
                } else {
                    ALoad::template load<PATH_EDGE>(ra, Ab, lda, aM, kEnd, am, k0 + ak, va);
                }
            }
        }
        Cfg::compute(acc, As + abuf * A_TILE + aoffk, Bs + bbuf * B_TILE + boffk);
        abuf = abuf + 1 == Cfg::NA ? 0 : abuf + 1;
        bbuf = bbuf + 1 == Cfg::NB ? 0 : bbuf + 1;
        if (more) {
            if constexpr (!Cfg::PF) {
                __syncthreads(); // single buffer: wait until every thread is done reading it
                const int k0 = kBegin + (kt + 1) * BK;
                if (k0 + BK > kEnd) {
                    ALoad::template load<PATH_TAIL>(ra, Ab, lda, aM, kEnd, am, k0 + ak, va);
                } else if (FAST) {
                    ALoad::template load<PATH_FAST>(ra, Ab, lda, aM, kEnd, am, k0 + ak, va);
                } else {
                    ALoad::template load<PATH_EDGE>(ra, Ab, lda, aM, kEnd, am, k0 + ak, va);
                }
            }
            ALoad::store(As + abuf * A_TILE, ra, ak, am);
        }
    }
}

// async_mainloop: both operands through the ring; XB = 1 double-buffers the fragments.
template <class Cfg, bool FAST>
static __device__ void async_mainloop(float (&acc)[Cfg::TM][Cfg::TN], float* const As, float* const Bs, const int kBegin,
                                      const int kEnd, const int nt, const float* const Ab, const int lda, const int aM,
                                      const float* const aPtr, const float* const Bb, const int ldb, const int bN,
                                      const int bk, const int bn, const bool vb, const int tid, const float* const bPtr,
                                      const int aoffk, const int boffk)
{
    using ACopy = typename Cfg::ACopy;
    using BCopy = typename Cfg::BCopy;
    constexpr int BK = Cfg::BK, STAGES = Cfg::STAGES, A_TILE = Cfg::A_TILE, B_TILE = Cfg::B_TILE;
    // The ring's first STAGES - 1 tiles.
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < nt) {
            const int k0 = kBegin + s * BK;
            if (k0 + BK > kEnd) {
                ACopy::template copy4<PATH_TAIL>(As + s * A_TILE, aPtr, Ab, lda, aM, kEnd, k0, tid);
                BCopy::template copy<PATH_TAIL, true, true>(Bs + s * B_TILE, Bb, ldb, bN, kEnd, k0 + bk, bn, bk, bn, vb, k0, tid, bPtr);
            } else if (FAST) {
                ACopy::template copy4<PATH_FAST>(As + s * A_TILE, aPtr, Ab, lda, aM, kEnd, k0, tid);
                BCopy::template copy<PATH_FAST, true, true>(Bs + s * B_TILE, Bb, ldb, bN, kEnd, k0 + bk, bn, bk, bn, vb, k0, tid, bPtr);
            } else {
                ACopy::template copy4<PATH_EDGE>(As + s * A_TILE, aPtr, Ab, lda, aM, kEnd, k0, tid);
                BCopy::template copy<PATH_EDGE, true, true>(Bs + s * B_TILE, Bb, ldb, bN, kEnd, k0 + bk, bn, bk, bn, vb, k0, tid, bPtr);
            }
        }
        cp_async_commit();
    }
    if constexpr (Cfg::XB) {
        // XB: the fragments of the next k step are read from shared memory while this step's FMAs
        // run, across the tile boundary too: the barrier that publishes tile kt+1 sits before tile
        // kt's last step, whose fragments are already in registers, so that step's FMAs hide the
        // first shared reads of tile kt+1 (with one warp per scheduler nothing else would). After
        // the barrier in iteration kt nobody reads tile kt's slot any more, so tile kt + STAGES is
        // issued into it: all STAGES slots hold tiles in flight while kt+1 is computed.
        float fa[2][Cfg::TM], fb[2][Cfg::TN];
        const float* const aw = As + aoffk;
        const float* const bw = Bs + boffk;
        int cur = 0; // ring slot of tile kt
        cp_async_wait<STAGES - 2>(); // tile 0 has landed (this thread's copies)
        __syncthreads();
        if (STAGES - 1 < nt) {
            const int k0 = kBegin + (STAGES - 1) * BK;
            if (k0 + BK > kEnd) {
                ACopy::template copy4<PATH_TAIL>(As + (STAGES - 1) * A_TILE, aPtr, Ab, lda, aM, kEnd, k0, tid);
                BCopy::template copy<PATH_TAIL, true, true>(Bs + (STAGES - 1) * B_TILE, Bb, ldb, bN, kEnd, k0 + bk, bn, bk, bn, vb, k0, tid, bPtr);
            } else if (FAST) {
                ACopy::template copy4<PATH_FAST>(As + (STAGES - 1) * A_TILE, aPtr, Ab, lda, aM, kEnd, k0, tid);
                BCopy::template copy<PATH_FAST, true, true>(Bs + (STAGES - 1) * B_TILE, Bb, ldb, bN, kEnd, k0 + bk, bn, bk, bn, vb, k0, tid, bPtr);
            } else {
                ACopy::template copy4<PATH_EDGE>(As + (STAGES - 1) * A_TILE, aPtr, Ab, lda, aM, kEnd, k0, tid);
                BCopy::template copy<PATH_EDGE, true, true>(Bs + (STAGES - 1) * B_TILE, Bb, ldb, bN, kEnd, k0 + bk, bn, bk, bn, vb, k0, tid, bPtr);
            }
        }
        cp_async_commit();
        Cfg::load_frag(fa[0], fb[0], aw, bw, 0);
        for (int kt = 0; kt < nt; ++kt) {
            const float* const as = aw + cur * A_TILE;
            const float* const bs = bw + cur * B_TILE;
#pragma unroll
            for (int k = 0; k < Cfg::KS - 1; ++k) {
                Cfg::load_frag(fa[(k + 1) & 1], fb[(k + 1) & 1], as, bs, k + 1);
                Cfg::fma_frag(acc, fa[k & 1], fb[k & 1]);
            }
            if (kt + 1 < nt) {
                cp_async_wait<STAGES - 2>(); // tile kt+1 has landed
                __syncthreads();             // ... for everyone, and everyone is done with slot cur
                if (kt + STAGES < nt) {
                    const int k0 = kBegin + (kt + STAGES) * BK;
                    if (k0 + BK > kEnd) {
                        ACopy::template copy4<PATH_TAIL>(As + cur * A_TILE, aPtr, Ab, lda, aM, kEnd, k0, tid);
                        BCopy::template copy<PATH_TAIL, true, true>(Bs + cur * B_TILE, Bb, ldb, bN, kEnd, k0 + bk, bn, bk, bn, vb, k0, tid, bPtr);
                    } else if (FAST) {
                        ACopy::template copy4<PATH_FAST>(As + cur * A_TILE, aPtr, Ab, lda, aM, kEnd, k0, tid);
                        BCopy::template copy<PATH_FAST, true, true>(Bs + cur * B_TILE, Bb, ldb, bN, kEnd, k0 + bk, bn, bk, bn, vb, k0, tid, bPtr);
                    } else {
                        ACopy::template copy4<PATH_EDGE>(As + cur * A_TILE, aPtr, Ab, lda, aM, kEnd, k0, tid);
                        BCopy::template copy<PATH_EDGE, true, true>(Bs + cur * B_TILE, Bb, ldb, bN, kEnd, k0 + bk, bn, bk, bn, vb, k0, tid, bPtr);
                    }
                }
                cp_async_commit();
                cur = cur + 1 == STAGES ? 0 : cur + 1;
                Cfg::load_frag(fa[0], fb[0], aw + cur * A_TILE, bw + cur * B_TILE, 0);
            }
            Cfg::fma_frag(acc, fa[(Cfg::KS - 1) & 1], fb[(Cfg::KS - 1) & 1]);
        }
    } else {
        int bbuf = 0, abuf = 0;
        int bnext = STAGES - 1; // ring slot of tile kt + STAGES - 1
        for (int kt = 0; kt < nt; ++kt) {
            cp_async_wait<STAGES - 2>(); // this thread's copies of tile kt have landed
            // Tile kt is visible to all; every thread is done with tile kt-1, so its slot is free.
            __syncthreads();
            if (kt + STAGES - 1 < nt) {
                const int k0 = kBegin + (kt + STAGES - 1) * BK;
                if (k0 + BK > kEnd) {
                    ACopy::template copy4<PATH_TAIL>(As + bnext * A_TILE, aPtr, Ab, lda, aM, kEnd, k0, tid);
                    BCopy::template copy<PATH_TAIL, true, true>(Bs + bnext * B_TILE, Bb, ldb, bN, kEnd, k0 + bk, bn, bk, bn, vb, k0, tid, bPtr);
                } else if (FAST) {
                    ACopy::template copy4<PATH_FAST>(As + bnext * A_TILE, aPtr, Ab, lda, aM, kEnd, k0, tid);
                    BCopy::template copy<PATH_FAST, true, true>(Bs + bnext * B_TILE, Bb, ldb, bN, kEnd, k0 + bk, bn, bk, bn, vb, k0, tid, bPtr);
                } else {
                    ACopy::template copy4<PATH_EDGE>(As + bnext * A_TILE, aPtr, Ab, lda, aM, kEnd, k0, tid);
                    BCopy::template copy<PATH_EDGE, true, true>(Bs + bnext * B_TILE, Bb, ldb, bN, kEnd, k0 + bk, bn, bk, bn, vb, k0, tid, bPtr);
                }
            }
            cp_async_commit();
            bnext = bnext + 1 == STAGES ? 0 : bnext + 1;
            Cfg::compute(acc, As + abuf * A_TILE + aoffk, Bs + bbuf * B_TILE + boffk);
            abuf = abuf + 1 == Cfg::NA ? 0 : abuf + 1;
            bbuf = bbuf + 1 == Cfg::NB ? 0 : bbuf + 1;
        }
    }
}

} // namespace tg
#endif // TILEGEN_PIPELINE_CUH
