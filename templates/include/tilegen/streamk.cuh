// tilegen/streamk.cuh: the persistent stream-K schedule of family streamk (Osama et al., "Stream-K:
// Work-centric Parallel Decomposition for Dense Matrix-Matrix Multiplication on the GPU", 2023, in
// its data-parallel + stream-K form) and the fix-up of its shared tiles.
//
// A launch of G blocks (variant.SplitRule.CTAs: about one wave) over T output tiles of kt K steps
// each: the first T - T mod G tiles go data-parallel, block x taking tiles x, x + G, ... with all of
// K (none when T < G: then every tile is left over); the leftover tiles' K steps, skT * kt of them
// in tile order, are cut into Gs equal ranges, one per block (Gs <= G, at least MIN K steps each,
// so that no tile is shared by more than about 17 blocks), which is what keeps every SM busy to the
// end where whole tiles would leave the last wave part empty (1025^3 in 128x128 tiles: 81 tiles on
// 132 SMs). When the last wave is more than half full (T > G and T mod G > G / 2) every tile goes
// data-parallel: the blocks of a leftover range start at staggered K, so they share no operand
// slab in L2, and a near-full wave of them lost more in DRAM traffic than the wave's idle part
// (2048x4096x4096 in 128x256 tiles, 124 leftover tiles on 132 SMs: 0.89 of cuBLAS, the
// tile-per-block kernel 0.96; H100). A block's range covers the end of one tile, whole tiles, the start of another. A tile
// whose K steps one block holds all of is stored by that block; the blocks sharing a tile store
// their partial tiles in the workspace and count themselves in at its counter, and the last to
// arrive adds every partial in block order, its own read back too (tg_ska_sum_par), and stores the
// tile: the sum's order never depends on timing, and no block waits for another (the grid need not
// be co-resident).
//
// Workspace slots: the pieces of the leftover range, in order, are (block x, tile u) pairs with
// both x and u non-decreasing, so x + u numbers them without collision: tile u's blocks xf..xl
// hold slots xf + u .. xl + u, one contiguous run. Slots < Gs + skT < 2G; counters: skT < G.
#ifndef TILEGEN_STREAMK_CUH
#define TILEGEN_STREAMK_CUH
#include "tilegen/splitk_tree_par.cuh"

namespace tg {

// StreamKWork is one piece of a block's work: K steps [kb, ke) of output tile `tile` (row-major
// over the tile grid). A piece that is not whole is shared: its partial goes to workspace slot
// `slot`, and the tile's `count` partials lie in slots first .. first + count - 1, counted at
// counter u.
struct StreamKWork {
    long long tile;
    int kb, ke;
    int whole;
    int slot, first, count, u;
};

// StreamK is a block's walk over its pieces. It lives in shared memory and one thread moves it
// (next), so that the walk's 64-bit cursors hold no registers through the main loop: the kernels
// built on it are at the register file's limit.
struct StreamK {
    long long dpT, next, I, it, end;
    int kt, G, x, Gs;
    StreamKWork w; // the current piece
    int more;      // whether there is one

    // init: tiles output tiles of kt K steps, G blocks (gridDim.x), this block x; minSteps: the
    // least K steps of a leftover range; sk: the workspace holds a stream-K launch of G blocks (else
    // every tile goes data-parallel, which is slower on a partial wave but always right).
    __device__ void init(long long tiles, int kt_, int G_, int x_, int minSteps, bool sk)
    {
        const long long rest = tiles % G_;
        const long long skT = !sk ? 0 : tiles < G_ ? tiles : 2 * rest <= G_ ? rest : 0;
        kt = kt_;
        G = G_;
        x = x_;
        dpT = tiles - skT;
        next = x_;
        I = skT * kt_;
        const long long minIt = max((long long)minSteps, ((long long)kt_ + 15) / 16);
        Gs = I > 0 ? (int)max(1LL, min((long long)G_, I / minIt)) : 0;
        it = x_ < Gs ? (long long)x_ * I / Gs : 0;
        end = x_ < Gs ? ((long long)x_ + 1) * I / Gs : 0;
    }

    // advance sets w to the next piece and more to whether there is one.
    __device__ void advance()
    {
        more = 1;
        if (next < dpT) {
            w.tile = next;
            w.kb = 0;
            w.ke = kt;
            w.whole = 1;
            next += G;
            return;
        }
        if (it >= end) {
            more = 0;
            return;
        }
        const long long u = it / kt;
        const int kb = (int)(it - u * kt);
        const int ke = (int)min((long long)kt, kb + (end - it));
        it += ke - kb;
        w.tile = dpT + u;
        w.kb = kb;
        w.ke = ke;
        w.whole = kb == 0 && ke == kt;
        // The blocks holding the tile's first and last K steps: block y's range starts at y*I/Gs,
        // so step i lies in block ((i + 1) * Gs - 1) / I.
        const long long xf = ((u * kt + 1) * Gs - 1) / I, xl = ((u + 1) * kt * Gs - 1) / I;
        w.first = (int)(xf + u);
        w.count = (int)(xl - xf + 1);
        w.slot = (int)(x + u);
        w.u = (int)u;
    }
};

// streamk_fixup publishes a shared piece's partial (read through get(j), F4 float4s on each of TP
// threads) in its slot and counts the block in; the last of the tile's blocks gets the sum of all
// of them in block order through set(j, float4) and true (it stores the tile), the others false
// (they go on to their next piece without touching C). flag: an int of shared memory.
template <int F4, int TP, class Get, class Set>
__device__ __forceinline__ bool streamk_fixup(Get get, Set set, float4* __restrict__ ws, unsigned* __restrict__ cnt,
                                              const StreamKWork& w, int tid, int* flag)
{
    if (tid < TP) {
#pragma unroll
        for (int j = 0; j < F4; ++j) __stcg(ws + ((size_t)w.slot * F4 + j) * TP + tid, get(j));
    }
    if (!tg_ska_count(cnt + w.u, (unsigned)w.count, tid, flag)) return false;
    if (tid < TP) tg_ska_sum_par<F4, TP>(ws, w.first, w.count, 1, tid, set);
    return true;
}

} // namespace tg
#endif // TILEGEN_STREAMK_CUH
