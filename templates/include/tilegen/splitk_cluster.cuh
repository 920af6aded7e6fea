#ifndef TILEGEN_SPLITK_CLUSTER_CUH
#define TILEGEN_SPLITK_CLUSTER_CUH
// tilegen/splitk_cluster.cuh: split-K reduced inside a thread block cluster (Hopper, sm_90; splitk
// RED = 1, cpasync SPLIT > 1). The S slices of a tile form one cluster (grid z = S = cluster z), so
// they are co-scheduled on one GPC and can write each other's shared memory: partials meet in
// distributed shared memory, with no global round trip and no workspace.
#include <cooperative_groups.h>
#include "tilegen/epilogue.cuh"

namespace tg {

// cluster_arrive: distributed shared memory may only be written once every block of the cluster
// has started. A kernel arrives at its start (non-blocking; its release orders nothing yet) and
// cluster_reduce_store waits just before its first remote store.
__device__ __forceinline__ void cluster_arrive()
{
    asm volatile("barrier.cluster.arrive.aligned;\n" ::: "memory");
}

// cluster_reduce_store: float4 group j of every thread tile belongs to slice j % S. Each slice
// pushes its partial of group j straight into the owner's reduction buffer red (slot z, a remote
// store for another slice), which lies past the pipeline's buffers so that no slice still in its
// main loop is disturbed. One cluster barrier (release/acquire) later every owner adds its slots in
// slice order 0, 1, ..., S-1 from its own shared memory and stores those groups of C (row0, col0:
// the thread tile's first element); nobody touches another block's shared memory after the
// barrier, so no second barrier is needed.
template <class Tile, int S>
__device__ __forceinline__ void cluster_reduce_store(const float (&acc)[Tile::TM][Tile::TN], float4* red, int tid,
                                                     float* __restrict__ C, int ldc, int M, int N, int row0, int col0,
                                                     float alpha, float beta, bool vc)
{
    namespace cg = cooperative_groups;
    constexpr int T = Tile::T, F4 = Tile::F4;
    cg::cluster_group cluster = cg::this_cluster();
    constexpr int NJ = (F4 + S - 1) / S; // groups owned per slice (at most)
    const int z = (int)cluster.block_rank();
    asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory"); // every block has started
#pragma unroll
    for (int j = 0; j < F4; ++j) {
        float4* const dst = cluster.map_shared_rank(red, j % S);
        dst[((j / S) * S + z) * T + tid] = Tile::group(acc, j);
    }
    cluster.sync();
#pragma unroll
    for (int j = 0; j < F4; ++j) {
        if (j % S != z) continue;
        const float4* const slot = red + (j / S) * S * T + tid;
        float4 sum = slot[0];
#pragma unroll
        for (int s = 1; s < S; ++s) {
            const float4 p = slot[s * T];
            sum.x += p.x;
            sum.y += p.y;
            sum.z += p.z;
            sum.w += p.w;
        }
        store4(sum, C, ldc, M, N, row0 + Tile::grow(j), col0 + Tile::gcol(j), alpha, beta, vc);
    }
    static_assert(NJ * S >= F4, "reduction slots");
}

// cluster_sum_first: the S blocks of a cluster (block rank z: slice z of K) each hold a partial v of
// F4 float4s in each of their first TP threads; every block writes its partial into slot z of the
// cluster's first block (slots: S * F4 * TP float4s of shared memory, a remote store for the
// others) and, one cluster barrier later, the first block adds slots 0, 1, ..., S-1 in that order
// into v and returns true; the others return false and must not touch C. Every thread of every
// block calls it, after cluster_arrive at the kernel's start.
template <int F4, int TP, int S>
__device__ __forceinline__ bool cluster_sum_first(float4 (&v)[F4], float4* slots, int tid)
{
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    const int z = (int)cluster.block_rank();
    asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory"); // every block has started
    if (tid < TP) {
        float4* const dst = cluster.map_shared_rank(slots, 0);
#pragma unroll
        for (int j = 0; j < F4; ++j) dst[(z * F4 + j) * TP + tid] = v[j];
    }
    cluster.sync();
    if (z != 0) return false;
    if (tid < TP) {
#pragma unroll
        for (int j = 0; j < F4; ++j) {
            float4 sum = slots[j * TP + tid];
#pragma unroll
            for (int s = 1; s < S; ++s) {
                const float4 p = slots[(s * F4 + j) * TP + tid];
                sum.x += p.x;
                sum.y += p.y;
                sum.z += p.z;
                sum.w += p.w;
            }
            v[j] = sum;
        }
    }
    return true;
}

} // namespace tg
#endif // TILEGEN_SPLITK_CLUSTER_CUH
