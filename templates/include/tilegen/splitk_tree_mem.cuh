// tilegen/splitk_tree_mem.cuh: tg_ska_fixup (tilegen/splitk_tree.cuh) for blocks whose partial is
// too large to keep in registers through the fix-up: 8x16 thread tiles, 128 accumulators.
#ifndef TILEGEN_SPLITK_TREE_MEM_CUH
#define TILEGEN_SPLITK_TREE_MEM_CUH
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

// tg_ska_fixup_mem is tg_ska_fixup (same workspace layout, counters, groups and summation order:
// the same sums bit for bit) with the summing block's own partial read back from the workspace,
// where it was just stored (L2), like the others': the partial is dead from its store to the sum,
// so a kernel with 128 accumulators does not spill holding it across the counters and barriers
// (ptxas 11.8: 255 registers and 176 spill stores kept, 235 and none read back).
template <int F4, int TP, int CPT, class Get, class Set>
__device__ __forceinline__ bool tg_ska_fixup_mem(Get get, Set set, float4* __restrict__ ws, unsigned* __restrict__ cnt, int tile,
                                                 int z, int S, int tid, int* flag)
{
    const int g = z / TG_SKA_G, NG = (S + TG_SKA_G - 1) / TG_SKA_G;
    const int g0 = g * TG_SKA_G, g1 = min(S, g0 + TG_SKA_G);
    float4* const base = ws + (size_t)tile * S * (F4 * TP);
    const bool holder = tid < TP;
    // sum(first, count, step) adds the partials of slots first, first + step, ... in that order.
    const auto sum = [&](int first, int count, int step) {
#pragma unroll
        for (int j = 0; j < F4; ++j) {
            float4 s = __ldcg(base + ((size_t)first * F4 + j) * TP + tid);
            for (int i = 1; i < count; ++i) {
                const float4 p = __ldcg(base + ((size_t)(first + i * step) * F4 + j) * TP + tid);
                s.x += p.x;
                s.y += p.y;
                s.z += p.z;
                s.w += p.w;
            }
            set(j, s);
        }
    };
    if (holder) {
#pragma unroll
        for (int j = 0; j < F4; ++j) __stcg(base + ((size_t)z * F4 + j) * TP + tid, get(j));
    }
    if (!tg_ska_count(cnt + (size_t)tile * CPT + g, (unsigned)(g1 - g0), tid, flag)) return false;
    if (holder) sum(g0, g1 - g0, 1);
    if (NG == 1) return true;
    if (holder) {
#pragma unroll
        for (int j = 0; j < F4; ++j) __stcg(base + ((size_t)g0 * F4 + j) * TP + tid, get(j));
    }
    if (!tg_ska_count(cnt + (size_t)tile * CPT + (CPT - 1), (unsigned)NG, tid, flag)) return false;
    if (holder) sum(0, NG, TG_SKA_G);
    return true;
}
#endif // TILEGEN_SPLITK_TREE_MEM_CUH
