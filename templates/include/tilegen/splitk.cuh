#ifndef TILEGEN_SPLITK_CUH
#define TILEGEN_SPLITK_CUH
// tilegen/splitk.cuh: split-K, several groups of threads computing partial sums of one C tile over
// parts of K, and the reductions that add the partials in a fixed order (so results never depend
// on timing):
//   splitk_publish    parallel split-K over grid z with a deterministic fix-up, the "last block"
//                     pattern of CUDA's threadFenceReduction sample (splitk, RED = 0).
//   reduce_slices     in-block split-K (sliced-K, slicedk): partials meet in shared memory.
// The cluster reduction (RED = 1, cpasync with SPLIT > 1) is tilegen/splitk_cluster.cuh.
#include "tilegen/cp_async.cuh"

namespace tg {

// The workspace of a split-K kernel reduced by splitk_publish: room for SPLITK_WS_FLOATS floats of
// partial tiles and SPLITK_WS_TILES tile counters (16 MiB and 256 KiB of device memory).
enum : int { SPLITK_WS_FLOATS = 4 << 20, SPLITK_WS_TILES = 65536 };

// splitk_publish and the fix-up after it are parallel split-K with a deterministic fix-up, the
// "last block" pattern of CUDA's threadFenceReduction sample: each slice stores its partial tile in
// the workspace (ws_all: room for every tile's gridDim.z partials; float4 j of every thread
// contiguous, so that the stores and the fix-up's loads are coalesced), fences, and counts itself
// in at the tile's counter (cnt). splitk_publish returns true in the slice that arrives last, which
// has reset the counter for the next launch; the kernel then adds the partials in slice order
// 0, 1, ..., S-1 (its own from registers; splitk.cu.tmpl) and stores the tile. Nothing waits on
// another block. last is one int of shared memory that no thread reads any more. The workspace
// and counters are module globals of the kernel: its launches must not overlap (launches on one
// stream never do).
template <class Tile>
__device__ __forceinline__ bool splitk_publish(const float (&acc)[Tile::TM][Tile::TN], float4* ws_all, unsigned* cnt,
                                               int* last, int tid)
{
    constexpr int T = Tile::T, F4 = Tile::F4, TN = Tile::TN;
    const int tile = blockIdx.y * gridDim.x + blockIdx.x;
    const int z = blockIdx.z, S = gridDim.z;
    float4* const ws = ws_all + (size_t)tile * S * (Tile::BM * Tile::BN / 4);
#pragma unroll
    for (int j = 0; j < F4; ++j) {
        const float* a = &acc[j / (TN / 4)][4 * (j % (TN / 4))];
        __stcg(ws + ((size_t)z * F4 + j) * T + tid, make_float4(a[0], a[1], a[2], a[3]));
    }
    __threadfence(); // release: the partial is visible device-wide before the count moves
    __syncthreads(); // also: no thread reads the tiles in shared memory any more
    if (tid == 0) {
        const unsigned seen = atomicAdd(&cnt[tile], 1u);
        *last = seen + 1 == (unsigned)S;
        if (*last) cnt[tile] = 0u; // every slice has counted in: reset for the next launch
    }
    __syncthreads();
    return *last;
}

// reduce_slices: the SK k slices of one block (tg::WarpTile with SK > 1) meet in shared memory.
// Once every copy has landed and every slice is done with the ring, slices 1..SK-1 leave their
// partials in it (part), slice 0 adds them in slice order into acc and returns true; the others
// return false.
template <class Tile>
__device__ __forceinline__ bool reduce_slices(float (&acc)[Tile::TM][Tile::TN], float4* part, int tid, int ks)
{
    constexpr int F4 = Tile::F4, TB = Tile::TB, TN = Tile::TN;
    cp_async_wait<0>();
    __syncthreads(); // every slice is done with the ring
    const int tb = tid % TB;
    if (ks > 0) {
#pragma unroll
        for (int j = 0; j < F4; ++j) part[((ks - 1) * F4 + j) * TB + tb] = Tile::group(acc, j);
    }
    __syncthreads();
    if (ks > 0) return false;
#pragma unroll
    for (int j = 0; j < F4; ++j) {
        float* a = &acc[j / (TN / 4)][4 * (j % (TN / 4))];
#pragma unroll
        for (int s = 1; s < Tile::SK; ++s) {
            const float4 p = part[((s - 1) * F4 + j) * TB + tb];
            a[0] += p.x;
            a[1] += p.y;
            a[2] += p.z;
            a[3] += p.w;
        }
    }
    return true;
}

} // namespace tg
#endif // TILEGEN_SPLITK_CUH
