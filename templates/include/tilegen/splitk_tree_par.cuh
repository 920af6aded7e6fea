// tilegen/splitk_tree_par.cuh: tg_ska_fixup (tilegen/splitk_tree.cuh) with the summing block's
// reads in flight together: the fix-up of deepk and splitk_auto (splitk RED = 2); gemvm keeps
// tg_ska_fixup (measured mixed there).
#ifndef TILEGEN_SPLITK_TREE_PAR_CUH
#define TILEGEN_SPLITK_TREE_PAR_CUH
#include "tilegen/splitk_tree.cuh"

// tg_ska_count counts this block in at *c and reports (in *flag, for every thread) whether it was
// the last of `expected`; the last resets the counter for the next launch. The release fence and
// barrier before it make the block's stores visible device-wide before the count moves; the fence
// after it orders the reads of the others' partials after their counts.
__device__ __forceinline__ bool tg_ska_count(unsigned* c, unsigned expected, int tid, int* flag)
{
    __threadfence();
    __syncthreads(); // also: every thread has read *flag before it is written again
    if (tid == 0) {
        const unsigned seen = atomicAdd(c, 1u);
        *flag = seen + 1 == expected;
        if (*flag) *c = 0u;
    }
    __syncthreads();
    if (!*flag) return false;
    __threadfence();
    return true;
}

// TG_SKA_INFLIGHT is how many float4 loads of partials a summing thread has in flight: 8 (16 cost
// the GEMV kernels 50-60 more registers, a third to a half of their occupancy).
#define TG_SKA_INFLIGHT 8

// tg_ska_sum_par adds the partials of slots first, first + step, ..., count of them, in that order
// (tg_ska_fixup's order: the same sums bit for bit), and hands each float4 group j to set. The
// fix-ups of tilegen/splitk_tree.cuh add group j's slots one load at a time and the groups one
// after another, every load waiting for the previous add: F4 x (slots - 1) L2 round trips in a
// row per level. Here the float4 groups go in chunks of JC = min(F4, 8), and the loads of NB slots
// of a chunk (NB x JC = 8 float4s) are issued before any of them is added: a group of 16 slices
// costs 2 round trips for a one-float4 partial instead of 15, and F4 / 8 x 16 instead of
// F4 x 15 for a register tile.
template <int F4, int TP, class Set>
__device__ __forceinline__ void tg_ska_sum_par(const float4* __restrict__ base, int first, int count, int step, int tid,
                                               Set set)
{
    constexpr int JC = F4 < TG_SKA_INFLIGHT ? F4 : TG_SKA_INFLIGHT;
    constexpr int NB = TG_SKA_INFLIGHT / JC;
    static_assert(F4 % JC == 0, "whole chunks of float4 groups");
#pragma unroll
    for (int j0 = 0; j0 < F4; j0 += JC) {
        float4 s[JC];
        for (int i0 = 0; i0 < count; i0 += NB) {
            float4 p[NB][JC];
#pragma unroll
            for (int i = 0; i < NB; ++i) {
#pragma unroll
                for (int j = 0; j < JC; ++j) {
                    if (i0 + i < count)
                        p[i][j] = __ldcg(base + ((size_t)(first + (i0 + i) * step) * F4 + j0 + j) * TP + tid);
                }
            }
#pragma unroll
            for (int i = 0; i < NB; ++i) {
#pragma unroll
                for (int j = 0; j < JC; ++j) {
                    if (i0 + i == 0) {
                        s[j] = p[i][j];
                    } else if (i0 + i < count) {
                        s[j].x += p[i][j].x;
                        s[j].y += p[i][j].y;
                        s[j].z += p[i][j].z;
                        s[j].w += p[i][j].w;
                    }
                }
            }
        }
#pragma unroll
        for (int j = 0; j < JC; ++j) set(j0 + j, s[j]);
    }
}

// tg_ska_fixup_par is tg_ska_fixup: the same workspace slots, counters, groups and order of the
// sums, the partial read through get(j) and replaced through set(j, float4), with every partial the
// summing block adds, its own included, read back from the workspace in flight together
// (tg_ska_sum_par). The partial is dead from its store to the sum, so a kernel need not hold it
// across the counters and barriers (an 8x16 thread tile holding its 128 accumulators there spilled). Returns true in the one block of the
// tile that holds the final sum; false in the others, which must return without touching C.
template <int F4, int TP, int CPT, class Get, class Set>
__device__ __forceinline__ bool tg_ska_fixup_par(Get get, Set set, float4* __restrict__ ws, unsigned* __restrict__ cnt,
                                                 int tile, int z, int S, int tid, int* flag)
{
    const int g = z / TG_SKA_G, NG = (S + TG_SKA_G - 1) / TG_SKA_G;
    const int g0 = g * TG_SKA_G, g1 = min(S, g0 + TG_SKA_G);
    float4* const base = ws + (size_t)tile * S * (F4 * TP);
    const bool holder = tid < TP;
    if (holder) {
#pragma unroll
        for (int j = 0; j < F4; ++j) __stcg(base + ((size_t)z * F4 + j) * TP + tid, get(j));
    }
    if (!tg_ska_count(cnt + (size_t)tile * CPT + g, (unsigned)(g1 - g0), tid, flag)) return false;
    if (holder) tg_ska_sum_par<F4, TP>(base, g0, g1 - g0, 1, tid, set);
    if (NG == 1) return true;
    if (holder) {
#pragma unroll
        for (int j = 0; j < F4; ++j) __stcg(base + ((size_t)g0 * F4 + j) * TP + tid, get(j));
    }
    if (!tg_ska_count(cnt + (size_t)tile * CPT + (CPT - 1), (unsigned)NG, tid, flag)) return false;
    if (holder) tg_ska_sum_par<F4, TP>(base, 0, NG, TG_SKA_G, tid, set);
    return true;
}

// tg_ska_fixup_par on a partial held in v.
template <int F4, int TP, int CPT>
__device__ __forceinline__ bool tg_ska_fixup_par(float4 (&v)[F4], float4* __restrict__ ws, unsigned* __restrict__ cnt,
                                                 int tile, int z, int S, int tid, int* flag)
{
    return tg_ska_fixup_par<F4, TP, CPT>([&](int j) { return v[j]; }, [&](int j, float4 x) { v[j] = x; }, ws, cnt, tile, z,
                                         S, tid, flag);
}
#endif // TILEGEN_SPLITK_TREE_PAR_CUH
