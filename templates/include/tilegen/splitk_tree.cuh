// tilegen/splitk_tree.cuh: the deterministic many-slice split-K fix-up of the families with a
// launch-time split rule (deepk, splitk_auto, gemvm, gemvn; variants.yaml grid_z: auto).
#ifndef TILEGEN_SPLITK_TREE_CUH
#define TILEGEN_SPLITK_TREE_CUH
#include <stdint.h>

// Many-slice split-K with a deterministic two-level fix-up (the "last block" pattern of CUDA's
// threadFenceReduction sample, made a tree so that hundreds of slices do not queue behind one
// block). Every slice z of a tile stores its partial (F4 float4s per holding thread, TP holding
// threads: tid < TP) in the workspace and counts itself in at its group's counter; slices form
// groups of TG_SKA_G. The last slice of a group to arrive adds the group's partials in slice order
// and stores the sum in the group's first slot; the last group to finish adds the group sums in
// group order. The sum's order depends only on the number of slices, never on timing, and no block
// waits for another. Whoever finishes last resets the counter for the next launch. Returns true in
// the one block of the tile that holds the final sum in v (then it stores C); false in the others,
// which must return without touching C. Counters per tile: CPT = groups + 1 (the last: the groups').
// The workspace and counters are module globals of each kernel: launches of one kernel must not
// run concurrently (launches on one stream never do).
#define TG_SKA_G 16
// The partial is read and replaced through get(j) and set(j, float4) (j < F4), so that a kernel
// can keep it in its accumulators (no second copy in registers).
template <int F4, int TP, int CPT, class Get, class Set>
__device__ __forceinline__ bool tg_ska_fixup(Get get, Set set, float4* __restrict__ ws, unsigned* __restrict__ cnt, int tile,
                                             int z, int S, int tid, int* flag)
{
    const int g = z / TG_SKA_G, NG = (S + TG_SKA_G - 1) / TG_SKA_G;
    const int g0 = g * TG_SKA_G, g1 = min(S, g0 + TG_SKA_G);
    float4* const base = ws + (size_t)tile * S * (F4 * TP);
    const bool holder = tid < TP;
    if (holder) {
#pragma unroll
        for (int j = 0; j < F4; ++j) __stcg(base + ((size_t)z * F4 + j) * TP + tid, get(j));
    }
    __threadfence(); // release: the partial is visible device-wide before the count moves
    __syncthreads();
    if (tid == 0) {
        unsigned* const c = cnt + (size_t)tile * CPT + g;
        const unsigned seen = atomicAdd(c, 1u);
        *flag = seen + 1 == (unsigned)(g1 - g0);
        if (*flag) *c = 0u;
    }
    __syncthreads();
    if (!*flag) return false;
    __threadfence(); // acquire: the group's partials are read after their counts
    if (holder) {
#pragma unroll
        for (int j = 0; j < F4; ++j) {
            const float4 own = get(j);
            float4 sum = z == g0 ? own : __ldcg(base + ((size_t)g0 * F4 + j) * TP + tid);
            for (int s = g0 + 1; s < g1; ++s) {
                const float4 p = s == z ? own : __ldcg(base + ((size_t)s * F4 + j) * TP + tid);
                sum.x += p.x;
                sum.y += p.y;
                sum.z += p.z;
                sum.w += p.w;
            }
            set(j, sum);
        }
    }
    if (NG == 1) return true;
    if (holder) {
#pragma unroll
        for (int j = 0; j < F4; ++j) __stcg(base + ((size_t)g0 * F4 + j) * TP + tid, get(j));
    }
    __threadfence();
    __syncthreads(); // also: every thread has read *flag before it is written again
    if (tid == 0) {
        unsigned* const c = cnt + (size_t)tile * CPT + (CPT - 1);
        const unsigned seen = atomicAdd(c, 1u);
        *flag = seen + 1 == (unsigned)NG;
        if (*flag) *c = 0u;
    }
    __syncthreads();
    if (!*flag) return false;
    __threadfence();
    if (holder) {
#pragma unroll
        for (int j = 0; j < F4; ++j) {
            const float4 own = get(j);
            float4 sum = g == 0 ? own : __ldcg(base + (size_t)j * TP + tid);
            for (int h = 1; h < NG; ++h) {
                const float4 p = h == g ? own : __ldcg(base + ((size_t)h * TG_SKA_G * F4 + j) * TP + tid);
                sum.x += p.x;
                sum.y += p.y;
                sum.z += p.z;
                sum.w += p.w;
            }
            set(j, sum);
        }
    }
    return true;
}

// tg_ska_fixup on a partial held in v.
template <int F4, int TP, int CPT>
__device__ __forceinline__ bool tg_ska_fixup(float4 (&v)[F4], float4* __restrict__ ws, unsigned* __restrict__ cnt,
                                             int tile, int z, int S, int tid, int* flag)
{
    return tg_ska_fixup<F4, TP, CPT>([&](int j) { return v[j]; }, [&](int j, float4 x) { v[j] = x; }, ws, cnt, tile, z, S, tid, flag);
}

// tg_ska_slice is slice z's K range when K is cut into S slices of whole steps of KSTEP (the
// launch-time rule's division: variant.SplitRule).
template <int KSTEP>
__device__ __forceinline__ void tg_ska_slice(int K, int z, int S, int& kBegin, int& kEnd)
{
    const long long steps = ((long long)K + KSTEP - 1) / KSTEP;
    const long long per = (steps + S - 1) / S;
    kBegin = (int)min((long long)K, z * per * KSTEP);
    kEnd = (int)min((long long)K, kBegin + per * KSTEP);
}
#endif // TILEGEN_SPLITK_TREE_CUH
